/** Server administration of a user's sessions (`/api/admin/users/<userId>/logout`, `/auth-tokens`, `/revoke-auth-token`). */
import { expect } from 'chai';
import {
  api,
  auditEntries,
  createUser,
  expectAuditEntry,
  DEFAULT_PASSWORD,
  liveSessions,
  sessionCookie,
  passwordLogin,
  type TestUser,
} from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const SESSION_FIELDS = ['id', 'isCurrent', 'ip', 'userAgent', 'createdAt', 'seenAt', 'expiresAt'];
const DAY = 86_400_000;

describe('server administration of user sessions', () => {
  let app: TestApp;
  let admin: TestUser;
  let orgAdmin: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin', login: 'root-admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

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

  describe('POST /api/admin/users/<userId>/logout', () => {
    it('revokes every session of the user and is audited with the count', async () => {
      const user = await createUser(app);
      const second = await sessionCookie(app, user.id);
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/logout`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user logged out', revokedSessions: 2 });
      expect(await liveSessions(app, user.id)).to.equal(0);
      for (const cookie of [user.cookie, second]) expect((await app.request('GET', '/api/user', { cookie })).status).to.equal(401);
      await expectAudited('session.revoked', user, { count: 2, reason: 'admin logout' });
      expect((await passwordLogin(app, user.login, DEFAULT_PASSWORD)).status, 'the user may sign in again').to.equal(200);
    });

    it('records a logout of a user without sessions too', async () => {
      const user = await createUser(app);
      await api(app, admin).post(`/api/admin/users/${user.id}/logout`);
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/logout`);
      expect(res.body.revokedSessions).to.equal(0);
      expect((await auditEntries(app, { action: 'session.revoked', target_id: user.id })).map((e) => e.metadata)).to.have.deep.members([
        { count: 1, reason: 'admin logout' },
        { count: 0, reason: 'admin logout' },
      ]);
    });

    it('refuses to log yourself out with 400', async () => {
      const res = await api(app, admin).post(`/api/admin/users/${admin.id}/logout`);
      expect(res.status).to.equal(400);
      expect(await liveSessions(app, admin.id)).to.be.greaterThan(0);
    });
  });

  describe('GET /api/admin/users/<userId>/auth-tokens', () => {
    it('lists the live sessions, with expiresAt the earlier of the lifetime cap and the idle timeout', async () => {
      const user = await createUser(app);
      await sessionCookie(app, user.id);
      const createdAt = app.clock.now();
      app.clock.advance(DAY);
      const usedAt = app.clock.now();
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(200);

      const res = await api(app, admin).get(`/api/admin/users/${user.id}/auth-tokens`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalCount: 2, page: 1, perPage: 100 });
      expect(res.body.sessions).to.have.length(2);
      const iso = (ms: number) => new Date(ms).toISOString();
      for (const session of res.body.sessions) {
        expect(session).to.have.all.keys(...SESSION_FIELDS);
        expect(session).to.include({ createdAt: iso(createdAt), isCurrent: false, ip: null, userAgent: null });
        expect(session.expiresAt, 'idle timeout first').to.equal(iso(Date.parse(session.seenAt) + 7 * DAY));
      }
      expect(res.body.sessions.map((s: { seenAt: string }) => s.seenAt).sort()).to.deep.equal([iso(createdAt), iso(usedAt)]);

      // Backdate the sessions' creation (a stand-in for 29 days of use, request by request): the lifetime cap now comes first.
      await app
        .db('sessions')
        .where('user_id', user.id)
        .update({ created_at: usedAt - 29 * DAY });
      const capped = await api(app, admin).get(`/api/admin/users/${user.id}/auth-tokens`);
      expect(capped.body.sessions).to.have.length(2);
      for (const session of capped.body.sessions) expect(session.expiresAt, 'lifetime cap first').to.equal(iso(usedAt + DAY));
    });

    it('leaves out revoked and expired sessions and never shows a token', async () => {
      const user = await createUser(app);
      await sessionCookie(app, user.id);
      const [first, second] = await app.db('sessions').where('user_id', user.id).select('id', 'token_hash');
      expect((await api(app, admin).post(`/api/admin/users/${user.id}/revoke-auth-token`, { authTokenId: first.id })).status).to.equal(200);
      const res = await api(app, admin).get(`/api/admin/users/${user.id}/auth-tokens`);
      expect(res.body.sessions.map((s: { id: string }) => s.id)).to.deep.equal([second.id]);
      expect(JSON.stringify(res.body)).not.to.include(second.token_hash);
      app.clock.advance(8 * DAY);
      const later = await app.request('GET', `/api/admin/users/${user.id}/auth-tokens`, { cookie: await sessionCookie(app, admin.id) });
      expect(later.status).to.equal(200);
      expect(later.body).to.deep.equal({ totalCount: 0, sessions: [], page: 1, perPage: 100 });
      admin.cookie = await sessionCookie(app, admin.id);
      orgAdmin.cookie = await sessionCookie(app, orgAdmin.id);
    });

    it('marks the caller’s own session as current', async () => {
      const res = await api(app, admin).get(`/api/admin/users/${admin.id}/auth-tokens`);
      expect(res.status).to.equal(200);
      expect(res.body.sessions.filter((s: { isCurrent: boolean }) => s.isCurrent)).to.have.length(1);
    });
  });

  describe('POST /api/admin/users/<userId>/revoke-auth-token', () => {
    const sessionIds = async (userId: string) =>
      (await app.db('sessions').where('user_id', userId).orderBy('created_at').select('id')).map((s: { id: string }) => s.id);

    it('revokes that one session of the user and is audited', async () => {
      const user = await createUser(app);
      const keep = await sessionCookie(app, user.id);
      const [target] = await app.db('sessions').where('user_id', user.id).whereNull('revoked_at').select('id', 'token_hash');
      const res = await api(app, admin).post(`/api/admin/users/${user.id}/revoke-auth-token`, { authTokenId: target.id });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'session revoked' });
      expect((await app.db('sessions').where('id', target.id).first()).revoked_at).not.to.equal(null);
      expect(await liveSessions(app, user.id)).to.equal(1);
      const statuses = [
        (await app.request('GET', '/api/user', { cookie: user.cookie })).status,
        (await app.request('GET', '/api/user', { cookie: keep })).status,
      ];
      expect(statuses.sort()).to.deep.equal([200, 401]);
      await expectAudited('session.revoked', user, { count: 1, sessionId: target.id, reason: 'admin revoke' });
      const again = await api(app, admin).post(`/api/admin/users/${user.id}/revoke-auth-token`, { authTokenId: target.id });
      expect(again.status, 'already revoked').to.equal(404);
    });

    it('is 404 for a session of another user or an unknown session', async () => {
      const user = await createUser(app);
      const stranger = await createUser(app);
      const [foreign] = await sessionIds(stranger.id);
      for (const authTokenId of [foreign!, 'ses_doesnotexist0000']) {
        const res = await api(app, admin).post(`/api/admin/users/${user.id}/revoke-auth-token`, { authTokenId });
        expect(res.status, authTokenId).to.equal(404);
      }
      expect(await liveSessions(app, stranger.id)).to.equal(1);
    });

    it('refuses to revoke the session the admin is using with 400', async () => {
      const current = (await api(app, admin).get(`/api/admin/users/${admin.id}/auth-tokens`)).body.sessions.find((s: { isCurrent: boolean }) => s.isCurrent);
      const res = await api(app, admin).post(`/api/admin/users/${admin.id}/revoke-auth-token`, { authTokenId: current.id });
      expect(res.status).to.equal(400);
      expect((await api(app, admin).get('/api/admin/users?perpage=1')).status).to.equal(200);
    });

    it('rejects a missing or non-string authTokenId with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{}, { authTokenId: 42 }, { authTokenId: '' }, { sessionId: 'ses_x' }]) {
        expect((await api(app, admin).post(`/api/admin/users/${user.id}/revoke-auth-token`, bad)).status, JSON.stringify(bad)).to.equal(400);
      }
      expect(await liveSessions(app, user.id)).to.equal(1);
    });
  });
});
