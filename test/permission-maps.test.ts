/**
 * `GET /api/user/permissions` and `GET /api/access-control/users/:userId/permissions` tell the
 * truth: the map is what the policy's decision answers, so a scope it lists is one the request
 * on it is allowed, and what a request is allowed on shows in it — connectors the user may query
 * one by one (never `connectors:*` for someone a connector's list leaves out), the legacy ACL
 * entries as the actions of their levels, and only the active org's grants.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, api, buildTeam, createOrg, createUser, importLegacyAclEntries, permissionsOf, type TestUser } from './helpers/factories.ts';

describe('permission maps', () => {
  let app: TestApp;
  let admin: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  const as = (who: TestUser, orgId?: string) => api(app, who, orgId);
  const othersMap = async (userId: string) => {
    const res = await as(admin).get(`/api/access-control/users/${userId}/permissions`);
    expect(res.status).to.equal(200);
    return res.body as Record<string, string[]>;
  };

  describe('connectors', () => {
    it('list the connectors the user may query, not connectors:* when a connector leaves it out', async () => {
      const [viewer, granted] = [await createUser(app, { role: 'Viewer' }), await createUser(app, { role: 'Viewer' })];
      const make = async (name: string) => {
        const res = await as(admin).post('/api/connectors', { name, type: 'changes' });
        expect(res.status).to.equal(201);
        return res.body.uid as string;
      };
      const open = await make(`maps open ${viewer.id}`);
      const restricted = await make(`maps restricted ${viewer.id}`);
      expect((await as(admin).post(`/api/connectors/${restricted}/permissions`, { items: [{ userId: granted.id, permission: 1 }] })).status).to.equal(200);

      for (const map of [await permissionsOf(app, viewer), await othersMap(viewer.id)]) {
        expect(map['connectors:query']).to.include(`connectors:uid:${open}`);
        expect(map['connectors:query']).not.to.include.members([`connectors:uid:${restricted}`, 'connectors:*']);
      }
      expect((await as(viewer).get(`/api/connectors/${open}/changes`)).status).to.equal(200);
      expect((await as(viewer).get(`/api/connectors/${restricted}/changes`)).status).to.equal(403);

      for (const map of [await permissionsOf(app, granted), await othersMap(granted.id)]) {
        expect(map['connectors:query']).to.include.members([`connectors:uid:${open}`, `connectors:uid:${restricted}`]);
      }
      expect((await as(granted).get(`/api/connectors/${restricted}/changes`)).status).to.equal(200);
      // an Admin holds "*" on "*", and queries every connector
      expect((await permissionsOf(app, admin))['*']).to.deep.equal(['*']);
      expect((await as(admin).get(`/api/connectors/${restricted}/changes`)).status).to.equal(200);
    });
  });

  describe('the legacy ACL (LEGACY_ACL_ENABLED, on by default)', () => {
    it('lists its entries as the actions their levels allow, on the dashboard or folder they name, as decisions answer them', async () => {
      const reader = await createUser(app, { role: 'None' });
      const team = await buildTeam(app, { members: [reader.id] });
      const tag = reader.id.slice(-8);
      const [folder, other, dashboard] = [`acl-f-${tag}`, `acl-o-${tag}`, `acl-d-${tag}`];
      for (const uid of [folder, other]) expect((await as(admin).post('/api/folders', { uid, title: uid })).status).to.equal(201);
      const saved = await as(admin).post('/api/dashboards/db', { dashboard: { uid: dashboard, title: dashboard }, folderUid: other });
      expect(saved.status).to.equal(200);
      await importLegacyAclEntries(app, 'org_main', [
        { folderUid: folder, teamId: team.id, permission: 1 },
        { dashboardUid: dashboard, userId: reader.id, permission: 2 },
      ]);

      for (const map of [await permissionsOf(app, reader), await othersMap(reader.id)]) {
        expect(map['folders:read']).to.deep.equal([`folders:uid:${folder}`]);
        expect(map['dashboards:read']).to.have.members([`folders:uid:${folder}`, `dashboards:uid:${dashboard}`]);
        expect(map['dashboards:write']).to.deep.equal([`dashboards:uid:${dashboard}`]);
        // a dashboard's entry is about the dashboard: no folder action comes of it
        expect(map).not.to.have.property('folders:write');
        expect(map).not.to.have.property('dashboards.permissions:read');
      }
      // what the map lists is what the requests are allowed, and no more
      expect((await as(reader).get(`/api/folders/${folder}`)).status).to.equal(200);
      expect((await as(reader).get(`/api/folders/${other}`)).status).to.equal(403);
      expect((await as(reader).get(`/api/dashboards/uid/${dashboard}`)).status).to.equal(200);
      const resaved = await as(reader).post('/api/dashboards/db', {
        dashboard: { uid: dashboard, title: `${dashboard} again` },
        folderUid: other,
        overwrite: true,
      });
      expect(resaved.status, JSON.stringify(resaved.body)).to.equal(200);
      expect((await as(reader).get(`/api/dashboards/uid/${dashboard}/permissions`)).status).to.equal(403);
    });
  });

  describe('the active org', () => {
    it('is the org the map speaks of: a Viewer of org_main and Editor elsewhere may create folders only in the other org', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      const other = await createOrg(app);
      await addMember(app, other, user.id, 'Editor');
      const inOther = [
        await as(user, other).get('/api/user/permissions'),
        await app.request('GET', `/api/user/permissions?orgId=${other}`, { cookie: user.cookie }),
      ];
      const inMain = [
        await as(user, 'org_main').get('/api/user/permissions'),
        await app.request('GET', '/api/user/permissions?orgId=org_main', { cookie: user.cookie }),
        // the default org
        await app.request('GET', '/api/user/permissions', { cookie: user.cookie }),
      ];
      // asked in turn, each after the other org's answer
      inMain.push(await as(user, 'org_main').get('/api/user/permissions'));
      inOther.push(await as(user, other).get('/api/user/permissions'));
      for (const res of inOther) {
        expect(res.status).to.equal(200);
        expect(res.body['folders:create']).to.include('folders:*');
      }
      for (const res of inMain) {
        expect(res.status).to.equal(200);
        expect(res.body).not.to.have.property('folders:create');
      }
      // and the requests agree
      expect((await as(user, other).post('/api/folders', { title: `created by ${user.id}` })).status).to.equal(201);
      expect((await as(user, 'org_main').post('/api/folders', { title: `created by ${user.id}` })).status).to.equal(403);
      expect(await permissionsOf(app, user, 'org_main')).not.to.have.property('folders:create');

      // once the default org is the other one, the map without a header is that org's
      expect((await as(user).post(`/api/user/using/${other}`)).status).to.equal(200);
      expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).body['folders:create']).to.include('folders:*');
      expect((await app.request('GET', '/api/user/permissions?orgId=org_main', { cookie: user.cookie })).body).not.to.have.property('folders:create');
    });
  });
});
