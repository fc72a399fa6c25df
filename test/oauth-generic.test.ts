/**
 * Generic OpenID Connect login against a real provider (oidc-provider in process): the full code
 * flow, the state cookie and its failures, the identity rules (found by issuer and subject, no
 * email linking by default, unverified emails never kept, sign-up on and off, disabled users), and tampered ID tokens from an issuer
 * whose token endpoint answers what the test made.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, buildAuthLink, buildOrg, buildUser } from './helpers/factories.ts';
import { startFakeIssuer, type FakeIssuer, type IdTokenPlan } from './helpers/fake-issuer.ts';
import { CLIENT_ID, CLIENT_SECRET, loginAtProvider, startOidcProvider, type TestOidcProvider } from './helpers/oidc-provider.ts';

const genericEnv = (issuer: string, extra: Record<string, string> = {}) => ({
  OAUTH_GENERIC_CLIENT_ID: CLIENT_ID,
  OAUTH_GENERIC_CLIENT_SECRET: CLIENT_SECRET,
  OAUTH_GENERIC_ISSUER_URL: issuer,
  ...extra,
});

/** The login page the browser lands on after a failure, and its message. */
function loginPageError(response: { status: number; headers: Headers }): string | null {
  expect(response.status).to.equal(302);
  const location = new URL(response.headers.get('location')!, 'http://service');
  expect(location.pathname).to.equal('/login');
  return location.searchParams.get('error');
}

const sessionCookieOf = (response: { setCookie: string[] }) => response.setCookie.find((cookie) => /^svc_session=[^;]/.test(cookie))?.split(';')[0];

async function lastFailure(app: TestApp) {
  const failures = await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' });
  return failures.at(-1)!;
}

describe('generic OIDC login', () => {
  let idp: TestOidcProvider;
  let app: TestApp;
  let accountSequence = 0;

  /** A provider account with these claims (email verified unless said otherwise). */
  function account(claims: Record<string, unknown> = {}): string {
    accountSequence += 1;
    const sub = `account-${accountSequence}`;
    idp.accounts.set(sub, { email: `${sub}@idp.example`, email_verified: true, name: `Account ${accountSequence}`, ...claims });
    return sub;
  }

  async function signIn(target: TestApp, sub: string, redirect?: string) {
    const back = await loginAtProvider(target, 'generic', sub, redirect);
    return target.request('GET', back.callbackPath, { cookie: back.stateCookie });
  }

  before(async () => {
    idp = await startOidcProvider();
    app = await startTestApp({ env: genericEnv(idp.issuer, { OAUTH_GENERIC_ALLOW_SIGN_UP: 'true' }) });
    await idp.register(app, 'generic');
  });
  after(async () => {
    await app?.close();
    await idp?.close();
  });

  it('lists generic as enabled and the unconfigured providers as disabled', async () => {
    const { body } = await app.request('GET', '/api/login/providers');
    const enabled = Object.fromEntries(body.map((provider: { id: string; enabled: boolean }) => [provider.id, provider.enabled]));
    expect(enabled).to.include({ local: true, generic: true, workspace: false, codehost: false, saml: false, ldap: false });
  });

  it('sends the browser to the provider with state, nonce and PKCE S256, the state in a short-lived HttpOnly cookie', async () => {
    const start = await app.request('GET', '/api/login/generic');
    expect(start.status).to.equal(302);
    const url = new URL(start.headers.get('location')!);
    expect(url.origin).to.equal(idp.issuer);
    expect(url.searchParams.get('client_id')).to.equal(CLIENT_ID);
    expect(url.searchParams.get('redirect_uri')).to.equal(`${app.url}/api/login/generic/callback`);
    expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(url.searchParams.get('code_challenge')).to.match(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).to.match(/^[\w-]{32,}$/);
    expect(url.searchParams.get('nonce')).to.match(/^[\w-]{32,}$/);
    expect(url.searchParams.get('scope')).to.equal('openid email profile');
    const cookie = start.setCookie.find((c) => c.startsWith('svc_oauth_state='))!;
    expect(cookie)
      .to.match(/; path=\/api\/login\/generic/)
      .and.match(/; httponly/)
      .and.match(/; samesite=lax/)
      .and.match(/; expires=/);
    // The verifier and nonce stay with the browser's cookie, never in the URL.
    expect(start.headers.get('location')).not.to.include('code_verifier');
  });

  it('signs up an unknown user into org_main as Viewer, keeps the redirect, seals the tokens and audits the login', async () => {
    const sub = account({ preferred_username: 'Grace.H', name: 'Grace Hopper' });
    const done = await signIn(app, sub, '/dashboards/d/abc?from=now-1h');
    expect(done.status).to.equal(302);
    expect(done.headers.get('location')).to.equal('/dashboards/d/abc?from=now-1h');
    expect(done.setCookie.find((c) => c.startsWith('svc_oauth_state='))).to.match(/^svc_oauth_state=;/);
    const cookie = sessionCookieOf(done)!;
    const me = await app.request('GET', '/api/user', { cookie });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ login: 'grace.h', email: `${sub}@idp.example`, name: 'Grace Hopper', orgId: 'org_main' });
    expect(me.body.orgs).to.deep.equal([{ orgId: 'org_main', name: 'Main Org.', role: 'Viewer' }]);
    expect(me.body.authLabels).to.deep.equal(['OpenID Connect']);

    const link = await app.db('user_auth_links').where({ auth_module: 'oauth_generic', auth_id: sub }).first();
    expect(link).to.include({ user_id: me.body.id, issuer: idp.issuer, label: 'OpenID Connect' });
    const tokens = JSON.parse(app.services.secretBox.open(link.tokens_sealed));
    expect(tokens.accessToken).to.be.a('string');
    expect(tokens.idToken).to.be.a('string');
    expect(link.tokens_sealed).not.to.include(tokens.accessToken);

    const [created] = await auditEntries(app, { action: 'user.created', target_id: me.body.id });
    expect(created!.metadata).to.deep.equal({ orgRole: 'Viewer', via: 'oauth_generic' });
    const [login] = await auditEntries(app, { action: 'user.login', actor_id: me.body.id });
    expect(login).to.include({ outcome: 'success', org_id: 'org_main', target_type: 'session' });
    expect(login!.metadata).to.deep.equal({ method: 'oauth_generic' });
  });

  it('signs the same identity in again as the same user and refreshes the stored tokens', async () => {
    const sub = account();
    await signIn(app, sub);
    const first = await app.db('user_auth_links').where({ auth_id: sub }).first();
    app.clock.advance(1000);
    const again = await signIn(app, sub);
    expect(again.headers.get('location')).to.equal('/');
    const links = await app.db('user_auth_links').where({ auth_id: sub });
    expect(links).to.have.length(1);
    expect(links[0].tokens_sealed).not.to.equal(first.tokens_sealed);
    expect(await app.count('users', { email: `${sub}@idp.example` })).to.equal(1);
  });

  it('sends the browser to / when the kept redirect leaves the service', async () => {
    const done = await signIn(app, account(), '//evil.example/path');
    expect(done.headers.get('location')).to.equal('/');
  });

  it('never joins an existing account by its email while OAUTH_GENERIC_ALLOW_EMAIL_LINKING is off, and never keeps an unverified email', async () => {
    const existing = await buildUser(app, { email: 'linda@example.org' });
    const verified = account({ email: 'Linda@Example.org' });
    const refused = await signIn(app, verified);
    expect(loginPageError(refused)).to.equal('an account with this email already exists: sign in to it and link OpenID Connect from your profile');
    expect(sessionCookieOf(refused)).to.equal(undefined);
    expect((await lastFailure(app)).metadata).to.deep.equal({ method: 'oauth_generic', reason: 'email linking is off for oauth_generic' });

    // An email the provider did not verify (false, absent, or the string "true") is no email: a new account without one.
    for (const email_verified of [false, undefined, 'true']) {
      const unverified = account({ email: 'LINDA@example.org', email_verified });
      const me = await app.request('GET', '/api/user', { cookie: sessionCookieOf(await signIn(app, unverified))! });
      expect(me.body.id).not.to.equal(existing.id);
      expect(me.body.email).to.equal('');
    }
    expect(await app.count('user_auth_links', { user_id: existing.id })).to.equal(0);
    expect(await auditEntries(app, { action: 'user.auth_link_added', target_id: existing.id })).to.have.length(0);
  });

  it('never links by login: a provider username equal to a local login makes a new user', async () => {
    const local = await buildUser(app, { login: 'margaret' });
    const sub = account({ preferred_username: 'margaret', email: 'margaret@elsewhere.example' });
    const me = await app.request('GET', '/api/user', { cookie: sessionCookieOf(await signIn(app, sub))! });
    expect(me.body.id).not.to.equal(local.id);
    expect(me.body.login).to.match(/^margaret-[0-9a-f]{6}$/);

    // A verified email that is another account's login neither links nor signs up.
    const named = await buildUser(app, { login: 'lee@example.org', email: 'lee.other@example.org' });
    const refused = await signIn(app, account({ email: 'lee@example.org' }));
    expect(loginPageError(refused)).to.equal('an account with this email already exists: sign in to it and link OpenID Connect from your profile');
    expect((await lastFailure(app)).metadata).to.deep.equal({ method: 'oauth_generic', reason: 'the email is the login of another account' });
    expect(await app.count('user_auth_links', { user_id: named.id })).to.equal(0);
  });

  it('keeps identities of different issuers apart: the same subject elsewhere is not this user', async () => {
    const other = await buildUser(app);
    const sub = account({ email: 'carol@elsewhere.example' });
    await app.db('user_auth_links').insert({
      id: 'aul_otherissuer01',
      user_id: other.id,
      auth_module: 'oauth_generic',
      issuer: 'https://another-issuer.example',
      auth_id: sub,
      label: 'OpenID Connect',
      created_at: app.clock.now(),
      updated_at: app.clock.now(),
    });
    const me = await app.request('GET', '/api/user', { cookie: sessionCookieOf(await signIn(app, sub))! });
    expect(me.body.id).not.to.equal(other.id);
    expect(me.body.email).to.equal('carol@elsewhere.example');
  });

  it('refuses a disabled user like any failed login, and audits why', async () => {
    const sub = account({ email: 'dora@example.org' });
    const me = await app.request('GET', '/api/user', { cookie: sessionCookieOf(await signIn(app, sub))! });
    await app.db('users').where('id', me.body.id).update({ is_disabled: true });
    const refused = await signIn(app, sub);
    expect(loginPageError(refused)).to.equal('login failed: this account cannot sign in');
    expect(sessionCookieOf(refused)).to.equal(undefined);
    const failure = await lastFailure(app);
    expect(failure.metadata).to.deep.equal({ method: 'oauth_generic', reason: 'disabled user' });
    expect(failure.target_name).to.equal('dora@example.org');
  });

  describe("the user's login links: /api/user/auth-tokens", () => {
    it('lists the provider link, and never removes the only way in of an account without a password', async () => {
      const sub = account();
      const cookie = sessionCookieOf(await signIn(app, sub))!;
      const listed = await app.request('GET', '/api/user/auth-tokens', { cookie });
      expect(listed.body.totalCount).to.equal(1);
      const [link] = listed.body.authLinks;
      expect(link).to.include({ authModule: 'oauth_generic', label: 'OpenID Connect' });
      expect(link).to.have.all.keys('id', 'authModule', 'label', 'createdAt', 'updatedAt');

      const refused = await app.request('DELETE', `/api/user/auth-tokens/${link.id}`, { cookie });
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.equal('cannot remove the only way you can sign in: this account has no password and no other login');
      expect(await app.count('user_auth_links', { id: link.id })).to.equal(1);
      expect((await app.request('DELETE', '/api/user/auth-tokens/aul_missing', { cookie })).status).to.equal(404);

      // With a second link either may go, but not both.
      const me = await app.request('GET', '/api/user', { cookie });
      const now = app.clock.now();
      await app.db('user_auth_links').insert({
        id: 'aul_second0001',
        user_id: me.body.id,
        auth_module: 'saml',
        issuer: '',
        auth_id: 'nameid-1',
        label: 'SAML',
        created_at: now,
        updated_at: now,
      });
      expect((await app.request('DELETE', `/api/user/auth-tokens/${link.id}`, { cookie })).status).to.equal(200);
      expect((await app.request('DELETE', '/api/user/auth-tokens/aul_second0001', { cookie })).status).to.equal(400);
    });

    it('removes the link of an account that has a password', async () => {
      const user = await buildUser(app, { email: 'haspassword@example.org' });
      await buildAuthLink(app, user.id, { id: 'aul_haspassword01', authId: account() });
      const [link] = (await app.request('GET', '/api/user/auth-tokens', { cookie: user.cookie })).body.authLinks;
      expect((await app.request('DELETE', `/api/user/auth-tokens/${link.id}`, { cookie: user.cookie })).status).to.equal(200);
      expect(await app.count('user_auth_links', { user_id: user.id })).to.equal(0);
    });
  });

  describe('state', () => {
    it('fails without the state cookie', async () => {
      const back = await loginAtProvider(app, 'generic', account());
      const refused = await app.request('GET', back.callbackPath);
      expect(loginPageError(refused)).to.equal('login session expired or invalid: start again');
      expect(sessionCookieOf(refused)).to.equal(undefined);
      expect((await lastFailure(app)).metadata).to.deep.equal({ method: 'oauth_generic', reason: 'state cookie missing' });
    });

    it('fails when the state is not the cookie’s (another login’s cookie)', async () => {
      const back = await loginAtProvider(app, 'generic', account());
      const otherStart = await app.request('GET', '/api/login/generic');
      const otherCookie = otherStart.setCookie.find((c) => c.startsWith('svc_oauth_state='))!.split(';')[0]!;
      const refused = await app.request('GET', back.callbackPath, { cookie: otherCookie });
      expect(loginPageError(refused)).to.equal('login session expired or invalid: start again');
      expect((await lastFailure(app)).metadata!.reason).to.equal('state mismatch');
    });

    it('fails on a replayed callback', async () => {
      const back = await loginAtProvider(app, 'generic', account());
      const first = await app.request('GET', back.callbackPath, { cookie: back.stateCookie });
      expect(sessionCookieOf(first)).to.be.a('string');
      const replay = await app.request('GET', back.callbackPath, { cookie: back.stateCookie });
      expect(loginPageError(replay)).to.equal('OpenID Connect login failed: try again');
      expect(sessionCookieOf(replay)).to.equal(undefined);
      expect((await lastFailure(app)).metadata!.reason).to.match(/grant/i);
    });

    it('fails on a forged or expired state cookie', async () => {
      const back = await loginAtProvider(app, 'generic', account());
      const [name, value] = back.stateCookie.split('=') as [string, string];
      const forged = await app.request('GET', back.callbackPath, { cookie: `${name}=${value.slice(0, -2)}xx` });
      expect(loginPageError(forged)).to.equal('login session expired or invalid: start again');
      expect((await lastFailure(app)).metadata!.reason).to.equal('state cookie invalid');

      app.clock.advance(10 * 60 * 1000 + 1);
      const expired = await app.request('GET', back.callbackPath, { cookie: back.stateCookie });
      expect(loginPageError(expired)).to.equal('login session expired or invalid: start again');
      expect((await lastFailure(app)).metadata!.reason).to.equal('state cookie expired');
    });

    it('fails when the provider answers with an error', async () => {
      const start = await app.request('GET', '/api/login/generic');
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
      const cookie = start.setCookie.find((c) => c.startsWith('svc_oauth_state='))!.split(';')[0]!;
      const refused = await app.request('GET', `/api/login/generic/callback?${new URLSearchParams({ state, error: 'access_denied', iss: idp.issuer })}`, {
        cookie,
      });
      expect(loginPageError(refused)).to.equal('OpenID Connect login failed: try again');
      expect((await lastFailure(app)).metadata!.reason).to.match(/access_denied/);
    });
  });

  describe('sign-up settings', () => {
    it('refuses an unknown user when sign-up is off, and creates nobody', async () => {
      const closed = await startTestApp({ env: genericEnv(idp.issuer) });
      try {
        await idp.register(closed, 'generic');
        const refused = await signIn(closed, account({ email: 'nobody@example.org' }));
        expect(loginPageError(refused)).to.match(/sign-up is disabled/);
        expect(await closed.count('users', { email: 'nobody@example.org' })).to.equal(0);
        expect((await lastFailure(closed)).metadata).to.deep.equal({ method: 'oauth_generic', reason: 'sign-up disabled' });
        // An existing account is not joined by its email either: email linking is off.
        const known = await buildUser(closed, { email: 'known@example.org' });
        expect(sessionCookieOf(await signIn(closed, account({ email: 'known@example.org' })))).to.equal(undefined);
        expect(await closed.count('user_auth_links', { user_id: known.id })).to.equal(0);
      } finally {
        await closed.close();
      }
    });

    it('creates new users in OAUTH_GENERIC_DEFAULT_ORG_ID with OAUTH_GENERIC_DEFAULT_ROLE', async () => {
      const custom = await startTestApp({
        env: genericEnv(idp.issuer, { OAUTH_GENERIC_ALLOW_SIGN_UP: 'true', OAUTH_GENERIC_DEFAULT_ORG_ID: 'org_oauth', OAUTH_GENERIC_DEFAULT_ROLE: 'Editor' }),
      });
      try {
        await idp.register(custom, 'generic');
        const missingOrg = await signIn(custom, account());
        expect(loginPageError(missingOrg)).to.equal('sign-up is misconfigured: ask an administrator');
        await buildOrg(custom, { id: 'org_oauth', name: 'OAuth org' });
        const done = await signIn(custom, account());
        const me = await custom.request('GET', '/api/user', { cookie: sessionCookieOf(done)! });
        expect(me.body.orgs).to.deep.equal([{ orgId: 'org_oauth', name: 'OAuth org', role: 'Editor' }]);
        expect(me.body.isSvcAdmin).to.equal(false);
      } finally {
        await custom.close();
      }
    });
  });

  it('refuses both endpoints of a provider that is not configured', async () => {
    for (const path of ['/api/login/workspace', '/api/login/workspace/callback?code=x&state=y', '/api/login/codehost', '/api/login/codehost/callback']) {
      const response = await app.request('GET', path);
      expect(response.status, path).to.equal(404);
      expect(response.body.message, path).to.match(/^login provider \w+ is not enabled$/);
    }
  });

  describe('tampered ID tokens', () => {
    let fake: FakeIssuer;
    let target: TestApp;

    before(async () => {
      fake = await startFakeIssuer();
      target = await startTestApp({
        env: {
          OAUTH_GENERIC_CLIENT_ID: fake.clientId,
          OAUTH_GENERIC_CLIENT_SECRET: 'fake-secret',
          OAUTH_GENERIC_ISSUER_URL: fake.issuer,
          OAUTH_GENERIC_ALLOW_SIGN_UP: 'true',
        },
      });
    });
    after(async () => {
      await target?.close();
      await fake?.close();
    });

    /** A callback whose code the fake issuer answers with the planned token. */
    async function callbackWith(plan?: IdTokenPlan | ((nonce: string) => IdTokenPlan)) {
      const start = await target.request('GET', '/api/login/generic');
      const url = new URL(start.headers.get('location')!);
      const nonce = url.searchParams.get('nonce')!;
      fake.plan(nonce, typeof plan === 'function' ? plan(nonce) : plan);
      const cookie = start.setCookie.find((c) => c.startsWith('svc_oauth_state='))!.split(';')[0]!;
      const query = new URLSearchParams({ code: 'code-1', state: url.searchParams.get('state')! });
      return target.request('GET', `/api/login/generic/callback?${query}`, { cookie });
    }

    async function expectRefused(plan: IdTokenPlan, reason: RegExp) {
      const refused = await callbackWith(plan);
      expect(loginPageError(refused)).to.equal('OpenID Connect login failed: try again');
      expect(sessionCookieOf(refused)).to.equal(undefined);
      expect((await lastFailure(target)).metadata!.reason).to.match(reason);
    }

    it('accepts the valid token (the control case)', async () => {
      const done = await callbackWith();
      expect(done.headers.get('location')).to.equal('/');
      expect(sessionCookieOf(done)).to.be.a('string');
    });

    it('refuses a token of another issuer', () => expectRefused({ claims: { iss: 'http://127.0.0.1:1/other-issuer' } }, /iss/));
    it('refuses a token for another audience', () => expectRefused({ claims: { aud: 'another-client' } }, /aud/));
    it('refuses a token signed by another key', () => expectRefused({ foreignKey: true }, /signature/i));
    it('refuses an unsigned token (alg none)', () => expectRefused({ unsigned: true }, /alg|signature|JWS/i));
    it('refuses an expired token', () =>
      expectRefused({ claims: { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 } }, /exp/));
    it('refuses a token with another nonce', () => expectRefused({ claims: { nonce: 'another-nonce' } }, /nonce/));
    it('refuses a token without a nonce', () => expectRefused({ claims: { nonce: undefined } }, /nonce/));
    it('refuses userinfo about another subject', () => expectRefused({ userinfo: { sub: 'subject-2' } }, /sub/));
  });
});
