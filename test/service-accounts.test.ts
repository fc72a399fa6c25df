import { expect } from 'chai';
import { sha256Hex } from '../src/crypto/tokens.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, assignRole, auditEntries, buildServiceAccount, buildToken, createOrg, createUser, type TestUser } from './helpers/factories.ts';

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

  const create = (cookie: string, body: unknown, headers: Record<string, string> = {}) =>
    app.request('POST', '/api/serviceaccounts', { cookie, body, headers });

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
      const res = await create(admin.cookie, { name: 'CI Bot #1', role: 'Editor' });
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
      const res = await create(admin.cookie, { name: 'Deployer', role: 'Viewer', isDisabled: true }, { 'x-svc-org-id': orgId });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ login: `sa-${orgId}-deployer`.toLowerCase(), orgId, isDisabled: true });
      expect(res.body.login.startsWith('sa-')).to.equal(true);
      expect(await app.db('org_members').where('user_id', res.body.id).pluck('org_id')).to.deep.equal([orgId]);
      // The same name is free in another org: names are unique per org, logins per server.
      expect((await create(admin.cookie, { name: 'Deployer', role: 'Viewer' })).body.login).to.equal('sa-deployer');
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
        const res = await create(admin.cookie, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      const noSlug = await create(admin.cookie, { name: '!!!', role: 'Viewer' });
      expect(noSlug.status).to.equal(400);
      expect(noSlug.body.message).to.match(/letter or digit/);
      expect((await create(admin.cookie, { name: 'Builder', role: 'Viewer' })).status).to.equal(201);
      for (const name of ['Builder', 'builder', 'BUILDER!']) {
        const res = await create(admin.cookie, { name, role: 'Viewer' });
        expect(res.status, name).to.equal(409);
        expect(res.body.message).to.match(/already exists/);
      }
      expect(await app.count('users', { is_service_account: true })).to.equal(1);
    });

    it('is refused to a caller who lacks a permission of the role it would hand out (delegation)', async () => {
      const delegate = await createUser(app, { role: 'Viewer' });
      await assignRole(app, 'org_main', delegate.id, 'fixed:serviceaccounts:writer');
      expect((await create(delegate.cookie, { name: 'reader bot', role: 'Viewer' })).status).to.equal(201);
      expect((await create(delegate.cookie, { name: 'editor bot', role: 'Editor' })).status).to.equal(403);
      expect((await create(delegate.cookie, { name: 'admin bot', role: 'Admin' })).status).to.equal(403);
      expect((await create(admin.cookie, { name: 'admin bot', role: 'Admin' })).status).to.equal(201);
    });

    it('cannot log in through the login form', async () => {
      const { login } = (await create(admin.cookie, { name: 'formless', role: 'Admin' })).body;
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
      await app.db('api_tokens').where('id', revoked.id).update({ revoked_at: app.clock.now() });
      app.clock.advance(61_000);

      const res = await app.request('GET', '/api/serviceaccounts/search', { cookie: admin.cookie });
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
      const page2 = await app.request('GET', '/api/serviceaccounts/search?perpage=1&page=2', { cookie: admin.cookie });
      expect(page2.body).to.include({ totalCount: 2, page: 2, perPage: 1 });
      expect(page2.body.serviceAccounts.map((a: { name: string }) => a.name)).to.deep.equal(['beta']);
      const found = await app.request('GET', '/api/serviceaccounts/search?query=SA-AL', { cookie: admin.cookie });
      expect(found.body.serviceAccounts.map((a: { id: string }) => a.id)).to.deep.equal([alpha.id]);
      expect((await app.request('GET', '/api/serviceaccounts/search?query=%25', { cookie: admin.cookie })).body.totalCount).to.equal(0);
    });

    it('refuses bad paging', async () => {
      for (const query of ['perpage=0', 'page=0', 'perpage=abc', 'unknown=1']) {
        expect((await app.request('GET', `/api/serviceaccounts/search?${query}`, { cookie: admin.cookie })).status, query).to.equal(400);
      }
    });
  });

  describe('read, update, delete', () => {
    it('reads one account; an unknown id or an account of another org is 404', async () => {
      const account = await buildServiceAccount(app, { name: 'reader', role: 'Viewer' });
      await buildToken(app, account);
      const res = await app.request('GET', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ id: account.id, name: 'reader', login: 'sa-reader', orgId: 'org_main', role: 'Viewer', isDisabled: false, tokens: 1 });
      const foreign = await buildServiceAccount(app, { orgId: await createOrg(app) });
      expect((await app.request('GET', `/api/serviceaccounts/${foreign.id}`, { cookie: admin.cookie })).status).to.equal(404);
      expect((await app.request('GET', '/api/serviceaccounts/usr_missing', { cookie: admin.cookie })).status).to.equal(404);
      expect((await app.request('GET', `/api/serviceaccounts/${admin.id}`, { cookie: admin.cookie })).status).to.equal(404);
    });

    it('renames and changes the role, which the policy sees at once, with audit entries', async () => {
      const account = await buildServiceAccount(app, { name: 'worker', role: 'Viewer' });
      const { key } = await buildToken(app, account);
      expect((await app.request('GET', '/api/user/permissions', { token: key })).body).not.to.have.property('dashboards:write');

      const res = await app.request('PATCH', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie, body: { name: 'Worker 2', role: 'Editor' } });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ id: account.id, name: 'Worker 2', login: 'sa-worker', orgId: 'org_main', role: 'Editor', isDisabled: false, tokens: 1 });
      expect(await app.db('org_members').where('user_id', account.id).pluck('role')).to.deep.equal(['Editor']);
      expect((await app.request('GET', '/api/user/permissions', { token: key })).body).to.have.property('dashboards:write');
      const [entry] = await auditEntries(app, 'service_account.updated');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_id: account.id, target_name: 'Worker 2' });
      expect(entry!.metadata).to.deep.equal({ fields: ['name', 'role'], role: 'Editor', previousRole: 'Viewer' });

      // Nothing changed: nothing recorded.
      expect((await app.request('PATCH', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie, body: { role: 'Editor' } })).status).to.equal(200);
      expect(await app.count('audit_log', { action: 'service_account.updated' })).to.equal(1);
    });

    it('refuses bad updates: empty or unknown fields (400), a taken name (409), an unknown account (404), a stronger role than the caller holds (403)', async () => {
      const account = await buildServiceAccount(app, { name: 'one' });
      await buildServiceAccount(app, { name: 'two' });
      const patch = (id: string, body: unknown, cookie = admin.cookie) => app.request('PATCH', `/api/serviceaccounts/${id}`, { cookie, body });
      for (const body of [{}, { login: 'sa-x' }, { role: 'None' }, { isDisabled: 1 }, { name: '' }]) {
        expect((await patch(account.id, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await patch(account.id, { name: 'TWO' })).status).to.equal(409);
      expect((await patch(account.id, { name: 'ONE' })).status).to.equal(200);
      expect((await patch('usr_missing', { name: 'x' })).status).to.equal(404);
      const delegate = await createUser(app, { role: 'Viewer' });
      await assignRole(app, 'org_main', delegate.id, 'fixed:serviceaccounts:writer');
      expect((await patch(account.id, { name: 'by delegate' }, delegate.cookie)).status).to.equal(200);
      expect((await patch(account.id, { role: 'Admin' }, delegate.cookie)).status).to.equal(403);
      expect(await app.db('org_members').where('user_id', account.id).pluck('role')).to.deep.equal(['Viewer']);
    });

    it('disabling freezes its tokens (401); enabling thaws those neither revoked nor expired', async () => {
      const account = await buildServiceAccount(app, { role: 'Editor' });
      const live = await buildToken(app, account);
      const revoked = await buildToken(app, account);
      const shortLived = await buildToken(app, account, { secondsToLive: 60 });
      expect((await app.request('DELETE', `/api/serviceaccounts/${account.id}/tokens/${revoked.id}`, { cookie: admin.cookie })).status).to.equal(200);

      const disabled = await app.request('PATCH', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie, body: { isDisabled: true } });
      expect(disabled.body).to.include({ isDisabled: true });
      for (const token of [live, shortLived]) {
        const res = await app.request('GET', '/api/user', { token: token.key });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.match(/invalid, expired or revoked/);
      }
      expect(await app.count('api_tokens', { user_id: account.id })).to.equal(3);
      expect((await auditEntries(app, 'service_account.disabled')).map((e) => e.target_id)).to.deep.equal([account.id]);

      app.clock.advance(61_000);
      expect((await app.request('PATCH', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie, body: { isDisabled: false } })).body).to.include({
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
      const res = await app.request('DELETE', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'service account deleted' });
      expect(await app.count('users', { id: account.id })).to.equal(0);
      expect(await app.count('api_tokens', { user_id: account.id })).to.equal(0);
      expect(await app.count('org_members', { user_id: account.id })).to.equal(0);
      expect((await app.request('GET', '/api/user', { token: key })).status).to.equal(401);
      const [entry] = await auditEntries(app, 'service_account.deleted');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_id: account.id, target_name: 'doomed' });
      expect(entry!.metadata).to.deep.equal({ login: 'sa-doomed', liveTokens: 2 });
      expect((await app.request('DELETE', `/api/serviceaccounts/${account.id}`, { cookie: admin.cookie })).status).to.equal(404);
    });
  });

  describe('tokens', () => {
    it('are svc_sa_ + base64url of 32 bytes, shown once, stored hashed and pinned to the org, listed as metadata', async () => {
      const account = await buildServiceAccount(app);
      const res = await app.request('POST', `/api/serviceaccounts/${account.id}/tokens`, { cookie: admin.cookie, body: { name: 'deploy' } });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('id', 'name', 'key');
      expect(res.body.key).to.match(/^svc_sa_[A-Za-z0-9_-]{43}$/);
      const row = await app.db('api_tokens').where('id', res.body.id).first();
      expect(row).to.include({ kind: 'sa', user_id: account.id, org_id: 'org_main', name: 'deploy', token_hash: sha256Hex(res.body.key), expires_at: null });
      const listed = await app.request('GET', `/api/serviceaccounts/${account.id}/tokens`, { cookie: admin.cookie });
      expect(listed.status).to.equal(200);
      expect(listed.body).to.deep.equal({
        totalCount: 1,
        tokens: [
          {
            id: res.body.id,
            name: 'deploy',
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
      expect(JSON.stringify(listed.body)).not.to.include(res.body.key.slice(7));
      const [entry] = await auditEntries(app, 'service_account.token_issued');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_type: 'service_account_token', target_id: res.body.id, target_name: 'deploy' });
      expect(entry!.metadata).to.deep.equal({ serviceAccountId: account.id, secondsToLive: null });
      expect(JSON.stringify(await app.db('audit_log').select('*')))
        .not.to.include(res.body.key)
        .and.not.to.include(row.token_hash);
    });

    it('refuse bad input (400), a duplicate name (409) and unknown accounts or tokens (404)', async () => {
      const account = await buildServiceAccount(app);
      const other = await buildServiceAccount(app);
      const issue = (id: string, body: unknown) => app.request('POST', `/api/serviceaccounts/${id}/tokens`, { cookie: admin.cookie, body });
      for (const body of [
        {},
        { name: '' },
        { name: 'x', secondsToLive: 0 },
        { name: 'x', secondsToLive: 'soon' },
        { name: 'x', secondsToLive: 1.5 },
        { name: 'x', extra: true },
      ]) {
        expect((await issue(account.id, body)).status, JSON.stringify(body)).to.equal(400);
      }
      const first = await issue(account.id, { name: 'dup' });
      expect(first.status).to.equal(201);
      expect((await issue(account.id, { name: 'dup' })).status).to.equal(409);
      expect((await issue(other.id, { name: 'dup' })).status).to.equal(201);
      expect((await issue('usr_missing', { name: 'x' })).status).to.equal(404);
      expect((await app.request('GET', '/api/serviceaccounts/usr_missing/tokens', { cookie: admin.cookie })).status).to.equal(404);
      expect((await app.request('DELETE', `/api/serviceaccounts/${account.id}/tokens/tok_missing`, { cookie: admin.cookie })).status).to.equal(404);
      // A token is revoked only through its own account.
      expect((await app.request('DELETE', `/api/serviceaccounts/${other.id}/tokens/${first.body.id}`, { cookie: admin.cookie })).status).to.equal(404);
    });

    it("authenticate as Bearer and as X-Api-Key, acting with the account's role in its org", async () => {
      const editor = await buildServiceAccount(app, { role: 'Editor' });
      const { key } = await buildToken(app, editor);
      const me = await app.request('GET', '/api/user', { token: key });
      expect(me.status).to.equal(200);
      expect(me.body.id).to.equal(editor.id);
      const permissions = await app.request('GET', '/api/user/permissions', { headers: { 'x-api-key': key } });
      expect(permissions.status).to.equal(200);
      expect(permissions.body).to.have.property('dashboards:write');
      expect(permissions.body).not.to.have.property('serviceaccounts:create');
      expect((await app.request('POST', '/api/serviceaccounts', { token: key, body: { name: 'child', role: 'Viewer' } })).status).to.equal(403);
      expect((await app.db('api_tokens').where('user_id', editor.id).first()).last_used_at).not.to.equal(null);

      const boss = await buildServiceAccount(app, { role: 'Admin' });
      const bossKey = (await buildToken(app, boss)).key;
      const created = await app.request('POST', '/api/serviceaccounts', { token: bossKey, body: { name: 'child', role: 'Editor' } });
      expect(created.status).to.equal(201);
      const [entry] = await auditEntries(app, 'service_account.created');
      expect(entry).to.include({ actor_type: 'service_account', actor_id: boss.id });
    });

    it('stop working once revoked or expired', async () => {
      const account = await buildServiceAccount(app, { role: 'Viewer' });
      const revoked = await buildToken(app, account);
      const res = await app.request('DELETE', `/api/serviceaccounts/${account.id}/tokens/${revoked.id}`, { cookie: admin.cookie });
      expect(res.status).to.equal(200);
      expect((await app.request('GET', '/api/user', { token: revoked.key })).status).to.equal(401);
      expect((await app.request('GET', `/api/serviceaccounts/${account.id}/tokens`, { cookie: admin.cookie })).body.tokens[0].isRevoked).to.equal(true);
      expect(await app.count('audit_log', { action: 'service_account.token_revoked', target_id: revoked.id })).to.equal(1);
      // Revoking again changes nothing and records nothing.
      expect((await app.request('DELETE', `/api/serviceaccounts/${account.id}/tokens/${revoked.id}`, { cookie: admin.cookie })).status).to.equal(200);
      expect(await app.count('audit_log', { action: 'service_account.token_revoked' })).to.equal(1);

      const issued = await app.request('POST', `/api/serviceaccounts/${account.id}/tokens`, {
        cookie: admin.cookie,
        body: { name: 'brief', secondsToLive: 60 },
      });
      app.clock.advance(59_000);
      expect((await app.request('GET', '/api/user', { token: issued.body.key })).status).to.equal(200);
      app.clock.advance(1_000);
      expect((await app.request('GET', '/api/user', { token: issued.body.key })).status).to.equal(401);
    });

    it("are pinned to the account's org: naming another org is refused", async () => {
      const orgId = await createOrg(app);
      const account = await buildServiceAccount(app, { orgId, role: 'Admin' });
      const { key } = await buildToken(app, account);
      const own = await app.request('GET', '/api/serviceaccounts/search', { token: key, headers: { 'x-svc-org-id': orgId } });
      expect(own.status).to.equal(200);
      expect(own.body.serviceAccounts.map((a: { id: string }) => a.id)).to.deep.equal([account.id]);
      // Without a header it acts in its own org, not in org_main.
      expect((await app.request('GET', '/api/serviceaccounts/search', { token: key })).body.totalCount).to.equal(1);
      const header = await app.request('GET', '/api/serviceaccounts/search', { token: key, headers: { 'x-svc-org-id': 'org_main' } });
      expect(header.status).to.equal(403);
      expect(header.body.message).to.include(`only act in org ${orgId}`);
      expect((await app.request('GET', '/api/serviceaccounts/search?orgId=org_main', { token: key })).status).to.equal(403);
    });
  });

  describe('quotas', () => {
    it('QUOTA_SERVICE_ACCOUNTS_PER_ORG holds exactly under 10 concurrent creates', async () => {
      await app.close();
      app = await startTestApp({ env: { QUOTA_SERVICE_ACCOUNTS_PER_ORG: '3' } });
      admin = await createUser(app, { role: 'Admin' });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(admin.cookie, { name: `bot ${i}`, role: 'Viewer' })));
      expect(results.filter((r) => r.status === 201)).to.have.length(3);
      const refused = results.filter((r) => r.status !== 201);
      expect(refused.map((r) => r.status)).to.deep.equal(Array(7).fill(403));
      expect(refused[0]!.body.message).to.match(/quota exceeded for service_accounts/);
      expect(await app.count('users', { is_service_account: true })).to.equal(3);
      // Another org has its own count.
      const orgId = await createOrg(app);
      await addMember(app, orgId, admin.id, 'Admin');
      expect((await create(admin.cookie, { name: 'bot 0', role: 'Viewer' }, { 'x-svc-org-id': orgId })).status).to.equal(201);
    });

    it('QUOTA_API_KEYS_PER_SA counts the live tokens of each account, exactly under 10 concurrent issues', async () => {
      await app.close();
      app = await startTestApp({ env: { QUOTA_API_KEYS_PER_SA: '2' } });
      admin = await createUser(app, { role: 'Admin' });
      const account = await buildServiceAccount(app);
      const issue = (id: string, name: string, body: object = {}) =>
        app.request('POST', `/api/serviceaccounts/${id}/tokens`, { cookie: admin.cookie, body: { name, ...body } });
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
      await app.request('DELETE', `/api/serviceaccounts/${account.id}/tokens/${first}`, { cookie: admin.cookie });
      expect((await issue(account.id, 'after revoke')).status).to.equal(201);
    });
  });
});
