/**
 * `GET /api/user/permissions` and `GET /api/access-control/users/:userId/permissions` tell the
 * truth: the map is what the policy's decision answers, so a scope it lists is one the request
 * on it is allowed, and what a request is allowed on shows in it — connectors the user may query
 * one by one (never `connectors:*` for someone a connector's list leaves out), the legacy ACL
 * entries as the actions of their levels.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, buildTeam, createUser, importLegacyAclEntries, permissionsOf, type TestUser } from './helpers/factories.ts';

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
});
