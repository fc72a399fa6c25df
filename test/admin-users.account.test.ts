/** Server administration of users: deleting a user, setting its password, its server-admin flag, disabling and enabling it. */
import { expect } from 'chai';
import { verifyPassword } from '../src/crypto/password.ts';
import { readPolicyHeads } from '../src/db/policy-changes.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  auditEntries,
  createOrg,
  createUser,
  DEFAULT_PASSWORD,
  expectAuditEntry,
  liveSessions,
  sessionCookie,
  passwordLogin,
  type TestUser,
} from './helpers/factories.ts';

const INVALID = 'invalid username or password';
const NEW_PASSWORD = 'a brand new passphrase';

describe('server administration of users', () => {
  let app: TestApp;
  let admin: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin', login: 'root-admin' });
  });
  after(async () => {
    await app.close();
  });

  const userRow = (id: string) => app.db('users').where('id', id).first();
  const audits = (action: string, userId: string) => auditEntries(app, { action, target_id: userId });

  const expectAudited = (action: string, user: { id: string; login: string }, metadata?: Record<string, unknown>) =>
    expectAuditEntry(
      app,
      { action, target_id: user.id },
      {
        actor_type: 'user',
        actor_id: admin.id,
        actor_name: admin.login,
        target_type: 'user',
        target_name: user.login.toLowerCase(),
        outcome: 'success',
        ...(metadata && { metadata }),
      },
      1,
    );

  describe('DELETE /api/admin/users/<userId>', () => {
    it('deletes the user with memberships and sessions, tells the policy of every org, and is audited', async () => {
      const other = await createOrg(app);
      const user = await createUser(app, { role: 'Editor' });
      await addMember(app, other, user.id, 'Viewer');
      expect((await api(app, user).put('/api/user/preferences', { timezone: 'utc', theme: 'light' })).status).to.equal(200);
      const revisions = () => readPolicyHeads(app.db, ['org_main', other]);
      const before = await revisions();

      const res = await api(app, admin).delete(`/api/admin/users/${user.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user deleted' });
      expect(await app.count('users', { id: user.id })).to.equal(0);
      expect(await app.count('org_members', { user_id: user.id })).to.equal(0);
      expect(await app.count('sessions', { user_id: user.id })).to.equal(0);
      expect(await app.count('preferences', { owner_kind: 'user', owner_id: user.id })).to.equal(0);
      const after = await revisions();
      expect(after.get('org_main')).to.be.greaterThan(before.get('org_main')!);
      expect(after.get(other)).to.be.greaterThan(before.get(other)!);
      await expectAudited('user.deleted', user, { orgIds: ['org_main', other].sort((a, b) => (a === 'org_main' ? -1 : b === 'org_main' ? 1 : 0)) });
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      expect((await passwordLogin(app, user.login, DEFAULT_PASSWORD)).status).to.equal(401);
      expect((await api(app, admin).delete(`/api/admin/users/${user.id}`)).status, 'a second time').to.equal(404);
    });

    it('deletes another server admin', async () => {
      const other = await createUser(app, { svcAdmin: true });
      expect((await api(app, admin).delete(`/api/admin/users/${other.id}`)).status).to.equal(200);
      expect(await app.count('users', { id: other.id })).to.equal(0);
    });

    it('refuses to delete yourself with 400', async () => {
      const res = await api(app, admin).delete(`/api/admin/users/${admin.id}`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/yourself/);
      expect(await app.count('users', { id: admin.id })).to.equal(1);
      expect(await audits('user.deleted', admin.id)).to.have.length(0);
    });

    it('never deletes the last server admin, even when two admins delete each other at once', async () => {
      const lonely = await startTestApp();
      try {
        const a = await createUser(lonely, { svcAdmin: true, role: 'Admin' });
        const b = await createUser(lonely, { svcAdmin: true, role: 'Admin' });
        // Load the server-level policy first: this test is about the admins, not the engine's cold start.
        expect((await lonely.request('GET', '/api/admin/users', { cookie: a.cookie })).status).to.equal(200);
        const [byA, byB] = await Promise.all([
          lonely.request('DELETE', `/api/admin/users/${b.id}`, { cookie: a.cookie }),
          lonely.request('DELETE', `/api/admin/users/${a.id}`, { cookie: b.cookie }),
        ]);
        const statuses = [byA.status, byB.status];
        expect(
          statuses.filter((s) => s === 200),
          JSON.stringify([byA.body, byB.body]),
        ).to.have.length(1);
        expect(
          statuses.filter((s) => s === 400 || s === 401),
          JSON.stringify([byA.body, byB.body]),
        ).to.have.length(1);
        const loser = statuses.find((s) => s !== 200) === byA.status ? byA : byB;
        if (loser.status === 400) expect(loser.body.message).to.equal('cannot delete the last server admin');
        expect(await lonely.count('users', { is_svc_admin: true })).to.equal(1);
      } finally {
        await lonely.close();
      }
    });
  });

  describe('POST /api/admin/users/<userId>/password', () => {
    it('sets the password, revokes every session of the user, and is audited', async () => {
      const user = await createUser(app);
      const second = await sessionCookie(app, user.id);
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/password`, { password: NEW_PASSWORD });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user password updated', revokedSessions: 2 });
      expect(await verifyPassword(NEW_PASSWORD, (await userRow(user.id)).password_hash)).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      for (const cookie of [user.cookie, second]) expect((await app.request('GET', '/api/user', { cookie })).status).to.equal(401);
      expect((await passwordLogin(app, user.login, DEFAULT_PASSWORD)).body).to.deep.equal({ message: INVALID });
      expect((await passwordLogin(app, user.login, NEW_PASSWORD)).status).to.equal(200);
      await expectAudited('user.password_changed', user, { by: 'admin', lockoutCleared: false });
      await expectAudited('session.revoked', user, { count: 2, reason: 'password changed by admin' });
      expect(JSON.stringify(await app.db('audit_log').select('*'))).not.to.include(NEW_PASSWORD);
    });

    it('lifts the login lockout of the account, so the new password signs in at once', async () => {
      const user = await createUser(app, { login: 'locked-out-user' });
      for (let i = 0; i < 5; i++) expect((await passwordLogin(app, user.login, 'wrong password!')).status).to.equal(401);
      expect((await passwordLogin(app, user.login, DEFAULT_PASSWORD)).status).to.equal(429);

      expect((await api(app, admin).post(`/api/admin/users/${user.id}/password`, { password: NEW_PASSWORD })).status).to.equal(200);
      expect(await app.count('login_attempts', { user_id: user.id })).to.equal(0);
      expect((await passwordLogin(app, user.login, NEW_PASSWORD)).status).to.equal(200);
      await expectAudited('user.password_changed', user, { by: 'admin', lockoutCleared: true });
    });

    it('rejects a short, missing or non-string password with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{ password: 'x'.repeat(11) }, {}, { password: 123456789012345 }, { password: NEW_PASSWORD, extra: 1 }]) {
        const res = await api(app, admin).post(`/api/admin/users/${user.id}/password`, bad);
        expect(res.status, JSON.stringify(bad)).to.equal(400);
      }
      expect(await liveSessions(app, user.id)).to.equal(1);
      expect(await audits('user.password_changed', user.id)).to.have.length(0);
    });
  });

  describe('POST /api/admin/users/<userId>/permissions', () => {
    it('grants the server-admin flag, revokes the sessions and is audited; the user then administers', async () => {
      const user = await createUser(app);
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/permissions`, { isSvcAdmin: true });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user permissions updated' });
      expect(!!(await userRow(user.id)).is_svc_admin).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      await expectAudited('user.role_changed', user, { isSvcAdmin: true });
      await expectAudited('session.revoked', user, { count: 1, reason: 'server admin flag changed' });
      const fresh = await sessionCookie(app, user.id);
      expect((await app.request('GET', '/api/admin/users', { cookie: fresh })).status).to.equal(200);
    });

    it('removes the flag of another admin', async () => {
      const other = await createUser(app, { svcAdmin: true });
      expect((await api(app, admin).post(`/api/admin/users/${other.id}/permissions`, { isSvcAdmin: false })).status).to.equal(200);
      expect(!!(await userRow(other.id)).is_svc_admin).to.equal(false);
      await expectAudited('user.role_changed', other, { isSvcAdmin: false });
      expect((await app.request('GET', '/api/admin/users', { cookie: await sessionCookie(app, other.id) })).status).to.equal(403);
    });

    it('changes nothing, revokes nothing and records nothing when the flag is already so', async () => {
      const user = await createUser(app);
      expect((await api(app, admin).post(`/api/admin/users/${user.id}/permissions`, { isSvcAdmin: false })).status).to.equal(200);
      expect(await liveSessions(app, user.id)).to.equal(1);
      expect(await audits('user.role_changed', user.id)).to.have.length(0);
    });

    it('refuses to remove your own flag with 400', async () => {
      const res = await api(app, admin).post(`/api/admin/users/${admin.id}/permissions`, { isSvcAdmin: false });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/your own/);
      expect(!!(await userRow(admin.id)).is_svc_admin).to.equal(true);
      expect((await api(app, admin).post(`/api/admin/users/${admin.id}/permissions`, { isSvcAdmin: true })).status, 'keeping it is fine').to.equal(200);
      expect(await audits('user.role_changed', admin.id)).to.have.length(0);
    });

    it('rejects a missing or non-boolean flag with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{}, { isSvcAdmin: 'true' }, { isSvcAdmin: 1 }, { isSvcAdmin: true, role: 'Admin' }]) {
        expect((await api(app, admin).post(`/api/admin/users/${user.id}/permissions`, bad)).status, JSON.stringify(bad)).to.equal(400);
      }
      expect(!!(await userRow(user.id)).is_svc_admin).to.equal(false);
    });
  });

  describe('POST /api/admin/users/<userId>/disable and /enable', () => {
    it('disables: sessions revoked, login gives the wrong-password 401, audited; idempotent', async () => {
      const user = await createUser(app);
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/disable`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user disabled' });
      expect(!!(await userRow(user.id)).is_disabled).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      const refused = await passwordLogin(app, user.login, DEFAULT_PASSWORD);
      expect(refused.status).to.equal(401);
      expect(refused.body).to.deep.equal({ message: INVALID });
      await expectAudited('user.disabled', user);
      await expectAudited('session.revoked', user, { count: 1, reason: 'user disabled' });

      const again = await api(app, admin).post(`/api/admin/users/${user.id}/disable`);
      expect(again.status).to.equal(200);
      expect(await audits('user.disabled', user.id)).to.have.length(1);
      const listed = (await api(app, admin).get(`/api/admin/users?query=${user.login}`)).body.users[0];
      expect(listed.isDisabled).to.equal(true);
    });

    it('enables: login works again, old sessions stay revoked, audited; idempotent', async () => {
      const user = await createUser(app);
      await api(app, admin).post(`/api/admin/users/${user.id}/disable`);
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/enable`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user enabled' });
      expect(!!(await userRow(user.id)).is_disabled).to.equal(false);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      expect((await passwordLogin(app, user.login, DEFAULT_PASSWORD)).status).to.equal(200);
      await expectAudited('user.enabled', user);
      expect((await api(app, admin).post(`/api/admin/users/${user.id}/enable`)).status).to.equal(200);
      expect(await audits('user.enabled', user.id)).to.have.length(1);
    });

    it('revokes sessions left over on a user disabled before', async () => {
      const user = await createUser(app, { disabled: true });
      expect(await liveSessions(app, user.id)).to.equal(1);
      expect((await api(app, admin).post(`/api/admin/users/${user.id}/disable`)).status).to.equal(200);
      expect(await liveSessions(app, user.id)).to.equal(0);
      expect(await audits('user.disabled', user.id)).to.have.length(0);
      await expectAudited('session.revoked', user, { count: 1, reason: 'user disabled' });
    });

    it('disables another server admin, who then cannot administer', async () => {
      const other = await createUser(app, { svcAdmin: true });
      expect((await api(app, admin).post(`/api/admin/users/${other.id}/disable`)).status).to.equal(200);
      expect((await app.request('GET', '/api/admin/users', { cookie: await sessionCookie(app, other.id) })).status).to.equal(401);
    });

    it('refuses to disable yourself with 400', async () => {
      const res = await api(app, admin).post(`/api/admin/users/${admin.id}/disable`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/yourself/);
      expect(!!(await userRow(admin.id)).is_disabled).to.equal(false);
      expect((await api(app, admin).get('/api/admin/users?perpage=1')).status).to.equal(200);
    });
  });
});
