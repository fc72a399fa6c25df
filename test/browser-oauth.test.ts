/**
 * A provider login in a real browser (Debian's chromium, driven by playwright-core): from the
 * login page's button through the OpenID provider (oidc-provider in process, with a one-field
 * login form) and back to the home page, then a refused login shown on the login page.
 * Screenshots go under test-artifacts/browser/. Skipped without /usr/bin/chromium, except in CI.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type Browser, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { buildUser } from './helpers/factories.ts';
import { CLIENT_ID, CLIENT_SECRET, startOidcProvider, type TestOidcProvider } from './helpers/oidc-provider.ts';
import { requirePeer } from './helpers/peers.ts';
import { launchChromium } from './helpers/chromium.ts';

const SHOTS = fileURLToPath(new URL('../test-artifacts/browser/', import.meta.url));

describe('browser: OpenID Connect login from the login page', function () {
  this.timeout(120_000);
  let idp: TestOidcProvider;
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async function () {
    requirePeer(this, 'chromium');
    fs.mkdirSync(SHOTS, { recursive: true });
    idp = await startOidcProvider();
    app = await startTestApp({
      env: {
        OAUTH_GENERIC_CLIENT_ID: CLIENT_ID,
        OAUTH_GENERIC_CLIENT_SECRET: CLIENT_SECRET,
        OAUTH_GENERIC_ISSUER_URL: idp.issuer,
        OAUTH_GENERIC_ALLOW_SIGN_UP: 'true',
      },
    });
    await idp.register(app, 'generic');
    // Someone exists, so "/" is the login page rather than the setup wizard.
    await buildUser(app);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1024, height: 768 } })).newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await idp?.close();
  });

  it('signs in through the provider and lands home; a refusal comes back to the login page with its message', async () => {
    idp.accounts.set('olivia', { email: 'olivia@example.org', email_verified: true, name: 'Olivia Oidc' });
    await page.goto(`${app.url}/`);
    await page.waitForURL(`${app.url}/login`);
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).click();
    await page.getByLabel('Provider account').fill('olivia');
    await page.screenshot({ path: `${SHOTS}oauth-01-provider-login.png` });
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${app.url}/`);
    await page.getByRole('heading', { name: 'Welcome, Olivia Oidc' }).waitFor();
    await page.screenshot({ path: `${SHOTS}oauth-02-home.png` });

    // A disabled account is sent back to the login page, which says why.
    await app.db('users').where('email', 'olivia@example.org').update({ is_disabled: true });
    await page.context().clearCookies();
    await page.goto(`${app.url}/login`);
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).click();
    await page.getByLabel('Provider account').fill('olivia');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/login\?error=/);
    const alert = page.locator('#login-alert');
    await page.waitForFunction((el) => el?.textContent !== '', await alert.elementHandle());
    expect(await alert.textContent()).to.equal('login failed: this account cannot sign in');
    await page.screenshot({ path: `${SHOTS}oauth-03-refused.png` });
    expect(pageErrors).to.deep.equal([]);
  });
});
