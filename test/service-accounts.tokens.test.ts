/** Service account tokens (`/api/serviceaccounts/:id/tokens`): issuing, authenticating with, revoking them. */
import { expect } from 'chai';
import { sha256Hex } from '../src/crypto/tokens.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, buildServiceAccount, buildToken, createOrg, createUser, type TestUser } from './helpers/factories.ts';

describe('service accounts', () => {
  let app: TestApp;
  let admin: TestUser;
  beforeEach(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
  });
  afterEach(async () => {
    await app.close();
  });

  describe('tokens', () => {
    it('are svc_sa_ + base64url of 32 bytes, shown once, stored hashed and pinned to the org, listed as metadata', async () => {
      const account = await buildServiceAccount(app);
      const res = await api(app, admin).post(`/api/serviceaccounts/${account.id}/tokens`, { name: 'deploy' });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('id', 'name', 'key');
      expect(res.body.key).to.match(/^svc_sa_[A-Za-z0-9_-]{43}$/);
      const row = await app.db('api_tokens').where('id', res.body.id).first();
      expect(row).to.include({ kind: 'sa', user_id: account.id, org_id: 'org_main', name: 'deploy', token_hash: sha256Hex(res.body.key), expires_at: null });
      const listed = await api(app, admin).get(`/api/serviceaccounts/${account.id}/tokens`);
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
      const issue = (id: string, body: unknown) => api(app, admin).post(`/api/serviceaccounts/${id}/tokens`, body);
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
      expect((await api(app, admin).get('/api/serviceaccounts/usr_missing/tokens')).status).to.equal(404);
      expect((await api(app, admin).delete(`/api/serviceaccounts/${account.id}/tokens/tok_missing`)).status).to.equal(404);
      // A token is revoked only through its own account.
      expect((await api(app, admin).delete(`/api/serviceaccounts/${other.id}/tokens/${first.body.id}`)).status).to.equal(404);
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
      const res = await api(app, admin).delete(`/api/serviceaccounts/${account.id}/tokens/${revoked.id}`);
      expect(res.status).to.equal(200);
      expect((await app.request('GET', '/api/user', { token: revoked.key })).status).to.equal(401);
      expect((await api(app, admin).get(`/api/serviceaccounts/${account.id}/tokens`)).body.tokens[0].isRevoked).to.equal(true);
      expect(await app.count('audit_log', { action: 'service_account.token_revoked', target_id: revoked.id })).to.equal(1);
      // Revoking again changes nothing and records nothing.
      expect((await api(app, admin).delete(`/api/serviceaccounts/${account.id}/tokens/${revoked.id}`)).status).to.equal(200);
      expect(await app.count('audit_log', { action: 'service_account.token_revoked' })).to.equal(1);

      const issued = await api(app, admin).post(`/api/serviceaccounts/${account.id}/tokens`, { name: 'brief', secondsToLive: 60 });
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
});
