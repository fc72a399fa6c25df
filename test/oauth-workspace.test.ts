/**
 * Workspace (Google-shaped OpenID Connect) login against oidc-provider in process, sending a
 * hosted-domain `hd` claim: OAUTH_WORKSPACE_ALLOWED_DOMAINS admits only a verified email whose
 * domain is exactly a listed one.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries } from './helpers/factories.ts';
import { CLIENT_ID, CLIENT_SECRET, loginAtProvider, startOidcProvider, type TestOidcProvider } from './helpers/oidc-provider.ts';

describe('workspace OIDC login', () => {
  let idp: TestOidcProvider;
  let app: TestApp;
  let sequence = 0;

  before(async () => {
    idp = await startOidcProvider({ claims: ['hd'] });
    app = await startTestApp({
      env: {
        OAUTH_WORKSPACE_CLIENT_ID: CLIENT_ID,
        OAUTH_WORKSPACE_CLIENT_SECRET: CLIENT_SECRET,
        OAUTH_WORKSPACE_ISSUER_URL: idp.issuer,
        OAUTH_WORKSPACE_ALLOWED_DOMAINS: 'example.com,Example.ORG',
        OAUTH_WORKSPACE_ALLOW_SIGN_UP: 'true',
      },
    });
    await idp.register(app, 'workspace');
  });
  after(async () => {
    await app?.close();
    await idp?.close();
  });

  async function signInAs(claims: Record<string, unknown>) {
    sequence += 1;
    const sub = `ws-${sequence}`;
    idp.accounts.set(sub, { email_verified: true, name: `Worker ${sequence}`, ...claims });
    const back = await loginAtProvider(app, 'workspace', sub);
    const response = await app.request('GET', back.callbackPath, { cookie: back.stateCookie });
    expect(response.status).to.equal(302);
    return { sub, response, location: new URL(response.headers.get('location')!, app.url) };
  }

  it('signs in a verified email of an allowed domain (any case) and links it as a workspace login', async () => {
    for (const email of ['ann@example.com', 'Ben@EXAMPLE.org']) {
      const { sub, location } = await signInAs({ email, hd: email.split('@')[1]!.toLowerCase() });
      expect(location.pathname, email).to.equal('/');
      const link = await app.db('user_auth_links').where({ auth_module: 'oauth_workspace', auth_id: sub }).first();
      expect(link, email).to.include({ issuer: idp.issuer, label: 'Workspace' });
    }
    const { location } = await signInAs({ email: 'cleo@example.com' });
    expect(location.pathname, 'no hd claim (a consumer account of the domain)').to.equal('/');
  });

  it('refuses emails whose exact domain is not listed, look-alikes included', async () => {
    const tricky = [
      'a@evil-example.com',
      'a@example.com.evil',
      'a@evil.com@example.com',
      'a@sub.example.com',
      'a@example.com.',
      'a@ex\u0430mple.com', // Cyrillic а
      'a@\uff45xample.com', // fullwidth ｅ
      'a@example\u3002com', // ideographic full stop
      'a@xn--exmple-4nf.com', // the punycode of a look-alike
      'example.com',
    ];
    for (const email of tricky) {
      const before = await app.count('users');
      const { location } = await signInAs({ email });
      expect(location.pathname, email).to.equal('/login');
      expect(location.searchParams.get('error'), email).to.equal('your email domain is not allowed to sign in here');
      expect(await app.count('users'), email).to.equal(before);
    }
    const failures = await auditEntries(app, { action: 'user.login_failed' });
    expect(failures.at(-1)!.metadata).to.deep.equal({ method: 'oauth_workspace', reason: 'your email domain is not allowed to sign in here' });
  });

  it('refuses an allowed domain the provider did not verify', async () => {
    for (const email_verified of [false, undefined, 'true']) {
      const { location } = await signInAs({ email: 'unverified@example.com', email_verified });
      expect(location.searchParams.get('error'), String(email_verified)).to.equal('your email domain is not allowed to sign in here');
    }
  });

  it('refuses a hosted domain that is not listed, even with an allowed email', async () => {
    const { location } = await signInAs({ email: 'dan@example.com', hd: 'evil.example' });
    expect(location.searchParams.get('error')).to.equal('your workspace domain is not allowed to sign in here');
  });
});
