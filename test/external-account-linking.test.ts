/**
 * External logins never land in an account somebody else made: the account-takeover routes tried
 * end to end against real providers (oidc-provider, the code-host server, a samlify IdP, slapd),
 * email linking off by default and guarded when on, and the explicit link flow a signed-in user
 * uses instead, with re-authentication, for OAuth, SAML and LDAP.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, buildServiceAccount, buildUser, createOrg, DEFAULT_PASSWORD, sessionCookie } from './helpers/factories.ts';
import { startCodehostServer, type CodehostAccount, type CodehostServer } from './helpers/codehost-server.ts';
import { defaultMappings, PEOPLE, startDirectory, userDn, writeLdapConfig, type Slapd } from './helpers/ldap.ts';
import { CLIENT_ID, CLIENT_SECRET, loginAtProvider, signInAtProvider, startOidcProvider, type TestOidcProvider } from './helpers/oidc-provider.ts';
import { samlEnv, TestIdp } from './helpers/saml-idp.ts';
import { requirePeer } from './helpers/peers.ts';

const sessionCookieOf = (response: { setCookie: string[] }) => response.setCookie.find((cookie) => /^svc_session=[^;]/.test(cookie))?.split(';')[0];
const stateCookieOf = (response: { setCookie: string[] }) => response.setCookie.find((cookie) => cookie.startsWith('svc_oauth_state='))!.split(';')[0]!;

/** Where a redirect goes, as a URL on the service. */
const locationOf = (response: { headers: Headers }) => new URL(response.headers.get('location')!, 'http://service');

interface Providers {
  idp: TestOidcProvider;
  host: CodehostServer;
}

/** An app with generic OIDC, the code host and SAML, sign-up on, and `extra` settings. */
async function startApp({ idp, host }: Providers, extra: Record<string, string> = {}): Promise<{ app: TestApp; saml: TestIdp }> {
  const app = await startTestApp({
    env: {
      ...host.env({ OAUTH_CODEHOST_ALLOW_SIGN_UP: 'true' }),
      ...samlEnv(),
      OAUTH_GENERIC_CLIENT_ID: CLIENT_ID,
      OAUTH_GENERIC_CLIENT_SECRET: CLIENT_SECRET,
      OAUTH_GENERIC_ISSUER_URL: idp.issuer,
      OAUTH_GENERIC_ALLOW_SIGN_UP: 'true',
      ...extra,
    },
  });
  await idp.register(app, 'generic');
  const saml = new TestIdp(app);
  await saml.loadMetadata();
  return { app, saml };
}

describe('external logins and existing accounts', function () {
  // SAML messages are schema-checked in a worker thread: a few hundred milliseconds each, more on a loaded machine.
  this.timeout(60_000);
  const providers = {} as Providers;
  let sequence = 0;

  before(async () => {
    providers.idp = await startOidcProvider();
    providers.host = await startCodehostServer();
  });
  after(async () => {
    await providers.idp?.close();
    await providers.host?.close();
  });

  /** An OIDC account with these claims (email verified unless said otherwise). */
  function oidcAccount(claims: Record<string, unknown> = {}): string {
    sequence += 1;
    const sub = `person-${sequence}`;
    providers.idp.accounts.set(sub, { email: `${sub}@idp.example`, email_verified: true, name: `Person ${sequence}`, ...claims });
    return sub;
  }

  function codehostAccount(email: string): CodehostAccount {
    sequence += 1;
    const account: CodehostAccount = { id: 5000 + sequence, login: `coder${sequence}`, emails: [{ email, primary: true, verified: true }], orgs: [] };
    providers.host.accounts.set(account.login, account);
    return account;
  }

  async function oidcSignIn(app: TestApp, sub: string) {
    const back = await loginAtProvider(app, 'generic', sub);
    return app.request('GET', back.callbackPath, { cookie: back.stateCookie });
  }

  async function codehostSignIn(app: TestApp, login: string) {
    const start = await app.request('GET', '/api/login/codehost');
    return codehostCallback(app, new URL(start.headers.get('location')!), login, stateCookieOf(start));
  }

  /** The code host signs `login` in at once and sends the browser back with `cookies`. */
  async function codehostCallback(app: TestApp, authorize: URL, login: string, cookies: string) {
    authorize.searchParams.set('login', login);
    const back = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(back.headers.get('location')!);
    return app.request('GET', `${callback.pathname}${callback.search}`, { cookie: cookies });
  }

  const userOf = async (app: TestApp, response: { setCookie: string[] }) =>
    (await app.request('GET', '/api/user', { cookie: sessionCookieOf(response)! })).body as { id: string; login: string; email: string; isSvcAdmin: boolean };

  const loginFailure = async (app: TestApp) => (await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' })).at(-1)!;

  for (const linking of ['off', 'on'] as const) {
    describe(`a pre-created account (email linking ${linking})`, () => {
      let app: TestApp;
      let saml: TestIdp;
      before(async () => {
        const on = linking === 'on' ? 'true' : 'false';
        ({ app, saml } = await startApp(providers, {
          OAUTH_GENERIC_ALLOW_EMAIL_LINKING: on,
          OAUTH_CODEHOST_ALLOW_EMAIL_LINKING: on,
          SAML_ALLOW_EMAIL_LINKING: on,
        }));
      });
      after(() => app?.close());

      it('an unverified email is never stored: the victim signing in through the code host gets an account of its own', async () => {
        const attacker = oidcAccount({ email: `victim${linking}@corp.test`, email_verified: false });
        const attackerAccount = await userOf(app, await oidcSignIn(app, attacker));
        expect(attackerAccount.email).to.equal('');
        expect((await app.db('users').where('id', attackerAccount.id).first()).email).to.equal(null);

        const victim = codehostAccount(`victim${linking}@corp.test`);
        const victimAccount = await userOf(app, await codehostSignIn(app, victim.login));
        expect(victimAccount.id).not.to.equal(attackerAccount.id);
        expect(victimAccount.email).to.equal(`victim${linking}@corp.test`);
        expect(await auditEntries(app, { action: 'user.auth_link_added', target_id: attackerAccount.id })).to.have.length(0);
        expect(await app.count('user_auth_links', { user_id: attackerAccount.id })).to.equal(1);
        // The attacker's next login reaches only the attacker's own account.
        expect((await userOf(app, await oidcSignIn(app, attacker))).id).to.equal(attackerAccount.id);
      });

      it('the victim signing in through SAML gets an account of its own', async () => {
        const attacker = oidcAccount({ email: `saml-victim-${linking}@corp.test`, email_verified: false });
        const attackerAccount = await userOf(app, await oidcSignIn(app, attacker));
        const { response } = await saml.login({ nameId: `victim-${linking}`, attributes: { mail: [`saml-victim-${linking}@corp.test`] } });
        expect(response.status).to.equal(302);
        const victimAccount = await userOf(app, response);
        expect(victimAccount.id).not.to.equal(attackerAccount.id);
        expect(await app.count('user_auth_links', { user_id: attackerAccount.id })).to.equal(1);
        expect(await auditEntries(app, { action: 'user.auth_link_added', target_id: attackerAccount.id })).to.have.length(0);
      });

      it('a verified email never joins a local server admin, whatever the setting', async () => {
        const admin = await buildUser(app, { email: `root-${linking}@corp.test`, svcAdmin: true });
        const refused = await oidcSignIn(app, oidcAccount({ email: `root-${linking}@corp.test` }));
        expect(locationOf(refused).pathname).to.equal('/login');
        expect(locationOf(refused).searchParams.get('error')).to.equal(
          'an account with this email already exists: sign in to it and link OpenID Connect from your profile',
        );
        expect(sessionCookieOf(refused)).to.equal(undefined);
        expect((await loginFailure(app)).metadata).to.deep.equal({
          method: 'oauth_generic',
          reason: linking === 'off' ? 'email linking is off for oauth_generic' : 'the account has a local password',
        });
        expect(await app.count('user_auth_links', { user_id: admin.id })).to.equal(0);
        expect(await app.count('sessions', { user_id: admin.id })).to.equal(1);
      });
    });
  }

  describe('email linking on (OAUTH_<P>_ALLOW_EMAIL_LINKING, SAML_ALLOW_EMAIL_LINKING)', () => {
    let app: TestApp;
    let saml: TestIdp;
    before(async () => {
      ({ app, saml } = await startApp(providers, { OAUTH_GENERIC_ALLOW_EMAIL_LINKING: 'true', SAML_ALLOW_EMAIL_LINKING: 'true' }));
    });
    after(() => app?.close());

    it('joins a passwordless account that has no other login, by a verified email, and audits the link', async () => {
      const waiting = await buildUser(app, { email: 'invited@corp.test', passwordless: true });
      const sub = oidcAccount({ email: 'Invited@Corp.test' });
      const joined = await userOf(app, await oidcSignIn(app, sub));
      expect(joined.id).to.equal(waiting.id);
      const [linked] = await auditEntries(app, { action: 'user.auth_link_added', target_id: waiting.id });
      expect(linked!.metadata).to.deep.equal({ authModule: 'oauth_generic', via: 'email' });

      // provisioned by the SCIM of the org the provider signs its users into: joined like any other
      const provisioned = await buildUser(app, { email: 'provisioned-here@corp.test', passwordless: true });
      await app.db('scim_users').insert({ org_id: 'org_main', user_id: provisioned.id, external_id: null, created_at: 0, updated_at: 0 });
      expect((await userOf(app, await oidcSignIn(app, oidcAccount({ email: 'provisioned-here@corp.test' })))).id).to.equal(provisioned.id);

      const samlWaiting = await buildUser(app, { email: 'saml-invited@corp.test', passwordless: true });
      const { response } = await saml.login({ nameId: 'saml-invited', attributes: { mail: ['saml-invited@corp.test'] } });
      expect((await userOf(app, response)).id).to.equal(samlWaiting.id);
    });

    it("refuses an account with a password, a server-admin flag, another login, another org's SCIM or a service account, and an unverified email", async () => {
      const cases: Array<{ account: () => Promise<{ id: string }>; reason: string }> = [
        { account: () => buildUser(app, { email: 'pw@corp.test' }), reason: 'the account has a local password' },
        { account: () => buildUser(app, { email: 'admin@corp.test', passwordless: true, svcAdmin: true }), reason: 'the account is a server admin' },
        {
          account: async () => {
            const user = await buildUser(app, { email: 'linked@corp.test', passwordless: true });
            await userOf(app, (await saml.login({ nameId: 'linked-elsewhere', attributes: { mail: ['other@corp.test'] } })).response);
            await app.db('user_auth_links').where({ auth_module: 'saml', auth_id: 'linked-elsewhere' }).update({ user_id: user.id });
            return user;
          },
          reason: 'the account is linked to another login',
        },
        {
          // another org's SCIM client chose this email: the provider signs its users into org_main
          account: async () => {
            const user = await buildUser(app, { email: 'provisioned@corp.test', passwordless: true });
            const orgId = await createOrg(app);
            await app.db('scim_users').insert({ org_id: orgId, user_id: user.id, external_id: null, created_at: 0, updated_at: 0 });
            return user;
          },
          reason: 'the account was provisioned by SCIM for another org',
        },
      ];
      for (const { account, reason } of cases) {
        const user = await account();
        const email = (await app.db('users').where('id', user.id).first()).email as string;
        const refused = await oidcSignIn(app, oidcAccount({ email }));
        expect(locationOf(refused).searchParams.get('error'), reason).to.match(/already exists: sign in to it and link/);
        expect((await loginFailure(app)).metadata, reason).to.deep.equal({ method: 'oauth_generic', reason });
        expect(await app.count('user_auth_links', { user_id: user.id, auth_module: 'oauth_generic' }), reason).to.equal(0);
      }

      const robot = await buildServiceAccount(app);
      await app.db('users').where('id', robot.id).update({ email: 'robot@corp.test' });
      await oidcSignIn(app, oidcAccount({ email: 'robot@corp.test' }));
      expect((await loginFailure(app)).metadata).to.deep.equal({ method: 'oauth_generic', reason: 'the account is a service account' });

      // An unverified email is no email: the waiting account is not joined, a new one is made.
      const waiting = await buildUser(app, { email: 'unverified@corp.test', passwordless: true });
      const other = await userOf(app, await oidcSignIn(app, oidcAccount({ email: 'unverified@corp.test', email_verified: false })));
      expect(other.id).not.to.equal(waiting.id);
      expect(other.email).to.equal('');
    });
  });

  describe('the explicit link flow: POST /api/user/auth-links/<provider>', () => {
    let app: TestApp;
    let saml: TestIdp;
    before(async () => {
      ({ app, saml } = await startApp(providers));
    });
    after(() => app?.close());

    /** Starts a link as `cookie` and follows the OIDC provider back with the same browser's cookies. */
    async function linkGeneric(cookie: string, sub: string, body: Record<string, unknown> = { password: DEFAULT_PASSWORD }) {
      const start = await app.request('POST', '/api/user/auth-links/generic', { cookie, body: { redirect: '/profile', ...body } });
      expect(start.status, JSON.stringify(start.body)).to.equal(200);
      const callbackPath = await signInAtProvider(app, new URL(start.body.redirectUrl), sub);
      return { start, callbackPath, stateCookie: stateCookieOf(start) };
    }

    it('links an OIDC login to a local account after its password, and the next login of it lands there', async () => {
      const local = await buildUser(app, { email: 'ada@corp.test' });
      const sub = oidcAccount({ email: 'ada@corp.test' });
      const { start, callbackPath, stateCookie } = await linkGeneric(local.cookie, sub);
      expect(new URL(start.body.redirectUrl).origin).to.equal(providers.idp.issuer);
      const done = await app.request('GET', callbackPath, { cookie: `${stateCookie}; ${local.cookie}` });
      expect(done.status).to.equal(302);
      expect(done.headers.get('location')).to.equal('/profile');
      expect(sessionCookieOf(done)).to.equal(undefined);
      expect(await app.count('user_auth_links', { user_id: local.id, auth_module: 'oauth_generic', auth_id: sub })).to.equal(1);
      const [linked] = await auditEntries(app, { action: 'user.auth_link_added', target_id: local.id });
      expect(linked).to.include({ actor_id: local.id, outcome: 'success' });
      expect(linked!.metadata).to.deep.equal({ authModule: 'oauth_generic', via: 'signed-in user' });

      expect((await userOf(app, await oidcSignIn(app, sub))).id).to.equal(local.id);
    });

    it('needs the password of an account that has one, and a browser session', async () => {
      const local = await buildUser(app);
      const missing = await app.request('POST', '/api/user/auth-links/generic', { cookie: local.cookie, body: {} });
      expect(missing.status).to.equal(400);
      expect(missing.body.message).to.match(/password is required/);
      const wrong = await app.request('POST', '/api/user/auth-links/generic', { cookie: local.cookie, body: { password: 'not the password at all' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal({ message: 'the password is not correct' });
      expect(wrong.setCookie.some((cookie) => cookie.startsWith('svc_oauth_state='))).to.equal(false);

      const token = await app.request('POST', '/api/user/access-tokens', { cookie: local.cookie, body: { name: 'cli' } });
      const byToken = await app.request('POST', '/api/user/auth-links/generic', { token: token.body.key, body: { password: DEFAULT_PASSWORD } });
      expect(byToken.status).to.equal(403);
      expect(byToken.body.message).to.match(/browser session/);

      const anonymous = await app.request('POST', '/api/user/auth-links/generic', { body: { password: DEFAULT_PASSWORD } });
      expect(anonymous.status).to.equal(401);
    });

    it('needs a recent sign-in of an account without a password', async () => {
      const sub = oidcAccount();
      const cookie = sessionCookieOf(await oidcSignIn(app, sub))!;
      const fresh = await app.request('POST', '/api/user/auth-links/codehost', { cookie, body: {} });
      expect(fresh.status).to.equal(200);
      expect(new URL(fresh.body.redirectUrl).pathname).to.equal('/login/oauth/authorize');

      app.clock.advance(11 * 60_000);
      const stale = await app.request('POST', '/api/user/auth-links/codehost', { cookie, body: {} });
      expect(stale.status).to.equal(403);
      expect(stale.body.message).to.match(/sign in again/);
    });

    it('refuses a callback that another browser (or no session) brings back, and an identity linked to someone else', async () => {
      const local = await buildUser(app);
      const sub = oidcAccount();
      const { callbackPath, stateCookie } = await linkGeneric(local.cookie, sub);
      // The victim's browser completing an attacker's link carries the state but not the attacker's session.
      const victim = await buildUser(app);
      const refused = await app.request('GET', callbackPath, { cookie: `${stateCookie}; ${victim.cookie}` });
      expect(locationOf(refused).pathname).to.equal('/profile');
      expect(locationOf(refused).searchParams.get('linkError')).to.match(/no longer signed in as the account that started the link/);
      expect(await app.count('user_auth_links', { auth_id: sub })).to.equal(0);
      const [failure] = await auditEntries(app, { action: 'user.auth_link_added', outcome: 'failure', actor_id: victim.id });
      expect(failure!.metadata).to.deep.equal({ authModule: 'oauth_generic', reason: 'the session that started the link did not come back' });

      const owner = oidcAccount();
      const ownerAccount = await userOf(app, await oidcSignIn(app, owner));
      const taken = await linkGeneric(local.cookie, owner);
      const second = await app.request('GET', taken.callbackPath, { cookie: `${taken.stateCookie}; ${local.cookie}` });
      expect(locationOf(second).searchParams.get('linkError')).to.equal('this OpenID Connect login is already linked to another account');
      expect(await app.count('user_auth_links', { auth_id: owner, user_id: ownerAccount.id })).to.equal(1);
      expect(await app.count('user_auth_links', { user_id: local.id })).to.equal(0);
    });

    it('links a code-host login the same way', async () => {
      const local = await buildUser(app, { email: 'grace@corp.test' });
      const coder = codehostAccount('grace@corp.test');
      const start = await app.request('POST', '/api/user/auth-links/codehost', { cookie: local.cookie, body: { password: DEFAULT_PASSWORD } });
      const done = await codehostCallback(app, new URL(start.body.redirectUrl), coder.login, `${stateCookieOf(start)}; ${local.cookie}`);
      expect(done.headers.get('location')).to.equal('/');
      expect((await userOf(app, await codehostSignIn(app, coder.login))).id).to.equal(local.id);
    });

    it('links a SAML login: the answer waits for the same browser session to confirm it', async () => {
      const local = await buildUser(app, { email: 'sam@corp.test' });
      const start = await app.request('POST', '/api/user/auth-links/saml', {
        cookie: local.cookie,
        body: { password: DEFAULT_PASSWORD, redirect: '/profile' },
      });
      expect(start.status).to.equal(200);
      const inResponseTo = await saml.readLoginRequest(new URL(start.body.redirectUrl));
      const posted = await saml.postResponse(saml.responseXml({ inResponseTo, nameId: 'sam-at-idp', attributes: { mail: ['sam@corp.test'] } }));
      expect(posted.status).to.equal(302);
      expect(sessionCookieOf(posted)).to.equal(undefined);
      const confirm = posted.headers.get('location')!;
      expect(confirm).to.match(/^\/api\/saml\/link\?ticket=/);

      // Without the session that started it, the answer links nothing (and is used up).
      const stranger = await buildUser(app);
      const refused = await app.request('GET', confirm, { cookie: stranger.cookie });
      expect(locationOf(refused).searchParams.get('linkError')).to.match(/no longer signed in/);
      expect(await app.count('user_auth_links', { auth_id: 'sam-at-idp' })).to.equal(0);
      expect((await app.request('GET', confirm, { cookie: local.cookie })).status).to.equal(400);

      const again = await app.request('POST', '/api/user/auth-links/saml', {
        cookie: local.cookie,
        body: { password: DEFAULT_PASSWORD, redirect: '/profile' },
      });
      const id = await saml.readLoginRequest(new URL(again.body.redirectUrl));
      const answer = await saml.postResponse(saml.responseXml({ inResponseTo: id, nameId: 'sam-at-idp', attributes: { mail: ['sam@corp.test'] } }));
      const confirmed = await app.request('GET', answer.headers.get('location')!, { cookie: local.cookie });
      expect(confirmed.status).to.equal(302);
      expect(confirmed.headers.get('location')).to.equal('/profile');
      expect(await app.count('user_auth_links', { auth_id: 'sam-at-idp', user_id: local.id })).to.equal(1);
      const { response } = await saml.login({ nameId: 'sam-at-idp', attributes: { mail: ['sam@corp.test'] } });
      expect((await userOf(app, response)).id).to.equal(local.id);
    });
  });
});

describe('LDAP logins and existing accounts', function () {
  this.timeout(60_000);
  let slapd: Slapd;
  let idp: TestOidcProvider;
  let app: TestApp;

  before(async function () {
    requirePeer(this, 'slapd');
    slapd = await startDirectory();
    idp = await startOidcProvider();
    app = await startTestApp({
      env: {
        ...writeLdapConfig([{ port: slapd.port, mappings: defaultMappings('org_main') }]).env,
        OAUTH_GENERIC_CLIENT_ID: CLIENT_ID,
        OAUTH_GENERIC_CLIENT_SECRET: CLIENT_SECRET,
        OAUTH_GENERIC_ISSUER_URL: idp.issuer,
        OAUTH_GENERIC_ALLOW_SIGN_UP: 'true',
        OAUTH_GENERIC_ALLOW_EMAIL_LINKING: 'true',
        LDAP_ALLOW_EMAIL_LINKING: 'true',
      },
    });
    await idp.register(app, 'generic');
  });
  after(async () => {
    await app?.close();
    await idp?.close();
    await slapd?.stop();
  });

  const ldapLogin = (user: string, password: string) => app.request('POST', '/api/login', { body: { user, password } });

  it('a provider username equal to a directory admin’s never becomes that admin', async () => {
    idp.accounts.set('mallory', { email: 'mallory@evil.example', email_verified: true, preferred_username: 'alice' });
    const back = await loginAtProvider(app, 'generic', 'mallory');
    const attackerSession = sessionCookieOf(await app.request('GET', back.callbackPath, { cookie: back.stateCookie }))!;
    const attacker = (await app.request('GET', '/api/user', { cookie: attackerSession })).body;
    expect(attacker.login).to.equal('alice');

    const alice = await ldapLogin('alice', PEOPLE.alice.password);
    expect(alice.status).to.equal(200);
    const aliceAccount = (await app.request('GET', '/api/user', { cookie: sessionCookieOf(alice)! })).body;
    expect(aliceAccount.id).not.to.equal(attacker.id);
    expect(aliceAccount.login).to.match(/^alice-[0-9a-f]{6}$/);
    expect(aliceAccount.isSvcAdmin).to.equal(true);

    const attackerRow = await app.db('users').where('id', attacker.id).first();
    expect(!!attackerRow.is_svc_admin).to.equal(false);
    expect(await app.count('user_auth_links', { user_id: attacker.id, auth_module: 'ldap' })).to.equal(0);
    expect(await auditEntries(app, { action: 'user.auth_link_added', target_id: attacker.id })).to.have.length(0);
    const again = await loginAtProvider(app, 'generic', 'mallory');
    const next = await app.request('GET', again.callbackPath, { cookie: again.stateCookie });
    expect((await app.request('GET', '/api/user', { cookie: sessionCookieOf(next)! })).body).to.include({ id: attacker.id, isSvcAdmin: false });
  });

  it('joins by the directory email only an account nothing else guards, and refuses one with a password', async () => {
    const waiting = await buildUser(app, { login: 'bob-waiting', email: PEOPLE.bob.email, passwordless: true });
    expect((await ldapLogin('bob', PEOPLE.bob.password)).status).to.equal(200);
    expect(await app.count('user_auth_links', { user_id: waiting.id, auth_module: 'ldap', auth_id: userDn('bob') })).to.equal(1);
    const [linked] = await auditEntries(app, { action: 'user.auth_link_added', target_id: waiting.id });
    expect(linked!.metadata).to.deep.equal({ authModule: 'ldap', via: 'email' });

    const guarded = await buildUser(app, { login: 'dave-local', email: PEOPLE.dave.email });
    const refused = await ldapLogin('dave', PEOPLE.dave.password);
    expect(refused.status).to.equal(401);
    const [failure] = (await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' })).slice(-1);
    expect(failure!.metadata).to.deep.equal({ method: 'ldap', reason: 'the account has a local password' });
    expect(await app.count('user_auth_links', { user_id: guarded.id })).to.equal(0);
  });

  it('links a directory entry to a signed-in local account with both passwords, and its next LDAP login lands there', async () => {
    const local = await app.db('users').where('login', 'dave-local').first();
    const cookie = await sessionCookie(app, local.id);
    const link = (body: Record<string, string>, as = cookie) => app.request('POST', '/api/user/auth-links/ldap', { cookie: as, body });
    const wrong = await link({ password: DEFAULT_PASSWORD, ldapLogin: 'dave', ldapPassword: 'not his directory password' });
    expect(wrong.status).to.equal(401);
    expect((await link({ ldapLogin: 'dave', ldapPassword: PEOPLE.dave.password })).status).to.equal(400);
    expect(await app.count('user_auth_links', { user_id: local.id })).to.equal(0);

    const done = await link({ password: DEFAULT_PASSWORD, ldapLogin: 'dave', ldapPassword: PEOPLE.dave.password });
    expect(done.status).to.equal(201);
    expect(done.body).to.include({ authModule: 'ldap', label: 'LDAP' });
    expect(await app.count('user_auth_links', { user_id: local.id, auth_module: 'ldap', auth_id: userDn('dave') })).to.equal(1);
    const signedIn = await ldapLogin('dave', PEOPLE.dave.password);
    expect((await app.request('GET', '/api/user', { cookie: sessionCookieOf(signedIn)! })).body.id).to.equal(local.id);

    const other = await buildUser(app);
    const taken = await link({ password: DEFAULT_PASSWORD, ldapLogin: 'dave', ldapPassword: PEOPLE.dave.password }, other.cookie);
    expect(taken.status).to.equal(409);
    expect(taken.body.message).to.equal('this LDAP login is already linked to another account');
    const [failure] = await auditEntries(app, { action: 'user.auth_link_added', outcome: 'failure', actor_id: other.id });
    expect(failure!.metadata).to.deep.equal({ authModule: 'ldap', reason: 'identity linked to another account' });
  });
});
