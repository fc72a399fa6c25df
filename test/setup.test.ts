import { expect } from 'chai';
import { sha256Hex } from '../src/crypto/tokens.ts';
import { auditEntries, createUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const ADMIN = { name: 'Ada Admin', login: 'ada', email: 'ada@example.test', password: 'a-long-enough-password' };

describe('setup and the first administrator', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('reports the setup state before anything exists', async () => {
    const res = await app.request('GET', '/api/setup/config');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ adminExists: false, complete: false });
  });

  it('creates the first admin as server admin and Admin of org_main, with a session cookie', async () => {
    const res = await app.request('POST', '/api/setup/admin', { body: ADMIN });
    expect(res.status).to.equal(201);
    expect(res.body).to.have.keys('userId', 'orgId');
    expect(res.body.orgId).to.equal('org_main');
    const cookie = res.setCookie.find((c) => c.startsWith('svc_session='))!;
    expect(cookie)
      .to.match(/httponly/i)
      .and.match(/samesite=lax/i)
      .and.match(/path=\//i);

    const user = await app.db('users').where('id', res.body.userId).first();
    expect(user.login).to.equal('ada');
    expect(!!user.is_svc_admin).to.equal(true);
    expect(user.password_hash).to.match(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    const membership = await app.db('org_members').where({ user_id: res.body.userId, org_id: 'org_main' }).first();
    expect(membership.role).to.equal('Admin');

    const session = await app.db('sessions').where('user_id', res.body.userId).first();
    const cookieValue = res.cookies.svc_session!;
    const token = cookieValue.split('.')[0]!;
    expect(session.token_hash).to.equal(sha256Hex(token));

    const me = await app.request('GET', '/api/user', { cookie: `svc_session=${cookieValue}` });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ login: 'ada', email: 'ada@example.test', isSvcAdmin: true, orgId: 'org_main' });

    const actions = (await app.db('audit_log').select('action', 'outcome', 'target_id')).map((e: { action: string }) => e.action);
    expect(actions).to.include.members(['user.created', 'setup.admin_created', 'user.login']);
    // the first admin signs in as every login does: seen at its session's start, audited as itself with the method
    expect(Number(user.last_seen_at)).to.equal(Number(session.created_at));
    const [login] = await auditEntries(app, 'user.login');
    expect(login).to.deep.include({
      actor_type: 'user',
      actor_id: res.body.userId,
      actor_name: 'ada',
      org_id: 'org_main',
      target_type: 'session',
      target_id: session.id,
    });
    expect(login!.metadata).to.deep.equal({ method: 'setup' });
    const raw = JSON.stringify(await app.db('audit_log').select('*'));
    expect(raw).not.to.include(ADMIN.password);
    expect(raw).not.to.include(token);
    expect(raw).not.to.include(user.password_hash);
  });

  it('uses the email as login when none is given', async () => {
    const res = await app.request('POST', '/api/setup/admin', { body: { name: 'B', email: 'Bee@Example.test', password: 'another-long-password' } });
    expect(res.status).to.equal(201);
    const user = await app.db('users').where('id', res.body.userId).first();
    expect(user.login).to.equal('bee@example.test');
  });

  it('returns 409 once any user exists, and records the refused attempt', async () => {
    await createUser(app);
    const res = await app.request('POST', '/api/setup/admin', { body: ADMIN });
    expect(res.status).to.equal(409);
    expect(res.body.message)
      .to.be.a('string')
      .and.match(/already/);
    const failure = await app.db('audit_log').where({ action: 'setup.admin_created', outcome: 'failure' }).first();
    expect(failure).to.exist;
  });

  it('creates exactly one admin when 20 requests race', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.request('POST', '/api/setup/admin', { body: { ...ADMIN, login: `racer${i}`, email: `racer${i}@example.test` } }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(19);
    expect(await app.count('users')).to.equal(1);
  });

  for (const [label, body, pattern] of [
    ['a password under 12 characters', { ...ADMIN, password: 'short-pass' }, /password/],
    ['a missing email', { name: 'x', password: 'a-long-enough-password' }, /email is required/],
    ['a missing name', { email: 'a@b.c', password: 'a-long-enough-password' }, /name is required/],
    ['a wrong type', { ...ADMIN, name: 42 }, /name must be string/],
    ['an unknown field', { ...ADMIN, isSvcAdmin: false }, /isSvcAdmin is not allowed/],
    ['a malformed email', { ...ADMIN, email: 'not-an-email' }, /email/],
  ] as const) {
    it(`rejects ${label} with 400 and writes nothing`, async () => {
      const res = await app.request('POST', '/api/setup/admin', { body });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(pattern);
      expect(await app.count('users')).to.equal(0);
    });
  }

  describe('platform settings and completion', () => {
    const settings = {
      llm: { provider: 'openai-compatible', model: 'm-1', baseUrl: 'https://llm.example.test', apiKey: 'sk-very-secret' },
      notifications: { email: 'ops@example.test' },
    };

    it('are open before the first admin exists', async () => {
      const res = await app.request('POST', '/api/setup/config', { body: settings });
      expect(res.status).to.equal(200);
      expect(res.body.settings.llm).to.deep.equal({ provider: 'openai-compatible', model: 'm-1', baseUrl: 'https://llm.example.test', apiKeySet: true });
    });

    it('then need a server admin: 401 anonymous, 403 for an org admin, 200 for the server admin', async () => {
      const created = await app.request('POST', '/api/setup/admin', { body: ADMIN });
      const adminCookie = `svc_session=${created.cookies.svc_session}`;
      const orgAdmin = await createUser(app, { role: 'Admin' });

      expect((await app.request('POST', '/api/setup/config', { body: settings })).status).to.equal(401);
      expect((await app.request('POST', '/api/setup/config', { body: settings, cookie: orgAdmin.cookie })).status).to.equal(403);
      const saved = await app.request('POST', '/api/setup/config', { body: settings, cookie: adminCookie });
      expect(saved.status).to.equal(200);
      expect(JSON.stringify(saved.body)).not.to.include('sk-very-secret');

      const stored = await app.db('settings').where('key', 'platform').first();
      expect(stored.value).not.to.include('sk-very-secret');
      expect(app.services.secretBox.open(JSON.parse(stored.value).llm.apiKeySealed)).to.equal('sk-very-secret');

      expect((await app.request('POST', '/api/setup/complete', { cookie: orgAdmin.cookie })).status).to.equal(403);
      const done = await app.request('POST', '/api/setup/complete', { cookie: adminCookie });
      expect(done.status).to.equal(200);
      expect(done.body.complete).to.equal(true);
      expect((await app.request('GET', '/api/setup/config', { cookie: adminCookie })).body).to.include({ adminExists: true, complete: true });
      const audit = await app.db('audit_log').whereIn('action', ['setup.config_saved', 'setup.completed']).select('action');
      expect(audit.map((a: { action: string }) => a.action)).to.have.members(['setup.config_saved', 'setup.completed']);
    });

    it('are shown to anyone while setup is open', async () => {
      await app.request('POST', '/api/setup/config', { body: settings });
      const res = await app.request('GET', '/api/setup/config');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ adminExists: false, complete: false, completedAt: null });
      expect(res.body.settings.llm).to.deep.equal({ provider: 'openai-compatible', model: 'm-1', baseUrl: 'https://llm.example.test', apiKeySet: true });
    });

    it('once an admin exists, GET shows anyone but a server admin only that setup is closed', async () => {
      await app.request('POST', '/api/setup/config', { body: settings });
      const created = await app.request('POST', '/api/setup/admin', { body: ADMIN });
      const adminCookie = `svc_session=${created.cookies.svc_session}`;
      const orgAdmin = await createUser(app, { role: 'Admin' });
      expect((await app.request('POST', '/api/setup/complete', { cookie: adminCookie })).status).to.equal(200);

      for (const cookie of [undefined, orgAdmin.cookie]) {
        const res = await app.request('GET', '/api/setup/config', { cookie });
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal({ adminExists: true });
      }
      const shown = await app.request('GET', '/api/setup/config', { cookie: adminCookie });
      expect(shown.body).to.include({ adminExists: true, complete: true });
      expect(shown.body.settings.llm).to.include({ model: 'm-1', apiKeySet: true });
    });

    it('keeps the stored API key when a later save omits it', async () => {
      await app.request('POST', '/api/setup/config', { body: settings });
      const res = await app.request('POST', '/api/setup/config', { body: { llm: { provider: 'other' } } });
      expect(res.body.settings.llm).to.include({ provider: 'other', apiKeySet: true });
    });

    it('rejects unknown sections and bad URLs with 400', async () => {
      expect((await app.request('POST', '/api/setup/config', { body: { smtp: {} } })).status).to.equal(400);
      expect((await app.request('POST', '/api/setup/config', { body: { llm: { baseUrl: 'ftp://x' } } })).status).to.equal(400);
    });
  });
});
