import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.ts';
import { sha256Hex } from '../src/crypto/tokens.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, assignRole, auditEntries, buildServiceAccount, buildToken, createOrg, createUser, type TestUser } from './helpers/factories.ts';

const CI_KEY = 'legacy-ci-key-0123456789';
const RO_KEY = 'readonly:key:with:colons';
const API_KEYS = `ci:Editor:${CI_KEY}, reports:viewer:${RO_KEY}`;

describe('API_KEYS', () => {
  const base = { NODE_ENV: 'test', SECRET_KEY: 's'.repeat(32), JWT_SECRET: 'j'.repeat(32) };

  it('parses <name>:<role>:<key> entries (the key may hold colons, the role any case)', () => {
    expect(loadConfig(base).apiKeys).to.deep.equal([]);
    expect(loadConfig({ ...base, API_KEYS }).apiKeys).to.deep.equal([
      { name: 'ci', role: 'Editor', key: CI_KEY },
      { name: 'reports', role: 'Viewer', key: RO_KEY },
    ]);
  });

  it('refuses an invalid entry at startup, naming the entry but never its key', () => {
    const cases: Array<[string, RegExp]> = [
      ['ci:Editor:short', /entry 1 \("ci"\): the key must be at least 16 characters/],
      [`ci:Owner:${CI_KEY}`, /entry 1 \("ci"\): the role must be Admin, Editor or Viewer/],
      [`ci:${CI_KEY}`, /entry 1 \("ci"\)/],
      [`bad name:Viewer:${CI_KEY}`, /entry 1: expected <name>:<role>:<key>/],
      [`:Viewer:${CI_KEY}`, /entry 1: expected/],
      [`ok:Viewer:${RO_KEY},ci:Viewer:svc_sa_${CI_KEY}`, /entry 2 \("ci"\): the key must not start with svc_/],
      [`ci:Viewer:${CI_KEY},ci:Admin:${RO_KEY}`, /entry 2 \("ci"\): the name is used by an earlier entry/],
      [`ci:Viewer:${CI_KEY},other:Admin:${CI_KEY}`, /entry 2 \("other"\): the key is used by an earlier entry/],
    ];
    for (const [value, message] of cases) {
      let error: unknown;
      try {
        loadConfig({ ...base, API_KEYS: value });
      } catch (err) {
        error = err;
      }
      expect(error, value).to.be.instanceOf(ConfigError);
      expect((error as Error).message, value)
        .to.match(/^API_KEYS /)
        .and.match(message);
      expect((error as Error).message)
        .not.to.include(CI_KEY)
        .and.not.to.include(RO_KEY);
    }
  });
});

describe('legacy API keys', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  let serverAdmin: TestUser;
  beforeEach(async () => {
    app = await startTestApp({ env: { API_KEYS } });
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    serverAdmin = await createUser(app, { role: 'Admin', svcAdmin: true });
  });
  afterEach(async () => {
    await app.close();
  });

  const migrate = (cookie?: string) => app.request('POST', '/api/serviceaccounts/migrate', { cookie });

  describe('POST /api/serviceaccounts/migrate', () => {
    it('is 401 without credentials and 403 for anyone but a server admin (an org admin too)', async () => {
      expect((await migrate()).status).to.equal(401);
      expect((await migrate(viewer.cookie)).status).to.equal(403);
      expect((await migrate(admin.cookie)).status).to.equal(403);
      const account = await buildServiceAccount(app, { role: 'Admin' });
      expect((await app.request('POST', '/api/serviceaccounts/migrate', { token: (await buildToken(app, account)).key })).status).to.equal(403);
      expect(await app.count('users', { is_service_account: true })).to.equal(1);
    });

    it('turns each entry into a hidden account legacy-<name> of org_main holding the very key', async () => {
      const res = await migrate(serverAdmin.cookie);
      expect(res.status).to.equal(200);
      expect(res.body.migrated).to.have.length(2);
      const [ci, reports] = res.body.migrated;
      expect(ci).to.deep.equal({ name: 'ci', serviceAccountId: ci.serviceAccountId, tokenId: ci.tokenId, created: true });
      expect(reports).to.include({ name: 'reports', created: true });

      const account = await app.db('users').where('id', ci.serviceAccountId).first();
      expect(account).to.include({ name: 'legacy-ci', login: 'sa-legacy-ci', email: null, password_hash: null });
      expect(!!account.is_service_account && !!account.is_hidden).to.equal(true);
      expect(await app.db('org_members').where('user_id', ci.serviceAccountId).select('org_id', 'role')).to.deep.equal([
        { org_id: 'org_main', role: 'Editor' },
      ]);
      expect(await app.db('api_tokens').where('id', ci.tokenId).first()).to.include({
        kind: 'sa',
        user_id: ci.serviceAccountId,
        org_id: 'org_main',
        name: 'ci',
        token_hash: sha256Hex(CI_KEY),
        expires_at: null,
      });

      const entries = (await auditEntries(app, 'api_key.migrated')).sort((a, b) => a.target_name!.localeCompare(b.target_name!));
      expect(entries.map((e) => [e.actor_id, e.org_id, e.target_type, e.target_id, e.target_name])).to.deep.equal([
        [serverAdmin.id, 'org_main', 'api_key', ci.tokenId, 'ci'],
        [serverAdmin.id, 'org_main', 'api_key', reports.tokenId, 'reports'],
      ]);
      expect(entries[0]!.metadata).to.deep.equal({ serviceAccountId: ci.serviceAccountId, role: 'Editor', source: 'API_KEYS' });
      const audit = JSON.stringify(await app.db('audit_log').select('*'));
      expect(audit).not.to.include(CI_KEY).and.not.to.include(sha256Hex(CI_KEY));

      // Hidden from the service-account listing, present in the legacy key listing.
      expect((await app.request('GET', '/api/serviceaccounts/search', { cookie: admin.cookie })).body.totalCount).to.equal(0);
      expect((await app.request('GET', '/api/auth/keys', { cookie: admin.cookie })).body).to.deep.equal({
        totalCount: 2,
        keys: [
          { id: ci.tokenId, name: 'ci', role: 'Editor', expiration: null },
          { id: reports.tokenId, name: 'reports', role: 'Viewer', expiration: null },
        ],
        page: 1,
        perPage: 100,
      });
    });

    it('is idempotent: a second run reports created false and writes nothing', async () => {
      const first = (await migrate(serverAdmin.cookie)).body.migrated;
      const counts = async () => [await app.count('users'), await app.count('api_tokens'), await app.count('org_members'), await app.count('audit_log')];
      const before = await counts();
      const second = await migrate(serverAdmin.cookie);
      expect(second.status).to.equal(200);
      expect(second.body.migrated).to.deep.equal(first.map((m: object) => ({ ...m, created: false })));
      expect(await counts()).to.deep.equal(before);
    });

    it('leaves a key revoked since then revoked, and refuses a changed key while the old one is held', async () => {
      const [ci] = (await migrate(serverAdmin.cookie)).body.migrated;
      await app.request('DELETE', `/api/serviceaccounts/${ci.serviceAccountId}/tokens/${ci.tokenId}`, { cookie: admin.cookie });
      expect((await migrate(serverAdmin.cookie)).body.migrated[0]).to.include({ tokenId: ci.tokenId, created: false });
      expect((await app.request('GET', '/api/user', { token: CI_KEY })).status).to.equal(401);

      await app.close();
      app = await startTestApp({ env: { API_KEYS: 'ci:Editor:a-rotated-key-0123456789' } });
      const operator = await createUser(app, { role: 'Admin', svcAdmin: true });
      expect((await app.request('POST', '/api/serviceaccounts/migrate', { cookie: operator.cookie })).status).to.equal(200);
    });

    it('refuses (409) an entry whose legacy-<name> is an ordinary service account', async () => {
      await buildServiceAccount(app, { name: 'legacy-ci' });
      const res = await migrate(serverAdmin.cookie);
      expect(res.status).to.equal(409);
      expect(res.body.message).to.match(/legacy-ci exists and is not the account of a legacy API key/);
      expect(await app.count('api_tokens')).to.equal(0);
    });

    it('with no API_KEYS migrates nothing', async () => {
      await app.close();
      app = await startTestApp();
      const operator = await createUser(app, { role: 'Admin', svcAdmin: true });
      const res = await app.request('POST', '/api/serviceaccounts/migrate', { cookie: operator.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ migrated: [] });
    });
  });

  describe('a migrated key', () => {
    it('authenticates as Bearer and as X-Api-Key with its role, pinned to org_main', async () => {
      expect((await app.request('GET', '/api/user', { token: CI_KEY })).status).to.equal(401);
      const [ci] = (await migrate(serverAdmin.cookie)).body.migrated;
      const me = await app.request('GET', '/api/user', { token: CI_KEY });
      expect(me.status).to.equal(200);
      expect(me.body.id).to.equal(ci.serviceAccountId);
      const permissions = await app.request('GET', '/api/user/permissions', { headers: { 'x-api-key': CI_KEY } });
      expect(permissions.status).to.equal(200);
      expect(permissions.body).to.have.property('dashboards:write');
      expect((await app.request('GET', '/api/user/permissions', { token: RO_KEY })).body).not.to.have.property('dashboards:write');
      const orgId = await createOrg(app);
      expect((await app.request('GET', '/api/user/permissions', { token: CI_KEY, headers: { 'x-svc-org-id': orgId } })).status).to.equal(403);
    });

    it('stops with its account disabled; unknown and short keys are 401', async () => {
      const [ci] = (await migrate(serverAdmin.cookie)).body.migrated;
      await app.request('PATCH', `/api/serviceaccounts/${ci.serviceAccountId}`, { cookie: admin.cookie, body: { isDisabled: true } });
      expect((await app.request('GET', '/api/user', { token: CI_KEY })).status).to.equal(401);
      expect((await app.request('GET', '/api/user', { token: 'an-unknown-legacy-key-0123' })).status).to.equal(401);
      expect((await app.request('GET', '/api/user', { token: 'short' })).status).to.equal(401);
    });
  });

  describe('/api/auth/keys', () => {
    const createKey = (cookie: string, body: unknown, headers: Record<string, string> = {}) => app.request('POST', '/api/auth/keys', { cookie, body, headers });

    it('is 401 without credentials and 403 for a Viewer', async () => {
      const [ci] = (await migrate(serverAdmin.cookie)).body.migrated;
      for (const [method, path, body] of [
        ['GET', '/api/auth/keys', undefined],
        ['POST', '/api/auth/keys', { name: 'x', role: 'Viewer' }],
        ['DELETE', `/api/auth/keys/${ci.tokenId}`, undefined],
      ] as const) {
        expect((await app.request(method, path, { body })).status, `${method} ${path}`).to.equal(401);
        const res = await app.request(method, path, { body, cookie: viewer.cookie });
        expect(res.status, `${method} ${path} as a Viewer`).to.equal(403);
      }
      expect((await app.request('GET', '/api/user', { token: CI_KEY })).status).to.equal(200);
    });

    it('POST provisions a hidden account legacy-<name> in the active org with a svc_sa_ key', async () => {
      const res = await createKey(admin.cookie, { name: 'grafana-agent', role: 'Editor', secondsToLive: 3600 });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('id', 'name', 'key');
      expect(res.body).to.include({ name: 'grafana-agent' });
      expect(res.body.key).to.match(/^svc_sa_[A-Za-z0-9_-]{43}$/);
      const token = await app.db('api_tokens').where('id', res.body.id).first();
      expect(token).to.include({
        kind: 'sa',
        org_id: 'org_main',
        name: 'grafana-agent',
        token_hash: sha256Hex(res.body.key),
        expires_at: app.clock.now() + 3_600_000,
      });
      const account = await app.db('users').where('id', token.user_id).first();
      expect(account).to.include({ name: 'legacy-grafana-agent', login: 'sa-legacy-grafana-agent' });
      expect(!!account.is_hidden).to.equal(true);
      expect((await app.request('GET', '/api/user/permissions', { token: res.body.key })).body).to.have.property('dashboards:write');
      const [entry] = await auditEntries(app, 'api_key.created');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_type: 'api_key', target_id: res.body.id, target_name: 'grafana-agent' });
      expect(entry!.metadata).to.deep.equal({ serviceAccountId: account.id, role: 'Editor', secondsToLive: 3600 });
      expect(JSON.stringify(await app.db('audit_log').select('*'))).not.to.include(res.body.key);
    });

    it("POST refuses bad input (400), an existing key name (409), a role stronger than the caller's (403), and holds the quotas", async () => {
      for (const body of [
        {},
        { name: 'x' },
        { role: 'Viewer' },
        { name: 'x', role: 'None' },
        { name: '', role: 'Viewer' },
        { name: 'x', role: 'Viewer', secondsToLive: 0 },
        { name: 'x', role: 'Viewer', extra: 1 },
      ]) {
        expect((await createKey(admin.cookie, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await createKey(admin.cookie, { name: 'dup', role: 'Viewer' })).status).to.equal(201);
      const duplicate = await createKey(admin.cookie, { name: 'dup', role: 'Admin' });
      expect(duplicate.status).to.equal(409);
      expect(duplicate.body.message).to.match(/an API key named "dup" already exists/);

      const editor = await createUser(app, { role: 'Editor' });
      await assignRole(app, 'org_main', editor.id, 'fixed:serviceaccounts:writer');
      expect((await createKey(editor.cookie, { name: 'by-editor', role: 'Editor' })).status).to.equal(201);
      expect((await createKey(editor.cookie, { name: 'too-strong', role: 'Admin' })).status).to.equal(403);

      await app.close();
      app = await startTestApp({ env: { QUOTA_SERVICE_ACCOUNTS_PER_ORG: '1' } });
      const owner = await createUser(app, { role: 'Admin' });
      expect((await createKey(owner.cookie, { name: 'one', role: 'Viewer' })).status).to.equal(201);
      const refused = await createKey(owner.cookie, { name: 'two', role: 'Viewer' });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(/quota exceeded for service_accounts/);
    });

    it('POST replaces a leftover account whose keys have all expired', async () => {
      const first = await createKey(admin.cookie, { name: 'nightly', role: 'Viewer', secondsToLive: 60 });
      app.clock.advance(61_000);
      const second = await createKey(admin.cookie, { name: 'nightly', role: 'Editor' });
      expect(second.status).to.equal(201);
      expect(await app.count('api_tokens', { id: first.body.id })).to.equal(0);
      expect(await app.count('users', { name: 'legacy-nightly' })).to.equal(1);
      expect((await app.request('GET', '/api/user/permissions', { token: second.body.key })).body).to.have.property('dashboards:write');
    });

    it("GET lists the active org's live legacy keys; expired ones with includeExpired=true", async () => {
      const orgId = await createOrg(app);
      await addMember(app, orgId, admin.id, 'Admin');
      const ci = (await migrate(serverAdmin.cookie)).body.migrated[0];
      const brief = await createKey(admin.cookie, { name: 'brief', role: 'Viewer', secondsToLive: 60 });
      await createKey(admin.cookie, { name: 'elsewhere', role: 'Viewer' }, { 'x-svc-org-id': orgId });
      await buildServiceAccount(app).then((account) => buildToken(app, account));

      const names = async (query = '', headers: Record<string, string> = {}) =>
        ((await app.request('GET', `/api/auth/keys${query}`, { cookie: admin.cookie, headers })).body.keys as Array<{ name: string }>).map((k) => k.name);
      expect(await names()).to.deep.equal(['brief', 'ci', 'reports']);
      const listed = (await app.request('GET', '/api/auth/keys', { cookie: admin.cookie })).body.keys;
      expect(listed[0]).to.deep.equal({ id: brief.body.id, name: 'brief', role: 'Viewer', expiration: new Date(app.clock.now() + 60_000).toISOString() });
      app.clock.advance(61_000);
      expect(await names()).to.deep.equal(['ci', 'reports']);
      expect(await names('?includeExpired=true')).to.deep.equal(['brief', 'ci', 'reports']);
      expect(await names('', { 'x-svc-org-id': orgId })).to.deep.equal(['elsewhere']);
      expect(await names(`?orgId=${orgId}`)).to.deep.equal(['elsewhere']);
      await app.request('DELETE', `/api/auth/keys/${ci.tokenId}`, { cookie: admin.cookie });
      expect(await names()).to.deep.equal(['reports']);
      expect((await app.request('GET', '/api/auth/keys?includeExpired=maybe', { cookie: admin.cookie })).status).to.equal(400);
    });

    it('DELETE revokes the key and removes its hidden account once it holds no live key', async () => {
      const created = await createKey(admin.cookie, { name: 'temp', role: 'Viewer' });
      const accountId = (await app.db('api_tokens').where('id', created.body.id).first()).user_id;
      const res = await app.request('DELETE', `/api/auth/keys/${created.body.id}`, { cookie: admin.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'API key deleted' });
      expect((await app.request('GET', '/api/user', { token: created.body.key })).status).to.equal(401);
      expect(await app.count('users', { id: accountId })).to.equal(0);
      expect(await app.count('api_tokens', { user_id: accountId })).to.equal(0);
      const [entry] = await auditEntries(app, 'api_key.deleted');
      expect(entry).to.include({ actor_id: admin.id, org_id: 'org_main', target_type: 'api_key', target_id: created.body.id, target_name: 'temp' });
      expect(entry!.metadata).to.deep.equal({ serviceAccountId: accountId, serviceAccountDeleted: true });
      expect((await app.request('DELETE', `/api/auth/keys/${created.body.id}`, { cookie: admin.cookie })).status).to.equal(404);
    });

    it('DELETE finds only legacy keys of the active org (404 otherwise)', async () => {
      const ordinary = await buildToken(app, await buildServiceAccount(app));
      expect((await app.request('DELETE', `/api/auth/keys/${ordinary.id}`, { cookie: admin.cookie })).status).to.equal(404);
      expect((await app.request('DELETE', '/api/auth/keys/tok_missing', { cookie: admin.cookie })).status).to.equal(404);
      const orgId = await createOrg(app);
      await addMember(app, orgId, admin.id, 'Admin');
      const foreign = await createKey(admin.cookie, { name: 'foreign', role: 'Viewer' }, { 'x-svc-org-id': orgId });
      expect((await app.request('DELETE', `/api/auth/keys/${foreign.body.id}`, { cookie: admin.cookie })).status).to.equal(404);
      expect((await app.request('GET', '/api/user', { token: ordinary.key })).status).to.equal(200);
      expect((await app.request('GET', '/api/user', { token: foreign.body.key })).status).to.equal(200);
    });
  });
});
