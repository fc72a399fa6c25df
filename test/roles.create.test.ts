/** Roles: creating a custom role (`POST /api/access-control/roles`), with the delegation rule. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { roleHelpers } from './helpers/roles.ts';
import { api, assignRole, auditEntries, buildRole, createUser, DELEGATION_DENIED, type TestUser } from './helpers/factories.ts';

describe('roles (/api/access-control/roles)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  /** A Viewer given fixed:roles:writer and nothing else about dashboards. */
  let rolesWriter: TestUser;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
    rolesWriter = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesWriter.id, 'fixed:roles:writer');
  });
  after(async () => {
    await app.close();
  });
  const { roleRow, permissionRows, createRole } = roleHelpers(
    () => app,
    () => orgAdmin,
  );

  describe('POST /api/access-control/roles', () => {
    it('creates a custom role in the org: 201, version 1, stored with its permissions, audited', async () => {
      const body = buildRole({
        permissions: [
          { action: 'teams:read', scope: 'teams:*' },
          { action: 'dashboards:write', scope: 'folders:uid:f1' },
          { action: 'dashboards:write', scope: 'folders:uid:f1' },
        ],
      });
      const res = await api(app, orgAdmin).post('/api/access-control/roles', body);
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({
        uid: body.uid,
        name: body.name,
        displayName: body.displayName,
        description: 'made by a test',
        groupName: 'Tests',
        global: false,
        hidden: false,
        version: 1,
        permissions: [
          { action: 'dashboards:write', scope: 'folders:uid:f1' },
          { action: 'teams:read', scope: 'teams:*' },
        ],
      });
      const row = await roleRow(body.uid);
      expect(row).to.include({ org_id: 'org_main', name: body.name, version: 1 });
      expect(await permissionRows(row.id)).to.deep.equal(['dashboards:write folders:uid:f1', 'teams:read teams:*']);
      const [audit] = await auditEntries(app, { action: 'role.created', target_id: body.uid });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'role', target_name: body.name, outcome: 'success' });
      expect(audit!.metadata).to.deep.equal({ global: false, permissions: 3 });
    });

    it('defaults description and group to empty and accepts a role without permissions', async () => {
      const res = await api(app, orgAdmin).post('/api/access-control/roles', { uid: 'custom:bare', name: 'custom:bare', displayName: 'Bare', permissions: [] });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ description: '', groupName: '' });
      expect(res.body.permissions).to.deep.equal([]);
    });

    it('refuses the reserved prefixes basic:, fixed: and managed: with 400 saying so', async () => {
      for (const prefix of ['basic:', 'fixed:', 'managed:']) {
        for (const field of ['uid', 'name'] as const) {
          const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ [field]: `${prefix}mine` }));
          expect(res.status, `${field} ${prefix}`).to.equal(400);
          expect(res.body.message).to.include(`reserved prefix ${prefix}`);
        }
      }
      expect(await app.count('roles', { uid: 'basic:mine' })).to.equal(0);
    });

    it('refuses a uid or name that does not start with custom: with 400', async () => {
      for (const overrides of [
        { uid: 'mine' },
        { name: 'reports' },
        { uid: 'custom:' },
        { uid: 'Custom:x' },
        { uid: 'custom:with space' },
        { uid: 'custom:a/b' },
      ]) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole(overrides));
        expect(res.status, JSON.stringify(overrides)).to.equal(400);
        expect(res.body.message).to.match(/custom:/);
      }
    });

    it('validates actions and scopes', async () => {
      const bad = [
        { action: 'dashboards', scope: '*' },
        { action: 'Dashboards:read', scope: '*' },
        { action: ':read', scope: '*' },
        { action: 'dashboards:read:more', scope: '*' },
        { action: 'dashboards:read', scope: 'dashboards' },
        { action: 'dashboards:read', scope: 'dashboards:uid:' },
        { action: 'dashboards:read', scope: '**' },
        { action: 'dashboards:read', scope: 'dashboards:uid:a b' },
      ];
      for (const permission of bad) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ permissions: [permission] }));
        expect(res.status, JSON.stringify(permission)).to.equal(400);
        expect(res.body.message).to.match(/^permissions\[0\]\.(action|scope) /);
      }
      const good = [
        { action: '*', scope: '*' },
        { action: 'dashboards:*', scope: 'dashboards:*' },
        { action: 'alert.rules:create', scope: 'folders:uid:f1' },
        { action: 'roles:read', scope: 'roles:uid:custom:x' },
        { action: 'teams:read', scope: 'teams:id:*' },
      ];
      const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ permissions: good }));
      expect(res.status).to.equal(201);
      expect(res.body.permissions).to.have.length(good.length);
    });

    it('rejects missing fields, wrong types and unknown fields with 400', async () => {
      const { uid: _uid, ...noUid } = buildRole();
      const { permissions: _p, ...noPermissions } = buildRole();
      const bodies = [
        noUid,
        noPermissions,
        { ...buildRole(), displayName: 7 },
        { ...buildRole(), permissions: 'all' },
        { ...buildRole(), permissions: [{ scope: 'teams:*' }] },
        { ...buildRole(), global: 'yes' },
        { ...buildRole(), version: 3 },
      ];
      for (const body of bodies) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await app.request('POST', '/api/access-control/roles', { cookie: orgAdmin.cookie })).status).to.equal(400);
    });

    it('answers 409 on a uid the org already has, or a global role has', async () => {
      const first = await createRole();
      const dup = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ uid: first.uid }));
      expect(dup.status).to.equal(409);
      expect(dup.body.message).to.equal(`a role with uid ${first.uid} already exists`);
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ uid: global.uid }))).status).to.equal(409);
      expect(await app.count('roles', { uid: first.uid })).to.equal(1);
    });

    it('creates a global role only for a server admin', async () => {
      const body = buildRole({ global: true });
      const refused = await api(app, orgAdmin).post('/api/access-control/roles', body);
      expect(refused.status).to.equal(403);
      expect(await app.count('roles', { uid: body.uid })).to.equal(0);
      const res = await api(app, serverAdmin).post('/api/access-control/roles', body);
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ global: true, version: 1 });
      expect((await roleRow(body.uid, null)).org_id).to.equal(null);
      const [audit] = await auditEntries(app, { action: 'role.created', target_id: body.uid });
      expect(audit).to.include({ org_id: null, actor_id: serverAdmin.id });
      expect(audit!.metadata).to.deep.include({ global: true });
    });

    describe('delegation', () => {
      it('an org Admin holds *:* and may create a role with any permission', async () => {
        const res = await api(app, orgAdmin).post(
          '/api/access-control/roles',
          buildRole({
            permissions: [
              { action: 'dashboards:write', scope: 'dashboards:*' },
              { action: 'users:read', scope: 'users:*' },
            ],
          }),
        );
        expect(res.status).to.equal(201);
      });

      it('a holder of fixed:roles:writer may create a role granting what it holds', async () => {
        const res = await api(app, rolesWriter).post(
          '/api/access-control/roles',
          buildRole({
            permissions: [
              { action: 'roles:read', scope: 'roles:*' },
              { action: 'dashboards:read', scope: 'dashboards:uid:d1' },
            ],
          }),
        );
        expect(res.status).to.equal(201);
      });

      it('a holder of fixed:roles:writer cannot create a role with dashboards:write: 403', async () => {
        const body = buildRole({ permissions: [{ action: 'dashboards:write', scope: 'dashboards:*' }] });
        const res = await api(app, rolesWriter).post('/api/access-control/roles', body);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DELEGATION_DENIED);
        expect(await app.count('roles', { uid: body.uid })).to.equal(0);
      });
    });
  });
});
