/** Roles: changing a custom role (`PUT /api/access-control/roles/:roleUid`) and what its holders see next. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { roleHelpers } from './helpers/roles.ts';
import {
  addTeamMember,
  api,
  assignRole,
  auditEntries,
  buildTeam,
  createUser,
  grantManagedPermissions,
  liveSessions,
  signInAgain,
  type TestUser,
} from './helpers/factories.ts';

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

  describe('PUT /api/access-control/roles/:roleUid', () => {
    it('updates the fields, bumps the version, audits', async () => {
      const role = await createRole();
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        displayName: 'Renamed',
        description: 'new words',
        permissions: [{ action: 'teams:read', scope: 'teams:*' }],
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ uid: role.uid, name: role.name, displayName: 'Renamed', description: 'new words', groupName: 'Tests', version: 2 });
      expect(res.body.permissions).to.deep.equal([{ action: 'teams:read', scope: 'teams:*' }]);
      const row = await roleRow(role.uid);
      expect(row).to.include({ version: 2, display_name: 'Renamed' });
      expect(await permissionRows(row.id)).to.deep.equal(['teams:read teams:*']);
      const [audit] = await auditEntries(app, { action: 'role.updated', target_id: role.uid });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'role' });
      expect(audit!.metadata).to.deep.equal({ global: false, version: 2, fields: ['displayName', 'description', 'permissions'] });
    });

    it('keeps the permissions when none are given', async () => {
      const role = await createRole();
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, groupName: 'Other' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ groupName: 'Other', version: 2 });
      expect(res.body.permissions).to.deep.equal(role.permissions);
    });

    it('answers 409 when the version is not the stored one, changing nothing', async () => {
      const role = await createRole();
      expect((await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, displayName: 'First' })).status).to.equal(200);
      const stale = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, displayName: 'Second' });
      expect(stale.status).to.equal(409);
      expect(stale.body.message).to.match(/version 1/);
      expect(await roleRow(role.uid)).to.include({ version: 2, display_name: 'First' });
      expect((await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 9, displayName: 'Ahead' })).status).to.equal(409);
      expect(await auditEntries(app, { action: 'role.updated', target_id: role.uid })).to.have.length(1);
    });

    it('of two concurrent updates at the same version exactly one wins', async () => {
      const role = await createRole();
      const [a, b] = await Promise.all(
        ['A', 'B'].map((tag) =>
          api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
            version: 1,
            displayName: tag,
            permissions: [{ action: 'teams:read', scope: `teams:id:${tag}` }],
          }),
        ),
      );
      expect([a!.status, b!.status].sort()).to.deep.equal([200, 409]);
      const winner = a!.status === 200 ? 'A' : 'B';
      const row = await roleRow(role.uid);
      expect(row).to.include({ version: 2, display_name: winner });
      expect(await permissionRows(row.id)).to.deep.equal([`teams:read teams:id:${winner}`]);
    });

    it('refuses to change basic, fixed and managed roles with 400', async () => {
      const holder = await createUser(app, { role: 'Viewer' });
      const managedUid = await grantManagedPermissions(app, 'org_main', { kind: 'user', userId: holder.id }, [
        { action: 'dashboards:read', scope: 'dashboards:uid:d1' },
      ]);
      for (const uid of ['basic:viewer', 'fixed:dashboards:reader', managedUid]) {
        const before = await roleRow(uid);
        const res = await api(app, serverAdmin).put(`/api/access-control/roles/${uid}`, { version: before.version, displayName: 'Hacked' });
        expect(res.status, uid).to.equal(400);
        expect(res.body.message).to.match(/cannot be changed: only custom roles can/);
        expect(await roleRow(uid)).to.deep.equal(before);
      }
    });

    it('rejects bad input: unknown role 404, missing version, a new uid, a reserved name, bad permissions 400', async () => {
      expect((await api(app, orgAdmin).put('/api/access-control/roles/custom:nope', { version: 1 })).status).to.equal(404);
      const role = await createRole();
      const bodies = [
        { displayName: 'No version' },
        { version: 0 },
        { version: '1' },
        { version: 1, uid: 'custom:other' },
        { version: 1, name: 'fixed:mine' },
        { version: 1, name: 'plain' },
        { version: 1, global: true },
        { version: 1, permissions: [{ action: 'nope', scope: '*' }] },
        { version: 1, hidden: true },
      ];
      for (const body of bodies) {
        const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await roleRow(role.uid)).version).to.equal(1);
    });

    it('a global role is changed by server admins only', async () => {
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).put(`/api/access-control/roles/${global.uid}`, { version: 1, displayName: 'Org admin was here' })).status).to.equal(403);
      const res = await api(app, serverAdmin).put(`/api/access-control/roles/${global.uid}`, { version: 1, displayName: 'Server admin was here' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ global: true, version: 2 });
    });

    it('needs delegation on the new permissions', async () => {
      const role = await createRole({ permissions: [{ action: 'roles:read', scope: 'roles:*' }] }, rolesWriter);
      const res = await api(app, rolesWriter).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'dashboards:write', scope: 'dashboards:*' }],
      });
      expect(res.status).to.equal(403);
      expect((await roleRow(role.uid)).version).to.equal(1);
      const allowed = await api(app, rolesWriter).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'roles:write', scope: 'roles:*' }],
      });
      expect(allowed.status).to.equal(200);
    });

    it('a change of permissions reaches the next request of its holders, on the sessions they have: nobody is signed out', async () => {
      const role = await createRole({ permissions: [{ action: 'teams:read', scope: 'teams:*' }] });
      const direct = await createUser(app, { role: 'Viewer' });
      const throughTeam = await createUser(app, { role: 'Viewer' });
      const bystander = await createUser(app, { role: 'Viewer' });
      const team = (await buildTeam(app)).id;
      await addTeamMember(app, team, throughTeam.id);
      expect((await api(app, orgAdmin).post(`/api/access-control/users/${direct.id}/roles`, { roleUid: role.uid })).status).to.equal(200);
      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: role.uid })).status).to.equal(200);
      const holders = [await signInAgain(app, direct), await signInAgain(app, throughTeam)];
      for (const holder of holders) expect((await api(app, holder).get('/api/user/permissions')).body).not.to.have.property('serviceaccounts:read');

      const sessions = [await liveSessions(app, direct.id), await liveSessions(app, throughTeam.id)];
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }],
      });
      expect(res.status).to.equal(200);
      for (const holder of holders) {
        const next = await api(app, holder).get('/api/user/permissions');
        expect(next.status).to.equal(200);
        expect(next.body).to.have.property('serviceaccounts:read').that.deep.equals(['serviceaccounts:*']);
        expect(next.body).not.to.have.property('teams:create');
        expect((await api(app, holder).get('/api/serviceaccounts/search')).status).to.equal(200);
      }
      expect([await liveSessions(app, direct.id), await liveSessions(app, throughTeam.id)]).to.deep.equal(sessions);
      expect(await liveSessions(app, bystander.id)).to.equal(1);
      expect(await auditEntries(app, { action: 'session.revoked', target_id: direct.id })).to.deep.equal([]);
      const [audit] = await auditEntries(app, { action: 'role.updated', target_id: role.uid });
      expect(audit!.metadata).to.deep.include({ fields: ['permissions'] });
    });

    it('a change that leaves the permissions as they are revokes nobody', async () => {
      const role = await createRole();
      const holder = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${holder.id}/roles`, { roleUid: role.uid });
      const sessions = await liveSessions(app, holder.id);
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, displayName: 'Cosmetic', permissions: role.permissions });
      expect(res.status).to.equal(200);
      expect(await liveSessions(app, holder.id)).to.equal(sessions);
    });
  });
});
