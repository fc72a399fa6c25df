/**
 * The pages in a real browser (Debian's chromium, driven by playwright-core) against a real
 * server: the setup wizard from an empty installation to the home page, sign out, a wrong
 * password, the login lockout, and signing in. Each step leaves a screenshot under
 * test-artifacts/browser/. Without /usr/bin/chromium the test is skipped, except in CI.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type Browser, type Page } from 'playwright-core';
import { createUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { requirePeer } from './helpers/peers.ts';
import { launchChromium } from './helpers/chromium.ts';

const SHOTS = fileURLToPath(new URL('../test-artifacts/browser/', import.meta.url));
const ADMIN = { name: 'Ada Admin', login: 'ada', email: 'ada@example.test', password: 'a-long-enough-password' };

describe('browser: setup wizard, login and home page', function () {
  this.timeout(120_000);
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  let shot = 0;

  async function screenshot(name: string): Promise<void> {
    shot += 1;
    await page.screenshot({ path: `${SHOTS}${String(shot).padStart(2, '0')}-${name}.png`, fullPage: true });
  }

  /** The text of an alert once it says something: every submit empties it first. */
  async function alertText(id: string): Promise<string> {
    const alert = page.locator(`#${id}`);
    expect(await alert.getAttribute('role')).to.equal('alert');
    await page.waitForFunction((el) => el.textContent !== '', await alert.elementHandle());
    return (await alert.textContent()) ?? '';
  }

  async function submitLogin(user: string, password: string): Promise<void> {
    await page.getByLabel('Email or login').fill(user);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  before(async function () {
    requirePeer(this, 'chromium');
    fs.mkdirSync(SHOTS, { recursive: true });
    // its own screenshots only: browser-oauth.test.ts saves its own alongside
    for (const old of fs.readdirSync(SHOTS).filter((f) => /^\d{2}-.*\.png$/.test(f))) fs.rmSync(`${SHOTS}${old}`);
    app = await startTestApp();
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => {
      // Chrome logs every 4xx answer to fetch; those are expected here (wrong passwords).
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
    });
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('sets up the first admin, signs out, is refused, locked out, and signs in', async () => {
    // 1. An empty installation sends "/" to the wizard, which starts at the administrator step.
    await page.goto(`${app.url}/`);
    await page.waitForURL(`${app.url}/setup`);
    const adminStep = page.getByRole('region', { name: 'Create the administrator' });
    await adminStep.getByLabel('Name').waitFor();
    await screenshot('setup-admin');

    // A short password is caught in the page, and said inline.
    await adminStep.getByLabel('Name').fill(ADMIN.name);
    await adminStep.getByLabel('Login').fill(ADMIN.login);
    await adminStep.getByLabel('Email').fill(ADMIN.email);
    await adminStep.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    expect(await alertText('admin-alert')).to.equal('Password must be at least 12 characters.');
    expect(await adminStep.getByLabel('Password').getAttribute('aria-invalid')).to.equal('true');
    await screenshot('setup-admin-short-password');

    await adminStep.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    const settingsStep = page.getByRole('region', { name: 'Platform settings' });
    await settingsStep.waitFor();
    expect(await app.count('users', { login: ADMIN.login })).to.equal(1);

    // 2. Platform settings: a URL that is not http(s) is refused inline; empty sections are not sent.
    await settingsStep.getByLabel('Provider').fill('openai');
    await settingsStep.getByLabel('Model').fill('gpt-4o-mini');
    await settingsStep.getByLabel('Base URL').fill('https://llm.example.test/v1');
    await settingsStep.getByLabel('API key').fill('sk-test-key');
    await settingsStep.getByLabel('Metrics URL').fill('ftp://metrics.example.test');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    expect(await alertText('settings-alert')).to.equal('Metrics URL must start with http:// or https://.');
    await screenshot('setup-settings-invalid-url');

    await settingsStep.getByLabel('Metrics URL').fill('https://metrics.example.test');
    await screenshot('setup-settings');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.getByRole('heading', { name: 'Finish setup' }).waitFor();
    // Setup is closed once the admin exists: its settings are for the signed-in server admin.
    const session = (await page.context().cookies()).find((cookie) => cookie.name === 'svc_session')!;
    const adminCookie = `svc_session=${session.value}`;
    const config = await app.request('GET', '/api/setup/config', { cookie: adminCookie });
    expect(config.body.settings).to.deep.equal({
      llm: { provider: 'openai', model: 'gpt-4o-mini', baseUrl: 'https://llm.example.test/v1', apiKeySet: true },
      connectors: { metricsUrl: 'https://metrics.example.test' },
      notifications: null,
    });
    await screenshot('setup-finish');

    // 3. Complete, then the done view links home, where the admin is signed in.
    await page.getByRole('button', { name: 'Finish setup' }).click();
    await page.getByRole('heading', { name: 'Gatehouse is ready' }).waitFor();
    expect((await app.request('GET', '/api/setup/config', { cookie: adminCookie })).body.complete).to.equal(true);
    await screenshot('setup-done');

    await page.getByRole('link', { name: 'Go to Gatehouse' }).click();
    await page.waitForURL(`${app.url}/`);
    await page.getByRole('heading', { name: `Welcome, ${ADMIN.name}` }).waitFor();
    expect(await page.locator('[data-field="login"]').textContent()).to.equal(ADMIN.login);
    expect(await page.locator('[data-field="email"]').textContent()).to.equal(ADMIN.email);
    await screenshot('home-after-setup');

    // 4. Sign out lands on the login page, and "/" now sends there too.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${app.url}/login`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await screenshot('login');
    expect((await page.context().cookies()).find((c) => c.name === 'svc_session')).to.equal(undefined);
    await page.goto(`${app.url}/`);
    await page.waitForURL(`${app.url}/login`);

    // 5. A wrong password: the 401 message, inline.
    await submitLogin(ADMIN.login, 'not the right password');
    expect(await alertText('login-alert')).to.match(/^Invalid username or password/);
    await screenshot('login-wrong-password');

    // 6. Five wrong attempts on another login, then the sixth is the lockout's 429 even with
    //    the right password. (Created now: before the wizard, a user would have skipped setup.)
    const bob = await createUser(app, { login: 'bob' });
    for (let attempt = 1; attempt <= 5; attempt++) {
      await submitLogin(bob.login, `wrong password ${attempt}`);
      expect(await alertText('login-alert'), `attempt ${attempt}`).to.match(/^Invalid username or password/);
    }
    await submitLogin(bob.login, bob.password);
    const locked = await alertText('login-alert');
    expect(locked).to.match(/^Too many login attempts/i);
    expect(locked).to.match(/\b300 seconds\b/);
    await screenshot('login-locked-out');

    // 7. The right password for the admin (another login, so not locked) leads home.
    await submitLogin(ADMIN.login, ADMIN.password);
    await page.waitForURL(`${app.url}/`);
    await page.getByRole('heading', { name: `Welcome, ${ADMIN.name}` }).waitFor();
    await screenshot('home-after-login');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot('home-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    expect(pageErrors, 'uncaught errors in the pages').to.deep.equal([]);
    expect(consoleErrors, 'console errors (a CSP violation shows here)').to.deep.equal([]);
  });

  it('hides the password form when the local provider is disabled', async () => {
    const closed = await startTestApp({ env: { DISABLE_LOGIN_FORM: 'true' } });
    try {
      await page.goto(`${closed.url}/login`);
      await page.getByText('Password login is disabled on this server.').waitFor();
      expect(await page.locator('#login-form').isHidden()).to.equal(true);
      await screenshot('login-disabled');
    } finally {
      await closed.close();
    }
    expect(pageErrors).to.deep.equal([]);
  });
});
