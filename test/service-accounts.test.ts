/** Service accounts (`/api/serviceaccounts`): access, creating, searching, reading, changing and deleting them, and their quota. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, api, assignRole, auditEntries, buildServiceAccount, buildToken, createOrg, createUser, type TestUser } from './helpers/factories.ts';

describe('service accounts', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  beforeEach(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  afterEach(async () => {
    await app.close();
  });

  /** Every endpoint of the family, with a valid body, against an existing account and token. */
  async function endpoints() {
    const account = await buildServiceAccount(app);
    const token = await buildToken(app, account);
    return [
      ['POST', '/api/serviceaccounts', { name: 'new one', role: 'Viewer' }],
      ['GET', '/api/serviceaccounts/search', undefined],
      ['GET', `/api/serviceaccounts/${account.id}`, undefined],
      ['PATCH', `/api/serviceaccounts/${account.id}`, { name: 'renamed' }],
      ['DELETE', `/api/serviceaccounts/${account.id}`, undefined],
      ['GET', `/api/serviceaccounts/${account.id}/tokens`, undefined],
      ['POST', `/api/serviceaccounts/${account.id}/tokens`, { name: 'another' }],
      ['DELETE', `/api/serviceaccounts/${account.id}/tokens/${token.id}`, undefined],
    ] as const;
  }

  it('are 401 without credentials and 403 for a Viewer, on every endpoint', async () => {
    for (const [method, path, body] of await endpoints()) {
      expect((await app.request(method, path, { body })).status, `${method} ${path} anonymous`).to.equal(401);
      const res = await app.request(method, path, { body, cookie: viewer.cookie });
      expect(res.status, `${method} ${path} as a Viewer`).to.equal(403);
      expect(res.body.message).to.match(/permission denied: you need serviceaccounts:/);
    }
    expect(await app.count('users', { is_service_account: true })).to.equal(1);
    expect(await app.count('api_tokens', { revoked_at: null })).to.equal(1);
  });

  describe('create', () => {
    it('makes a users row with login sa-<slug>, no email or password, a member of the org with its role', async () => {
      const res = await api(app, admin).post('/api/serviceaccounts', { name: 'CI Bot #1', role: 'Editor' });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({ id: res.body.id, name: 'CI Bot #1', login: 'sa-ci-bot-1', orgId: 'org_main', role: 'Editor', isDisabled: false });
      const row = await app.db('users').where('id', res.body.id).first();
      expect(row).to.include({ login: 'sa-ci-bot-1', email: null, password_hash: null, default_org_id: 'org_main' });
      expect(!!row.is_service_account).to.equal(true);
      expect(!!row.is_hidden).to.equal(false);
      expect(await app.db('org_members').where('user_id', res.body.id).select('org_id', 'role')).to.deep.equal([{ org_id: 'org_main', role: 'Editor' }]);
      const [entry] = await auditEntries(app, 'service_account.created');
      expect(entry).to.include({
        actor_id: admin.id,
        org_id: 'org_main',
        target_type: 'service_account',
        target_id: res.body.id,
        target_name: 'CI Bot #1',
        outcome: 'success',
      });
      expect(entry!.metadata).to.deep.equal({ login: 'sa-ci-bot-1', role: 'Editor', isDisabled: false });
    });

    it('takes isDisabled, and names the org in the login outside org_main', async () => {
      const orgId = await createOrg(app);
      await addMember(app, orgId, admin.id, 'Admin');
      const res = await api(app, admin, orgId).post('/api/serviceaccounts', { name: 'Deployer', role: 'Viewer', isDisabled: true });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ login: `sa-${orgId}-deployer`.toLowerCase(), orgId, isDisabled: true });
      expect(res.body.login.startsWith('sa-')).to.equal(true);
      expect(await app.db('org_members').where('user_id', res.body.id).pluck('org_id')).to.deep.equal([orgId]);
      // The same name is free in another org: names are unique per org, logins per server.
      expect((await api(app, admin).post('/api/serviceaccounts', { name: 'Deployer', role: 'Viewer' })).body.login).to.equal('sa-deployer');
    });

    it('refuses bad input with 400 and an existing name or login with 409', async () => {
      for (const body of [
        {},
        { name: 'x' },
        { role: 'Viewer' },
        { name: 'x', role: 'None' },
        { name: 'x', role: 'Owner' },
        { name: 'x', role: 'Viewer', isDisabled: 'yes' },
        { name: 'x', role: 'Viewer', email: 'a@b' },
        { name: '   ', role: 'Viewer' },
        { name: 12, role: 'Viewer' },
      ]) {
        const res = await api(app, admin).post('/api/serviceaccounts', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      const noSlug = await api(app, admin).post('/api/serviceaccounts', { name: '!!!', role: 'Viewer' });
      expect(noSlug.status).to.equal(400);
      expect(noSlug.body.message).to.match(/letter or digit/);
      expect((await api(app, admin).post('/api/serviceaccounts', { name: 'Builder', role: 'Viewer' })).status).to.equal(201);
      for (const name of ['Builder', 'builder', 'BUILDER!']) {
        const res = await api(app, admin).post('/api/serviceaccounts', { name, role: 'Viewer' });
        expect(res.status, name).to.equal(409);
        expect(res.body.message).to.match(/already exists/);
      }
      expect(await app.count('users', { is_service_account: true })).to.equal(1);
    });

    it('is refused to a caller who lacks a permission of the role it would hand out (delegation)', async () => {
      const delegate = await createUser(app, { role: 'Viewer' });
      await assignRole(app, 'org_main', delegate.id, 'fixed:serviceaccounts:writer');
      expect((await api(app, delegate).post('/api/serviceaccounts', { name: 'reader bot', role: 'Viewer' })).status).to.equal(201);
      expect((await api(app, delegate).post('/api/serviceaccounts', { name: 'editor bot', role: 'Editor' })).status).to.equal(403);
      expect((await api(app, delegate).post('/api/serviceaccounts', { name: 'admin bot', role: 'Admin' })).status).to.equal(403);
      expect((await api(app, admin).post('/api/serviceaccounts', { name: 'admin bot', role: 'Admin' })).status).to.equal(201);
    });

    it('cannot log in through the login form', async () => {
      const { login } = (await api(app, admin).post('/api/serviceaccounts', { name: 'formless', role: 'Admin' })).body;
      const res = await app.request('POST', '/api/login', { body: { user: login, password: 'correct horse battery staple' } });
      expect(res.status).to.equal(401);
      expect(res.setCookie.join()).not.to.include('svc_session=');
    });
  });

  describe('search', () => {
    it("pages through the org's visible accounts with their live token counts", async () => {
      const alpha = await buildServiceAccount(app, { name: 'alpha', role: 'Editor' });
      const beta = await buildServiceAccount(app, { name: 'beta', disabled: true });
      await buildServiceAccount(app, { name: 'legacy-hidden', hidden: true });
      const orgId = await createOrg(app);
      await buildServiceAccount(app, { orgId, name: 'elsewhere' });
      await buildToken(app, alpha);
      await buildToken(app, alpha, { secondsToLive: 60 });
      const revoked = await buildToken(app, alpha);
      expect((await api(app, admin).delete(`/api/serviceaccounts/${alpha.id}/tokens/${revoked.id}`)).status).to.equal(200);
      app.clock.advance(61_000);

      const res = await api(app, admin).get('/api/serviceaccounts/search');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        totalCount: 2,
        page: 1,
        perPage: 100,
        serviceAccounts: [
          { id: alpha.id, name: 'alpha', login: 'sa-alpha', orgId: 'org_main', role: 'Editor', isDisabled: false, tokens: 1 },
          { id: beta.id, name: 'beta', login: 'sa-beta', orgId: 'org_main', role: 'Viewer', isDisabled: true, tokens: 0 },
        ],
      });
      const page2 = await api(app, admin).get('/api/serviceaccounts/search?perpage=1&page=2');
      expect(page2.body).to.include({ totalCount: 2, page: 2, perPage: 1 });
      expect(page2.body.serviceAccounts.map((a: { name: string }) => a.name)).to.deep.equal(['beta']);
      const found = await api(app, admin).get('/api/serviceaccounts/search?query=SA-AL');
      expect(found.body.serviceAccounts.map((a: { id: string }) => a.id)).to.deep.equal([alpha.id]);
      expect((await api(app, admin).get('/api/serviceaccounts/search?query=%25')).body.totalCount).to.equal(0);
    });

    it('refuses bad paging', async () => {
      for (const query of ['perpage=0', 'page=0', 'perpage=abc', 'unknown=1']) {
        expect((await api(app, admin).get(`/api/serviceaccounts/search?${query}`)).status, query).to.equal(400);
      }
    });
  });

  describe('read, update, delete', () => {
    it('reads one account; an unknown id or an account of another org is 404', async () => {
      const account = await buildServiceAccount(app, { name: 'reader', role: 'Viewer' });
      await buildToken(app, account);
      const res = await api(app, admin).get(`/api/serviceaccounts/${account.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ id: account.id, name: 'reader', login: 'sa-reader', orgId: 'org_main', role: 'Viewer', isDisabled: false, tokens: 1 });
      const foreign = await buildServiceAccount(app, { orgId: await createOrg(app) });
      expect((await api(app, admin).get(`/api/serviceaccounts/${foreign.id}`)).status).to.equal(404);
      expect((await api(app, admin).get('/api/serviceaccounts/usr_missing')).status).to.equal(404);
      expect((await api(app, admin).get(`/api/serviceaccounts/${admin.id}`)).status).to.equal(404);
    });

    it('renames and changes the role, which the policy sees at once, with audit entries', async () => {
      const account = await buildServiceAccount(app, { name: 'worker', role: 'Viewer' });
      const { key } = await buildToken(app, account);
      expect((await app.request('GET', '/api/user/permissions', { token: key })).body).not.to.have.property('dashboards:write');

      const res = await api(app, admin).patch(`/api/serviceaccounts/${account.id}`, { name: 'Worker 2', role: 'Editor' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ id: account.id, name: 'Worker 2', login: 'sa-worker', orgId: 'org_main', role: 'Editor', isDisabled: false, tokens: 1 });
      expect(await app.db('org_members').where('user_id', account.id).pluck('role')).to.deep.equal(['Editor']);
      expect((await app.request('GET', '/api/user/permissions', { token: key })).body).to.have.property('dashboards:write');
      const [entry] = await auditEntries(app, 'service_account.updated');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_id: account.id, target_name: 'Worker 2' });
      expect(entry!.metadata).to.deep.equal({ fields: ['name', 'role'], role: 'Editor', previousRole: 'Viewer' });

      // Nothing changed: nothing recorded.
      expect((await api(app, admin).patch(`/api/serviceaccounts/${account.id}`, { role: 'Editor' })).status).to.equal(200);
      expect(await app.count('audit_log', { action: 'service_account.updated' })).to.equal(1);
    });

    it('refuses bad updates: empty or unknown fields (400), a taken name (409), an unknown account (404), a stronger role than the caller holds (403)', async () => {
      const account = await buildServiceAccount(app, { name: 'one' });
      await buildServiceAccount(app, { name: 'two' });
      const patch = (id: string, body: unknown, who = admin) => api(app, who).patch(`/api/serviceaccounts/${id}`, body);
      for (const body of [{}, { login: 'sa-x' }, { role: 'None' }, { isDisabled: 1 }, { name: '' }]) {
        expect((await patch(account.id, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await patch(account.id, { name: 'TWO' })).status).to.equal(409);
      expect((await patch(account.id, { name: 'ONE' })).status).to.equal(200);
      expect((await patch('usr_missing', { name: 'x' })).status).to.equal(404);
      const delegate = await createUser(app, { role: 'Viewer' });
      await assignRole(app, 'org_main', delegate.id, 'fixed:serviceaccounts:writer');
      expect((await patch(account.id, { name: 'by delegate' }, delegate)).status).to.equal(200);
      expect((await patch(account.id, { role: 'Admin' }, delegate)).status).to.equal(403);
      expect(await app.db('org_members').where('user_id', account.id).pluck('role')).to.deep.equal(['Viewer']);
    });

    it('disabling freezes its tokens (401); enabling thaws those neither revoked nor expired', async () => {
      const account = await buildServiceAccount(app, { role: 'Editor' });
      const live = await buildToken(app, account);
      const revoked = await buildToken(app, account);
      const shortLived = await buildToken(app, account, { secondsToLive: 60 });
      expect((await api(app, admin).delete(`/api/serviceaccounts/${account.id}/tokens/${revoked.id}`)).status).to.equal(200);

      const disabled = await api(app, admin).patch(`/api/serviceaccounts/${account.id}`, { isDisabled: true });
      expect(disabled.body).to.include({ isDisabled: true });
      for (const token of [live, shortLived]) {
        const res = await app.request('GET', '/api/user', { token: token.key });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.match(/invalid, expired or revoked/);
      }
      expect(await app.count('api_tokens', { user_id: account.id })).to.equal(3);
      expect((await auditEntries(app, 'service_account.disabled')).map((e) => e.target_id)).to.deep.equal([account.id]);

      app.clock.advance(61_000);
      expect((await api(app, admin).patch(`/api/serviceaccounts/${account.id}`, { isDisabled: false })).body).to.include({
        isDisabled: false,
      });
      expect((await app.request('GET', '/api/user', { token: live.key })).status).to.equal(200);
      expect((await app.request('GET', '/api/user', { token: revoked.key })).status).to.equal(401);
      expect((await app.request('GET', '/api/user', { token: shortLived.key })).status).to.equal(401);
      expect(await app.count('audit_log', { action: 'service_account.enabled', target_id: account.id })).to.equal(1);
    });

    it('deleting the account deletes its tokens and its membership', async () => {
      const account = await buildServiceAccount(app, { name: 'doomed', role: 'Admin' });
      const { key } = await buildToken(app, account);
      await buildToken(app, account);
      expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(200);
      const res = await api(app, admin).delete(`/api/serviceaccounts/${account.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'service account deleted' });
      expect(await app.count('users', { id: account.id })).to.equal(0);
      expect(await app.count('api_tokens', { user_id: account.id })).to.equal(0);
      expect(await app.count('org_members', { user_id: account.id })).to.equal(0);
      expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(401);
      const [entry] = await auditEntries(app, 'service_account.deleted');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_id: account.id, target_name: 'doomed' });
      expect(entry!.metadata).to.deep.equal({ login: 'sa-doomed', liveTokens: 2 });
      expect((await api(app, admin).delete(`/api/serviceaccounts/${account.id}`)).status).to.equal(404);
    });
  });

  describe('quotas', () => {
    it('QUOTA_SERVICE_ACCOUNTS_PER_ORG holds exactly under 10 concurrent creates', async () => {
      await app.close();
      app = await startTestApp({ env: { QUOTA_SERVICE_ACCOUNTS_PER_ORG: '3' } });
      admin = await createUser(app, { role: 'Admin' });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => api(app, admin).post('/api/serviceaccounts', { name: `bot ${i}`, role: 'Viewer' })),
      );
      expect(results.filter((r) => r.status === 201)).to.have.length(3);
      const refused = results.filter((r) => r.status !== 201);
      expect(refused.map((r) => r.status)).to.deep.equal(Array(7).fill(403));
      expect(refused[0]!.body.message).to.match(/quota exceeded for service_accounts/);
      expect(await app.count('users', { is_service_account: true })).to.equal(3);
      // Another org has its own count.
      const orgId = await createOrg(app);
      await addMember(app, orgId, admin.id, 'Admin');
      expect((await api(app, admin, orgId).post('/api/serviceaccounts', { name: 'bot 0', role: 'Viewer' })).status).to.equal(201);
    });

    it('QUOTA_API_KEYS_PER_SA counts the live tokens of each account, exactly under 10 concurrent issues', async () => {
      await app.close();
      app = await startTestApp({ env: { QUOTA_API_KEYS_PER_SA: '2' } });
      admin = await createUser(app, { role: 'Admin' });
      const account = await buildServiceAccount(app);
      const issue = (id: string, name: string, body: object = {}) => api(app, admin).post(`/api/serviceaccounts/${id}/tokens`, { name, ...body });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => issue(account.id, `t${i}`)));
      expect(results.filter((r) => r.status === 201)).to.have.length(2);
      const refused = results.find((r) => r.status !== 201)!;
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(/quota exceeded for api_keys/);
      expect(await app.count('api_tokens', { user_id: account.id })).to.equal(2);
      // Per account: another one has its own two.
      const other = await buildServiceAccount(app);
      expect((await issue(other.id, 'a')).status).to.equal(201);
      expect((await issue(other.id, 'b', { secondsToLive: 10 })).status).to.equal(201);
      expect((await issue(other.id, 'c')).status).to.equal(403);
      // Expired and revoked tokens free their slot.
      app.clock.advance(10_000);
      expect((await issue(other.id, 'c')).status).to.equal(201);
      const first = results.find((r) => r.status === 201)!.body.id;
      await api(app, admin).delete(`/api/serviceaccounts/${account.id}/tokens/${first}`);
      expect((await issue(account.id, 'after revoke')).status).to.equal(201);
    });
  });
});
