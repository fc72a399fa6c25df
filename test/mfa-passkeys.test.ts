/**
 * Passkeys (WebAuthn) as a second factor, with real ceremonies: Debian's chromium (playwright-core)
 * with its virtual authenticator (CDP WebAuthn.addVirtualAuthenticator) runs
 * @simplewebauthn/browser on a page of the service's ROOT_URL (http://localhost:<port>, served by
 * the test), and the test carries the options and answers between the page and the API. Without
 * /usr/bin/chromium the test is skipped, except in CI. The login page's code step runs in the
 * same browser.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { api, auditEntries, createUser, expectAuditEntry, passwordLogin, type TestUser } from './helpers/factories.ts';
import { CookieJar, startTestApp, type TestApp } from './helpers/app.ts';
import { requirePeer } from './helpers/peers.ts';
import { launchChromium } from './helpers/chromium.ts';

const require = createRequire(import.meta.url);
const BROWSER_BUNDLE = fs.readFileSync(require.resolve('@simplewebauthn/browser').replace(/script[/\\]index\.js$/, 'dist/bundle/index.umd.min.js'), 'utf8');

/** A page with @simplewebauthn/browser (the global SimpleWebAuthnBrowser), on its own port. */
async function startPageServer(): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/simplewebauthn.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(BROWSER_BUNDLE);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>passkeys</title><script src="/simplewebauthn.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

declare const SimpleWebAuthnBrowser: {
  startRegistration(options: { optionsJSON: unknown }): Promise<unknown>;
  startAuthentication(options: { optionsJSON: unknown }): Promise<unknown>;
};

/** Chromium's virtual authenticator on `page` (CDP): a platform passkey that verifies the user at once. */
async function addVirtualAuthenticator(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

describe('passkeys in chromium', function () {
  this.timeout(120_000);
  let app: TestApp;
  let pages: { server: http.Server; port: number };
  let phishing: { server: http.Server; port: number };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const register = (options: unknown) => page.evaluate((optionsJSON) => SimpleWebAuthnBrowser.startRegistration({ optionsJSON }), options);
  const assert = (options: unknown, on: Page = page) => on.evaluate((optionsJSON) => SimpleWebAuthnBrowser.startAuthentication({ optionsJSON }), options);

  async function registerPasskey(user: TestUser, name: string) {
    const options = await api(app, user).post('/api/user/mfa/webauthn/registration/options', { password: user.password });
    expect(options.status, JSON.stringify(options.body)).to.equal(200);
    expect(options.body.rp).to.deep.equal({ name: 'Gatehouse', id: 'localhost' });
    const credential = await register(options.body);
    return api(app, user).post('/api/user/mfa/webauthn/registration', { name, credential });
  }

  async function challengeOf(user: TestUser): Promise<string> {
    const res = await passwordLogin(app, user.login, user.password);
    expect(res.status).to.equal(401);
    expect(res.body.methods).to.include('passkey');
    return res.body.challenge;
  }

  async function passkeyOptions(challenge: string) {
    const res = await app.request('POST', '/api/login/mfa/webauthn/options', { body: { challenge } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  before(async function () {
    requirePeer(this, 'chromium');
    pages = await startPageServer();
    phishing = await startPageServer();
    app = await startTestApp({ env: { ROOT_URL: `http://localhost:${pages.port}` } });
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    await page.goto(`http://localhost:${pages.port}/`);
    await addVirtualAuthenticator(context, page);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    pages?.server.close();
    phishing?.server.close();
  });

  it('registers a passkey (with the password), hands out recovery codes, and signs in with it as the second factor', async () => {
    const user = await createUser(app);
    const registered = await registerPasskey(user, 'laptop');
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
    expect(registered.body.passkey).to.include({ name: 'laptop', lastUsedAt: null });
    expect(registered.body.recoveryCodes).to.have.length(10);
    const state = await api(app, user).get('/api/user/mfa');
    expect(state.body.passkeys).to.have.length(1);
    expect(state.body.passkeysAvailable).to.equal(true);
    await expectAuditEntry(app, { action: 'user.mfa_passkey_added', target_id: user.id }, { actor_id: user.id }, 1);

    const challenge = await challengeOf(user);
    const options = await passkeyOptions(challenge);
    expect(options.rpId).to.equal('localhost');
    expect(options.allowCredentials).to.have.length(1);
    const credential = await assert(options);
    const done = await app.request('POST', '/api/login/mfa', { body: { challenge, credential } });
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    const jar = new CookieJar();
    jar.absorb(done.setCookie);
    expect((await app.request('GET', '/api/user', { jar })).body.id).to.equal(user.id);
    const login = await expectAuditEntry(app, { action: 'user.login', actor_id: user.id }, { outcome: 'success' }, 1);
    expect(login.metadata).to.deep.equal({ method: 'password', secondFactor: 'passkey' });
    expect((await api(app, user).get('/api/user/mfa')).body.passkeys[0].lastUsedAt).to.be.a('string');

    // the same assertion again: its challenge is spent, and a new login's challenge is another
    expect((await app.request('POST', '/api/login/mfa', { body: { challenge, credential } })).status).to.equal(401);
    const next = await challengeOf(user);
    await passkeyOptions(next);
    const replayed = await app.request('POST', '/api/login/mfa', { body: { challenge: next, credential } });
    expect(replayed.status).to.equal(401);
    expect(await auditEntries(app, { action: 'user.login', actor_id: user.id })).to.have.length(1);
  });

  it("refuses another user's passkey, an assertion made on another origin, and a registration without pending options", async () => {
    const victim = await createUser(app);
    const attacker = await createUser(app);
    expect((await registerPasskey(victim, 'victim key')).status).to.equal(201);
    expect((await registerPasskey(attacker, 'attacker key')).status).to.equal(201);

    // the attacker knows the victim's password and answers the victim's challenge with their own passkey
    const challenge = await challengeOf(victim);
    const options = await passkeyOptions(challenge);
    const attackerKey = (await app.db('user_webauthn_credentials').where('user_id', attacker.id).first()).credential_id;
    const crossed = await assert({ ...options, allowCredentials: [{ id: attackerKey, type: 'public-key' }] });
    const res = await app.request('POST', '/api/login/mfa', { body: { challenge, credential: crossed } });
    expect(res.status).to.equal(401);

    // a look-alike site (another origin) relays the options to the victim's browser
    const phishingPage = await context.newPage();
    await phishingPage.goto(`http://localhost:${phishing.port}/`);
    await addVirtualAuthenticator(context, phishingPage);
    const elsewhereOptions = await api(app, victim).post('/api/user/mfa/webauthn/registration/options', { password: victim.password });
    const elsewhere = await phishingPage.evaluate((optionsJSON) => SimpleWebAuthnBrowser.startRegistration({ optionsJSON }), elsewhereOptions.body);
    const refused = await api(app, victim).post('/api/user/mfa/webauthn/registration', { credential: elsewhere });
    expect(refused.status).to.equal(400);
    expect(refused.body.message).to.match(/origin/i);
    await phishingPage.close();

    // the pending registration was taken by that attempt: a replay of any answer finds none
    const again = await api(app, victim).post('/api/user/mfa/webauthn/registration', { credential: elsewhere });
    expect(again.status).to.equal(400);
    expect(again.body.message).to.match(/no passkey registration is pending/);
    expect(await app.count('user_webauthn_credentials', { user_id: victim.id })).to.equal(1);
    expect(await auditEntries(app, { action: 'user.login', actor_id: victim.id })).to.have.length(0);
  });

  it('removes a passkey with the password; with no factor left, the password alone signs in again', async () => {
    const user = await createUser(app);
    const registered = await registerPasskey(user, 'old key');
    expect(registered.status).to.equal(201);
    const id = registered.body.passkey.id;
    const other = await createUser(app);
    expect((await app.request('DELETE', `/api/user/mfa/webauthn/${id}`, { cookie: other.cookie, body: { password: other.password } })).status).to.equal(404);
    expect((await app.request('DELETE', `/api/user/mfa/webauthn/${id}`, { cookie: user.cookie, body: { password: 'wrong' } })).status).to.equal(400);
    const removed = await app.request('DELETE', `/api/user/mfa/webauthn/${id}`, { cookie: user.cookie, body: { password: user.password } });
    expect(removed.status).to.equal(200);
    await expectAuditEntry(app, { action: 'user.mfa_passkey_removed', target_id: user.id }, { actor_id: user.id }, 1);
    expect(await app.count('user_recovery_codes', { user_id: user.id })).to.equal(0);
    expect((await passwordLogin(app, user.login, user.password)).status).to.equal(200);
  });

  it('the login page asks for the code of an account with TOTP, and a wrong one is said on the page', async () => {
    const user = await createUser(app);
    const started = await api(app, user).post('/api/user/mfa/totp', { password: user.password });
    const code = (at: number) => new TOTP({ secret: Secret.fromBase32(started.body.secret) }).generate({ timestamp: at });
    expect((await api(app, user).post('/api/user/mfa/totp/verify', { code: code(app.clock.now()) })).status).to.equal(200);
    app.clock.advance(30_000);

    const loginPage = await context.newPage();
    await loginPage.goto(`${app.url}/login?redirect=/admin`);
    await loginPage.getByLabel('Email or login').fill(user.login);
    await loginPage.getByLabel('Password').fill(user.password);
    await loginPage.getByRole('button', { name: 'Sign in' }).click();
    await loginPage.getByLabel('Code').waitFor();
    await loginPage.getByLabel('Code').fill('000000');
    await loginPage.getByRole('button', { name: 'Verify' }).click();
    await loginPage.waitForFunction(() => document.getElementById('mfa-alert')?.textContent !== '');
    expect(await loginPage.locator('#mfa-alert').textContent()).to.equal('The code is not correct, or was used already');
    await loginPage.getByLabel('Code').fill(code(app.clock.now()));
    await loginPage.getByRole('button', { name: 'Verify' }).click();
    await loginPage.waitForURL(`${app.url}/admin`);
    await expectAuditEntry(app, { action: 'user.login', actor_id: user.id }, { metadata: { method: 'password', secondFactor: 'totp' } }, 1);
    await loginPage.close();
  });
});
