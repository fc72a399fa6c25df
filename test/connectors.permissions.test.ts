/**
 * `GET/POST /api/connectors/:uid/permissions`: flat grants (View: read + query, Edit: + write,
 * Admin: + the permissions). Who may query a connector is its list and nothing else: a new
 * connector lists the role entries Viewer and Editor View, which stay while other grants are added
 * and go when a replacement leaves them out (an Admin's "*" always queries). The backend is a
 * loopback stub answering like Prometheus: what is tested here is who gets through.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { down as downToBasicQuery, up as upToRoleEntries } from '../migrations/20261127110000-connector-role-entries.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  assignRole,
  auditEntries,
  buildOrg,
  buildRole,
  buildTeam,
  addTeamMember,
  buildServiceAccount,
  buildToken,
  createUser,
  DELEGATION_DENIED,
  DENIED,
  type TestUser,
} from './helpers/factories.ts';

describe('connectors: permissions', () => {
  let app: TestApp;
  let backend: http.Server;
  let backendUrl: string;
  let admin: TestUser;
  let editor: TestUser;
  let viewerA: TestUser;
  let viewerB: TestUser;

  before(async () => {
    backend = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      const data = req.url!.startsWith('/api/v1/query') ? { resultType: 'vector', result: [] } : ['__name__'];
      res.end(JSON.stringify({ status: 'success', data }));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewerA = await createUser(app, { role: 'Viewer' });
    viewerB = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app?.close();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  });

  const as = (who: TestUser, orgId?: string) => api(app, who, orgId);
  let names = 0;
  async function connector(type = 'tsmetrics', orgId?: string): Promise<string> {
    const body = type === 'changes' ? { name: `perm-changes-${++names}`, type } : { name: `perm-prom-${++names}`, type, url: backendUrl };
    const res = await as(admin, orgId).post('/api/connectors', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  const permissions = (uid: string) => `/api/connectors/${uid}/permissions`;
  async function grant(uid: string, items: unknown[], who: TestUser = admin): Promise<void> {
    const res = await as(who).post(permissions(uid), { items });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ message: 'Connector permissions updated' });
  }
  /** What a new connector lists: every Editor and every Viewer may query it. */
  const roleEntry = (role: 'Editor' | 'Viewer') => ({
    userId: null,
    userLogin: null,
    teamId: null,
    team: null,
    role,
    permission: 1,
    permissionName: 'View',
    inherited: false,
  });
  const DEFAULT_ENTRIES = [roleEntry('Editor'), roleEntry('Viewer')];
  const DEFAULT_ITEMS = [
    { role: 'Viewer', permission: 1 },
    { role: 'Editor', permission: 1 },
  ];
  const query = (who: TestUser, uid: string) => as(who).post(`/api/connectors/${uid}/query`, { query: 'up' });
  const proxy = (who: TestUser, uid: string) => as(who).get(`/api/connectors/proxy/uid/${uid}/api/v1/labels`);

  describe('access', () => {
    it('401 without credentials; 403 for Editors and Viewers; an Admin reads and replaces them', async () => {
      const uid = await connector();
      expect((await app.request('GET', permissions(uid))).status).to.equal(401);
      expect((await app.request('POST', permissions(uid), { body: { items: [] } })).status).to.equal(401);
      for (const who of [editor, viewerA]) {
        const read = await as(who).get(permissions(uid));
        expect(read.status).to.equal(403);
        expect(read.body.message).to.match(DENIED);
        expect((await as(who).post(permissions(uid), { items: [] })).status).to.equal(403);
      }
      expect((await as(admin).get(permissions(uid))).body).to.deep.equal(DEFAULT_ENTRIES);
      await grant(uid, [{ userId: viewerA.id, permission: 1 }]);
      expect((await as(admin).get(permissions(uid))).body).to.deep.equal([
        {
          userId: viewerA.id,
          userLogin: viewerA.login,
          teamId: null,
          team: null,
          role: null,
          permission: 1,
          permissionName: 'View',
          inherited: false,
        },
      ]);
      await grant(uid, []);
      expect((await as(admin).get(permissions(uid))).body).to.deep.equal([]);
    });

    it('404 for an unknown connector and for one of another org', async () => {
      expect((await as(admin).get(permissions('nope'))).status).to.equal(404);
      expect((await as(admin).post(permissions('nope'), { items: [] })).status).to.equal(404);
      const other = await buildOrg(app);
      await addMember(app, other, admin.id, 'Admin');
      const foreign = await connector('tsmetrics', other);
      expect((await as(admin).get(permissions(foreign))).status).to.equal(404);
      expect((await as(admin).post(permissions(foreign), { items: [{ userId: viewerA.id, permission: 1 }] })).status).to.equal(404);
      expect((await as(admin, other).get(permissions(foreign))).status).to.equal(200);
    });

    it('400 for bad items: no principal or two, a level not 1, 2 or 4, a stranger', async () => {
      const uid = await connector();
      const stranger = await createUser(app, { role: 'Viewer', orgId: await buildOrg(app) });
      const bad: unknown[] = [
        {},
        { items: [{ permission: 1 }] },
        { items: [{ userId: viewerA.id, role: 'Viewer', permission: 1 }] },
        { items: [{ userId: viewerA.id, permission: 3 }] },
        { items: [{ userId: stranger.id, permission: 1 }] },
        { items: [{ teamId: 'no-such-team', permission: 1 }] },
      ];
      for (const body of bad) expect((await as(admin).post(permissions(uid), body)).status, JSON.stringify(body)).to.equal(400);
      expect((await as(admin).get(permissions(uid))).body).to.deep.equal(DEFAULT_ENTRIES);
    });
  });

  describe('who may query: the list', () => {
    it('a new connector lists Viewer and Editor View, and every Viewer, Editor and Admin queries it', async () => {
      const uid = await connector();
      expect((await as(admin).get(permissions(uid))).body).to.deep.equal(DEFAULT_ENTRIES);
      for (const who of [viewerA, viewerB, editor, admin]) {
        expect((await query(who, uid)).status).to.equal(200);
        expect((await proxy(who, uid)).status).to.equal(200);
      }
    });

    it("the connectors guide's example: adding a service account's Edit to the list keeps the role entries, and everyone still reads its changes", async () => {
      const uid = await connector('changes');
      const ci = await buildServiceAccount(app, { role: 'Viewer', name: `ci ${uid}` });
      const { key } = await buildToken(app, ci);
      await grant(uid, [...DEFAULT_ITEMS, { userId: ci.id, permission: 2 }]);
      const listed = await as(admin).get(permissions(uid));
      expect(
        listed.body.map((item: { role: string | null; userId: string | null; permissionName: string }) => [item.role ?? item.userId, item.permissionName]),
      ).to.deep.equal([
        ['Editor', 'View'],
        ['Viewer', 'View'],
        [ci.id, 'Edit'],
      ]);
      const recorded = await app.request('POST', `/api/connectors/${uid}/changes`, {
        token: key,
        body: { kind: 'deploy', title: 'checkout v1.4.2', service: 'checkout' },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).to.equal(201);
      for (const who of [viewerA, viewerB, editor, admin]) {
        const read = await as(who).get(`/api/connectors/${uid}/changes?service=checkout`);
        expect(read.status, who.login).to.equal(200);
        expect(read.body.changes.map((entry: { title: string }) => entry.title)).to.deep.equal(['checkout v1.4.2']);
      }
      // a Viewer may query it, not record on it
      expect((await as(viewerA).post(`/api/connectors/${uid}/changes`, { kind: 'deploy', title: 'no' })).status).to.equal(403);
    });

    it('a replacement that leaves the role entries out takes them away, and the list shows exactly what is left', async () => {
      const uid = await connector();
      await grant(uid, [{ userId: viewerA.id, permission: 1 }]);
      // The very next request sees the grant.
      for (const who of [viewerB, editor]) {
        const refused = await query(who, uid);
        expect(refused.status).to.equal(403);
        expect(refused.body.message).to.equal('permission denied: you need connectors:query to do this');
        expect((await proxy(who, uid)).status).to.equal(403);
      }
      for (const who of [viewerA, admin]) {
        expect((await query(who, uid)).status).to.equal(200);
        expect((await proxy(who, uid)).status).to.equal(200);
      }
      expect((await as(admin).get(permissions(uid))).body.map((item: { userId: string | null }) => item.userId)).to.deep.equal([viewerA.id]);
      // Other connectors keep their entries.
      const open = await connector();
      expect((await query(viewerB, open)).status).to.equal(200);
      // An empty list leaves the connector to the holders of "*" (Admins).
      await grant(uid, []);
      for (const who of [viewerA, viewerB, editor]) expect((await query(who, uid)).status).to.equal(403);
      expect((await query(admin, uid)).status).to.equal(200);
      // Putting the role entries back lets everyone query again.
      await grant(uid, DEFAULT_ITEMS);
      expect((await query(viewerB, uid)).status).to.equal(200);
      expect((await proxy(editor, uid)).status).to.equal(200);
    });

    it('without the Viewer entry, the Editor entry keeps Editors (and Admins) in and Viewers out', async () => {
      const uid = await connector();
      await grant(uid, [{ role: 'Editor', permission: 1 }]);
      expect((await query(editor, uid)).status).to.equal(200);
      expect((await query(viewerA, uid)).status).to.equal(403);
    });

    it('a grant to a team or an org role lets its members query', async () => {
      const uid = await connector();
      const team = await buildTeam(app);
      await addTeamMember(app, team, viewerB.id);
      await grant(uid, [{ teamId: team.id, permission: 1 }]);
      expect((await query(viewerB, uid)).status).to.equal(200);
      expect((await query(viewerA, uid)).status).to.equal(403);
      await grant(uid, [{ role: 'Viewer', permission: 1 }]);
      expect((await query(viewerA, uid)).status).to.equal(200);
      expect((await query(viewerB, uid)).status).to.equal(200);
    });
  });

  describe('levels', () => {
    it('Edit lets a user record changes and run the connectivity test; View does not', async () => {
      const prom = await connector();
      const changes = await connector('changes');
      await grant(prom, [{ userId: viewerA.id, permission: 1 }]);
      await grant(changes, [{ userId: viewerA.id, permission: 1 }]);
      expect((await as(viewerA).post(`/api/connectors/${prom}/test`)).status).to.equal(403);
      expect((await as(viewerA).post(`/api/connectors/${changes}/changes`, { kind: 'deploy', title: 'v1' })).status).to.equal(403);
      await grant(prom, [{ userId: viewerA.id, permission: 2 }]);
      await grant(changes, [{ userId: viewerA.id, permission: 2 }]);
      const tested = await as(viewerA).post(`/api/connectors/${prom}/test`);
      expect(tested.status, JSON.stringify(tested.body)).to.equal(200);
      expect(tested.body.status).to.equal('OK');
      expect((await as(viewerA).post(`/api/connectors/${changes}/changes`, { kind: 'deploy', title: 'v1' })).status).to.equal(201);
      expect((await as(viewerA).get(`/api/connectors/${changes}/changes`)).status).to.equal(200);
      expect((await as(viewerA).get(permissions(prom))).status).to.equal(403);
    });

    it('Admin lets a user manage the permissions of that connector only', async () => {
      const uid = await connector();
      const other = await connector();
      await grant(uid, [{ userId: viewerA.id, permission: 4 }]);
      expect((await as(viewerA).get(permissions(uid))).status).to.equal(200);
      await grant(
        uid,
        [
          { userId: viewerA.id, permission: 4 },
          { userId: viewerB.id, permission: 2 },
        ],
        viewerA,
      );
      expect((await as(viewerA).get(permissions(other))).status).to.equal(403);
      expect((await as(viewerA).post(permissions(other), { items: [] })).status).to.equal(403);
    });

    it('delegation: a manager of all connector permissions cannot grant write it does not hold', async () => {
      const uid = await connector();
      const manager = await createUser(app, { role: 'Viewer' });
      const role = buildRole({
        permissions: [
          { action: 'connectors.permissions:read', scope: 'connectors:*' },
          { action: 'connectors.permissions:write', scope: 'connectors:*' },
        ],
      });
      await assignRole(app, 'org_main', manager.id, role.uid, role.permissions);
      await grant(uid, [{ userId: viewerB.id, permission: 1 }], manager);
      const refused = await as(manager).post(permissions(uid), { items: [{ userId: viewerB.id, permission: 2 }] });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(DELEGATION_DENIED);
      expect((await as(admin).get(permissions(uid))).body.map((item: { permission: number }) => item.permission)).to.deep.equal([1]);
    });
  });

  describe('connectors made before the role entries (migration 20261127110000)', () => {
    it('get the role entries when they carried no grant; those with grants keep exactly their grantees; no basic role queries every connector', async () => {
      const other = await buildOrg(app);
      await addMember(app, other, admin.id, 'Admin');
      const otherViewer = await createUser(app, { role: 'Viewer', orgId: other });
      const open = await connector();
      const narrowed = await connector();
      const openElsewhere = await connector('tsmetrics', other);
      await grant(narrowed, [{ userId: viewerA.id, permission: 1 }]);
      // as such connectors were stored: no role entries, and the basic roles query every connector
      const scopes = [open, narrowed, openElsewhere].map((uid) => `connectors:uid:${uid}`);
      await app
        .db('role_permissions')
        .whereIn('role_id', app.db('roles').where('uid', 'like', 'managed:builtins:%').select('id'))
        .whereIn('scope', scopes)
        .delete();
      // the migration bumps the revision counter the change log has since replaced: it gets one to bump
      await app.db.schema.createTable('policy_revisions', (t) => {
        t.string('org_id', 40).primary();
        t.bigInteger('revision').notNullable().defaultTo(0);
      });
      const everyDocumentRebuilt = () => app.services.transact(async (tx) => tx.policyChanged());
      await downToBasicQuery(app.db);
      await everyDocumentRebuilt();
      const basicQueries = () =>
        app
          .db('role_permissions as p')
          .join('roles as r', 'r.id', 'p.role_id')
          .where({ 'r.uid': 'basic:viewer', 'p.action': 'connectors:query', 'p.scope': 'connectors:*' })
          .count<Array<{ total: number | string }>>({ total: '*' });
      expect(Number((await basicQueries())[0]!.total)).to.be.greaterThan(1);

      await upToRoleEntries(app.db);
      await app.db.schema.dropTable('policy_revisions');
      await everyDocumentRebuilt();

      expect(Number((await basicQueries())[0]!.total)).to.equal(0);
      expect((await as(admin).get(permissions(open))).body).to.deep.equal(DEFAULT_ENTRIES);
      expect((await as(admin, other).get(permissions(openElsewhere))).body).to.deep.equal(DEFAULT_ENTRIES);
      expect((await as(admin).get(permissions(narrowed))).body.map((item: { userId: string | null }) => item.userId)).to.deep.equal([viewerA.id]);
      for (const who of [viewerA, viewerB, editor, admin]) expect((await query(who, open)).status, who.login).to.equal(200);
      expect((await as(otherViewer, other).post(`/api/connectors/${openElsewhere}/query`, { query: 'up' })).status).to.equal(200);
      for (const who of [viewerB, editor]) expect((await query(who, narrowed)).status, who.login).to.equal(403);
      for (const who of [viewerA, admin]) expect((await query(who, narrowed)).status, who.login).to.equal(200);
    });
  });

  it('audits each principal whose level changed: permission.granted, permission.revoked', async () => {
    const uid = await connector();
    await grant(uid, [{ userId: viewerA.id, permission: 1 }]);
    await grant(uid, [{ userId: viewerA.id, permission: 2 }]);
    await grant(uid, []);
    const entries = (await auditEntries(app, { target_id: uid })).filter((entry) => entry.action.startsWith('permission.'));
    expect(entries.map((entry) => [entry.action, entry.metadata?.role ?? null, entry.metadata?.permission, entry.metadata?.resource])).to.deep.equal([
      // the role entries the connector was made with, left out of the first replacement
      ['permission.revoked', 'Editor', 1, 'connector'],
      ['permission.revoked', 'Viewer', 1, 'connector'],
      ['permission.granted', null, 1, 'connector'],
      ['permission.revoked', null, 1, 'connector'],
      ['permission.granted', null, 2, 'connector'],
      ['permission.revoked', null, 2, 'connector'],
    ]);
    expect(entries[0]).to.deep.include({ target_type: 'connector', actor_id: admin.id });
  });
});
