import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, buildServiceAccount, createUser, type TestUser } from './helpers/factories.ts';

describe('user quotas', () => {
  let app: TestApp;
  let admin: TestUser;
  beforeEach(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
  });
  afterEach(async () => {
    await app.close();
  });

  const setLimit = (who: TestUser, userId: string, body: object) => api(app, who).post(`/api/admin/users/${userId}/quotas`, body);

  it('GET /api/user/quotas: 401 without a session; unlimited api_keys with the live count by default', async () => {
    expect((await app.request('GET', '/api/user/quotas')).status).to.equal(401);
    const user = await createUser(app);
    await app.request('POST', '/api/user/access-tokens', { cookie: user.cookie, body: { name: 'one' } });
    const res = await app.request('GET', '/api/user/quotas', { cookie: user.cookie });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal([{ userId: user.id, target: 'api_keys', limit: -1, used: 1 }]);
  });

  it('POST /api/admin/users/:id/quotas: 401 anonymous, 403 for an org admin, 200 for a server admin, audited', async () => {
    const user = await createUser(app);
    const orgAdmin = await createUser(app, { role: 'Admin' });
    expect((await app.request('POST', `/api/admin/users/${user.id}/quotas`, { body: { target: 'api_keys', limit: 1 } })).status).to.equal(401);
    expect((await setLimit(orgAdmin, user.id, { target: 'api_keys', limit: 1 })).status).to.equal(403);
    const res = await setLimit(admin, user.id, { target: 'api_keys', limit: 2 });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal([{ userId: user.id, target: 'api_keys', limit: 2, used: 0 }]);
    const [entry] = await auditEntries(app, { action: 'quota.updated', target_id: user.id });
    expect(entry!.metadata).to.deep.equal({ target: 'api_keys', limit: 2 });
  });

  it('rejects an unknown target, a limit under -1 and an unknown user', async () => {
    const user = await createUser(app);
    expect((await setLimit(admin, user.id, { target: 'dashboards', limit: 1 })).status).to.equal(400);
    expect((await setLimit(admin, user.id, { target: 'api_keys', limit: -2 })).status).to.equal(400);
    expect((await setLimit(admin, user.id, { target: 'api_keys' })).status).to.equal(400);
    expect((await setLimit(admin, 'usr_missing', { target: 'api_keys', limit: 1 })).status).to.equal(404);
    const account = await buildServiceAccount(app);
    expect((await setLimit(admin, account.id, { target: 'api_keys', limit: 1 })).status, 'a service account is not a user here').to.equal(404);
  });

  it('is enforced on PAT creation, exactly under concurrent creates, and a revoked token frees its slot', async () => {
    const user = await createUser(app);
    await setLimit(admin, user.id, { target: 'api_keys', limit: 3 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => app.request('POST', '/api/user/access-tokens', { cookie: user.cookie, body: { name: `t${i}` } })),
    );
    expect(results.filter((r) => r.status === 201)).to.have.length(3);
    const refused = results.filter((r) => r.status === 403);
    expect(refused).to.have.length(7);
    expect(refused[0]!.body.message).to.match(/quota exceeded for api_keys/);
    expect(await app.count('api_tokens', { user_id: user.id })).to.equal(3);
    const first = results.find((r) => r.status === 201)!.body.id;
    await app.request('DELETE', `/api/user/access-tokens/${first}`, { cookie: user.cookie });
    expect((await app.request('POST', '/api/user/access-tokens', { cookie: user.cookie, body: { name: 'again' } })).status).to.equal(201);
  });
});
