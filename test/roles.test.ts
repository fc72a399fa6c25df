/** Roles (`/api/access-control/roles`): access, listing and reading roles, and deleting a custom role. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { roleHelpers } from './helpers/roles.ts';
import {
  addMember,
  api,
  assignRole,
  auditEntries,
  buildRole,
  buildTeam,
  createOrg,
  createUser,
  DENIED,
  grantManagedPermissions,
  liveSessions,
  signInAgain,
  type TestUser,
} from './helpers/factories.ts';

const ROLE_FIELDS = ['uid', 'name', 'displayName', 'description', 'groupName', 'global', 'hidden', 'version', 'permissions'];

describe('roles (/api/access-control/roles)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  let viewer: TestUser;
  /** A Viewer given fixed:roles:writer and nothing else about dashboards. */
  let rolesWriter: TestUser;
  let rolesReader: TestUser;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    rolesWriter = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesWriter.id, 'fixed:roles:writer');
    rolesReader = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesReader.id, 'fixed:roles:reader');
  });
  after(async () => {
    await app.close();
  });
  const { roleRow, createRole } = roleHelpers(
    () => app,
    () => orgAdmin,
  );

  describe('access', () => {
    const endpoints: Array<{ method: string; path: string; body?: () => unknown }> = [
      { method: 'GET', path: '/api/access-control/roles' },
      { method: 'GET', path: '/api/access-control/roles/fixed:dashboards:reader' },
      { method: 'POST', path: '/api/access-control/roles', body: () => buildRole() },
      { method: 'PUT', path: '/api/access-control/roles/custom:access-target', body: () => ({ version: 1, displayName: 'Changed' }) },
      { method: 'DELETE', path: '/api/access-control/roles/custom:access-target' },
    ];
    before(async () => {
      await createRole({ uid: 'custom:access-target', name: 'custom:access-target' });
    });

    for (const endpoint of endpoints) {
      const name = `${endpoint.method} ${endpoint.path}`;
      it(`${name} is 401 without credentials`, async () => {
        const res = await app.request(endpoint.method, endpoint.path, { body: endpoint.body?.() });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      it(`${name} is 403 for a Viewer, and changes nothing`, async () => {
        const [roles, audits] = [await app.count('roles'), await app.count('audit_log', { outcome: 'success' })];
        const res = await app.request(endpoint.method, endpoint.path, { cookie: viewer.cookie, body: endpoint.body?.() });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
        expect(await app.count('roles')).to.equal(roles);
        expect(await app.count('audit_log', { outcome: 'success' })).to.equal(audits);
        expect((await roleRow('custom:access-target')).version).to.equal(1);
      });
    }

    it('a holder of fixed:roles:reader reads but does not write', async () => {
      expect((await api(app, rolesReader).get('/api/access-control/roles')).status).to.equal(200);
      expect((await api(app, rolesReader).get('/api/access-control/roles/custom:access-target')).status).to.equal(200);
      expect((await api(app, rolesReader).post('/api/access-control/roles', buildRole())).status).to.equal(403);
      expect((await api(app, rolesReader).delete('/api/access-control/roles/custom:access-target')).status).to.equal(403);
    });
  });

  describe('GET /api/access-control/roles', () => {
    it('lists the basic, fixed and custom roles of the org plus the global ones, each uid once, with permissions', async () => {
      const custom = await createRole();
      const global = await createRole({ global: true }, serverAdmin);
      const res = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'roles', 'page', 'perPage');
      const roles: Array<Record<string, any>> = res.body.roles;
      expect(res.body.totalCount).to.equal(roles.length);
      for (const role of roles) expect(role, role.uid).to.have.all.keys(...ROLE_FIELDS);
      const uids = roles.map((r) => r.uid);
      expect(uids).to.deep.equal([...new Set(uids)]);
      expect(uids).to.deep.equal([...uids].sort());
      expect(uids.filter((u) => u.startsWith('fixed:'))).to.have.length(57);
      expect(uids).to.include.members(['basic:viewer', 'basic:editor', 'basic:admin', 'basic:server_admin', custom.uid, global.uid]);
      // the org's own basic:server_admin stands for the global one of the same uid
      expect(roles.find((r) => r.uid === 'basic:server_admin')).to.include({ global: false });
      expect(roles.find((r) => r.uid === global.uid)).to.include({ global: true, hidden: false, version: 1 });
      expect(roles.find((r) => r.uid === 'fixed:teams:reader')).to.deep.include({
        permissions: [{ action: 'teams:read', scope: 'teams:*' }],
        hidden: false,
        global: false,
      });
    });

    it('shows managed roles only with includeHidden=true', async () => {
      const holder = await createUser(app, { role: 'Viewer' });
      const managedUid = await grantManagedPermissions(app, 'org_main', { kind: 'user', userId: holder.id }, [
        { action: 'dashboards:read', scope: 'dashboards:uid:d1' },
      ]);
      const plain = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000');
      expect(plain.body.roles.map((r: { uid: string }) => r.uid)).not.to.include(managedUid);
      const off = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000&includeHidden=false');
      expect(off.body.totalCount).to.equal(plain.body.totalCount);
      const hidden = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000&includeHidden=true');
      expect(hidden.status).to.equal(200);
      expect(hidden.body.totalCount).to.be.greaterThan(plain.body.totalCount);
      expect(hidden.body.roles.find((r: { uid: string }) => r.uid === managedUid)).to.include({ hidden: true, global: false });
    });

    it('does not show the roles of another org', async () => {
      const other = await createOrg(app);
      await addMember(app, other, orgAdmin.id, 'Admin');
      const elsewhere = await createRole({}, orgAdmin);
      const res = await api(app, orgAdmin, other).get('/api/access-control/roles?perpage=1000');
      expect(res.status).to.equal(200);
      const uids = res.body.roles.map((r: { uid: string }) => r.uid);
      expect(uids).not.to.include(elsewhere.uid);
      expect(uids).to.include('fixed:dashboards:writer');
    });

    it('pages with perpage and page', async () => {
      const all = (await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000')).body.roles.map((r: { uid: string }) => r.uid);
      const res = await api(app, orgAdmin).get('/api/access-control/roles?perpage=5&page=2');
      expect(res.body).to.include({ totalCount: all.length, page: 2, perPage: 5 });
      expect(res.body.roles.map((r: { uid: string }) => r.uid)).to.deep.equal(all.slice(5, 10));
    });

    it('rejects bad query parameters with 400', async () => {
      for (const query of ['includeHidden=maybe', 'perpage=0', 'page=x', 'sort=uid']) {
        const res = await api(app, orgAdmin).get(`/api/access-control/roles?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
    });
  });

  describe('GET /api/access-control/roles/:roleUid', () => {
    it('returns a role with its permissions', async () => {
      const res = await api(app, orgAdmin).get('/api/access-control/roles/fixed:dashboards:writer');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...ROLE_FIELDS);
      expect(res.body).to.include({ uid: 'fixed:dashboards:writer', name: 'fixed:dashboards:writer', global: false, hidden: false });
      expect(res.body.permissions.map((p: { action: string }) => p.action)).to.include.members([
        'dashboards:read',
        'dashboards:write',
        'dashboards:create',
        'dashboards:delete',
      ]);
    });

    it('finds a global role from any org, and 404s on an unknown role or one of another org', async () => {
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).get(`/api/access-control/roles/${global.uid}`)).body).to.include({ uid: global.uid, global: true });
      expect((await api(app, orgAdmin).get('/api/access-control/roles/custom:nope')).status).to.equal(404);
      const other = await createOrg(app);
      const otherAdmin = await createUser(app, { orgId: other, role: 'Admin' });
      const foreign = await createRole({}, otherAdmin);
      const res = await api(app, orgAdmin).get(`/api/access-control/roles/${foreign.uid}`);
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal(`role ${foreign.uid} not found`);
    });
  });

  describe('DELETE /api/access-control/roles/:roleUid', () => {
    it('deletes a custom role with its permissions and assignments, audits; its holders lose it at their next request, signed in still', async () => {
      const role = await createRole({ permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }] });
      const holder = await createUser(app, { role: 'Viewer' });
      expect((await api(app, orgAdmin).post(`/api/access-control/users/${holder.id}/roles`, { roleUid: role.uid })).status).to.equal(200);
      const signedIn = await signInAgain(app, holder);
      expect((await api(app, signedIn).get('/api/user/permissions')).body).to.have.property('serviceaccounts:read');
      const { id } = await roleRow(role.uid);

      const res = await api(app, orgAdmin).delete(`/api/access-control/roles/${role.uid}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'role deleted' });
      expect(await app.count('roles', { uid: role.uid })).to.equal(0);
      expect(await app.count('role_permissions', { role_id: id })).to.equal(0);
      expect(await app.count('user_roles', { role_id: id })).to.equal(0);
      expect(await liveSessions(app, holder.id)).to.equal(2);
      const next = await api(app, signedIn).get('/api/user/permissions');
      expect(next.status).to.equal(200);
      expect(next.body).not.to.have.property('serviceaccounts:read');
      const [audit] = await auditEntries(app, { action: 'role.deleted', target_id: role.uid });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_name: role.name });
      expect(audit!.metadata).to.deep.equal({ global: false, assignments: 1 });
      expect((await api(app, orgAdmin).get(`/api/access-control/roles/${role.uid}`)).status).to.equal(404);
    });

    it('refuses to delete basic, fixed and managed roles with 400', async () => {
      const team = await buildTeam(app);
      const managedUid = await grantManagedPermissions(app, 'org_main', { kind: 'team', teamId: team.id }, [
        { action: 'dashboards:read', scope: 'dashboards:uid:d1' },
      ]);
      for (const uid of ['basic:admin', 'fixed:roles:writer', managedUid]) {
        const res = await api(app, serverAdmin).delete(`/api/access-control/roles/${uid}`);
        expect(res.status, uid).to.equal(400);
        expect(res.body.message).to.match(/cannot be deleted: only custom roles can/);
        expect(await app.count('roles', { uid, org_id: 'org_main' })).to.equal(1);
      }
    });

    it('answers 404 on an unknown role', async () => {
      const res = await api(app, orgAdmin).delete('/api/access-control/roles/custom:nope');
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal('role custom:nope not found');
    });

    it('a global role is deleted by server admins only', async () => {
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).delete(`/api/access-control/roles/${global.uid}`)).status).to.equal(403);
      expect((await api(app, serverAdmin).delete(`/api/access-control/roles/${global.uid}`)).status).to.equal(200);
      expect(await app.count('roles', { uid: global.uid })).to.equal(0);
    });

    it('needs delegation on the permissions the role grants', async () => {
      const role = await createRole({ permissions: [{ action: 'dashboards:write', scope: 'dashboards:*' }] });
      const res = await api(app, rolesWriter).delete(`/api/access-control/roles/${role.uid}`);
      expect(res.status).to.equal(403);
      expect(await app.count('roles', { uid: role.uid })).to.equal(1);
    });
  });
});
