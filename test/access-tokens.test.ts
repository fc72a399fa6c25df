import { expect } from 'chai';
import { sha256Hex } from '../src/crypto/tokens.ts';
import { api, createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('personal access tokens', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  const issue = (user: TestUser, body: object) => api(app, user).post('/api/user/access-tokens', body);

  it('are 401 without a session', async () => {
    expect((await app.request('GET', '/api/user/access-tokens')).status).to.equal(401);
    expect((await app.request('POST', '/api/user/access-tokens', { body: { name: 'x' } })).status).to.equal(401);
    expect((await app.request('DELETE', '/api/user/access-tokens/x')).status).to.equal(401);
  });

  it('are svc_pat_ + base64url of 32 bytes, shown once, stored hashed, listed as metadata', async () => {
    const user = await createUser(app);
    const res = await issue(user, { name: 'ci' });
    expect(res.status).to.equal(201);
    expect(res.body).to.have.all.keys('id', 'name', 'key');
    expect(res.body.key).to.match(/^svc_pat_[A-Za-z0-9_-]{43}$/);
    const row = await app.db('api_tokens').where('id', res.body.id).first();
    expect(row.token_hash).to.equal(sha256Hex(res.body.key));
    const listed = await app.request('GET', '/api/user/access-tokens', { cookie: user.cookie });
    expect(listed.body).to.deep.equal({
      totalCount: 1,
      tokens: [
        {
          id: res.body.id,
          name: 'ci',
          created: new Date(app.clock.now()).toISOString(),
          expiration: null,
          lastUsedAt: null,
          isRevoked: false,
          hasExpired: false,
          secondsUntilExpiration: null,
        },
      ],
      page: 1,
      perPage: 100,
    });
    expect(JSON.stringify(listed.body)).not.to.include(res.body.key.slice(8));
    const audit = JSON.stringify(await app.db('audit_log').select('*'));
    expect(audit).to.include('user.token_issued');
    expect(audit).not.to.include(res.body.key);
  });

  it("authenticate as Bearer and as X-Api-Key, with the owner's current permissions", async () => {
    const user = await createUser(app, { role: 'Viewer' });
    const { key } = (await issue(user, { name: 'script' })).body;
    expect((await app.request('GET', '/api/user', { token: key })).body.id).to.equal(user.id);
    expect((await app.request('GET', '/api/user', { headers: { 'x-api-key': key } })).body.id).to.equal(user.id);
    expect((await app.request('GET', '/api/user/permissions', { token: key })).body).not.to.have.property('dashboards:write');
    const admin = await createUser(app, { role: 'Admin' });
    expect((await api(app, admin).patch(`/api/org/users/${user.id}`, { role: 'Editor' })).status).to.equal(200);
    expect((await app.request('GET', '/api/user/permissions', { token: key })).body).to.have.property('dashboards:write');
    expect((await app.db('api_tokens').where('name', 'script').first()).last_used_at).to.not.equal(null);
  });

  it('expire after secondsToLive', async () => {
    const user = await createUser(app);
    const { id, key } = (await issue(user, { name: 'short', secondsToLive: 60 })).body;
    const listed = (await app.request('GET', '/api/user/access-tokens', { cookie: user.cookie })).body.tokens[0];
    expect(listed).to.include({ id, secondsUntilExpiration: 60, hasExpired: false });
    app.clock.advance(59_000);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(200);
    app.clock.advance(1_000);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(401);
    expect((await app.request('GET', '/api/user/access-tokens', { cookie: user.cookie })).body.tokens[0]).to.include({
      hasExpired: true,
      secondsUntilExpiration: 0,
    });
  });

  it('stop working once revoked; another user cannot revoke them', async () => {
    const user = await createUser(app);
    const other = await createUser(app);
    const { id, key } = (await issue(user, { name: 'revoke-me' })).body;
    expect((await app.request('DELETE', `/api/user/access-tokens/${id}`, { cookie: other.cookie })).status).to.equal(404);
    const res = await app.request('DELETE', `/api/user/access-tokens/${id}`, { cookie: user.cookie });
    expect(res.status).to.equal(200);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(401);
    expect((await app.request('GET', '/api/user/access-tokens', { cookie: user.cookie })).body.tokens[0].isRevoked).to.equal(true);
    expect(await app.count('audit_log', { action: 'user.token_revoked', target_id: id })).to.equal(1);
    expect((await app.request('DELETE', '/api/user/access-tokens/tok_missing', { cookie: user.cookie })).status).to.equal(404);
  });

  it('stop working when the owner is disabled or deleted', async () => {
    const user = await createUser(app);
    const { key } = (await issue(user, { name: 'owner' })).body;
    const admin = api(app, await createUser(app, { svcAdmin: true }));
    expect((await admin.post(`/api/admin/users/${user.id}/disable`)).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(401);
    expect((await admin.post(`/api/admin/users/${user.id}/enable`)).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(200);
    expect((await admin.delete(`/api/admin/users/${user.id}`)).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(401);
  });

  it('reject bad input: a missing name, a duplicate name (409), a bad secondsToLive', async () => {
    const user = await createUser(app);
    expect((await issue(user, {})).status).to.equal(400);
    expect((await issue(user, { name: 'dup' })).status).to.equal(201);
    expect((await issue(user, { name: 'dup' })).status).to.equal(409);
    expect((await issue(user, { name: 'x', secondsToLive: -5 })).status).to.equal(400);
    expect((await issue(user, { name: 'x', secondsToLive: 'soon' })).status).to.equal(400);
  });

  it('cannot be used to log in through the form or to log out a session', async () => {
    const user = await createUser(app, { login: 'patuser' });
    const { key } = (await issue(user, { name: 'k' })).body;
    expect((await app.request('POST', '/api/login', { body: { user: 'patuser', password: key } })).status).to.equal(401);
    expect((await app.request('POST', '/api/logout', { token: key })).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(200);
  });
});
