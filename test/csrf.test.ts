import { expect } from 'chai';
import { createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const EVIL = 'http://evil.example';

/**
 * A cookie-authenticated unsafe request must come from this service's own origin or one listed in
 * CORS_ORIGINS (Origin, else Referer); token requests and requests naming no origin pass.
 */
describe('CSRF: cookie-authenticated unsafe requests from another origin', () => {
  let app: TestApp;
  let user: TestUser;
  beforeEach(async () => {
    app = await startTestApp({ env: { CORS_ORIGINS: 'https://ui.example' } });
    user = await createUser(app, { login: 'csrf-victim', name: 'Victim' });
  });
  afterEach(async () => {
    await app.close();
  });

  const renameWithCookie = (headers: Record<string, string>) => app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Renamed' }, headers });
  const issueTokenWithCookie = (headers: Record<string, string>) =>
    app.request('POST', '/api/user/access-tokens', { cookie: user.cookie, body: { name: 'stolen' }, headers });
  const storedName = async () => (await app.db('users').where('id', user.id).first('name')).name as string;

  it('refuses PUT /api/user and POST /api/user/access-tokens with an evil Origin (403), changing nothing', async () => {
    const rename = await renameWithCookie({ origin: EVIL });
    expect(rename.status).to.equal(403);
    expect(rename.body.message).to.match(/cross-site request refused/);
    expect(await storedName()).to.equal('Victim');

    const token = await issueTokenWithCookie({ origin: EVIL });
    expect(token.status).to.equal(403);
    expect(token.body).to.have.keys('message');
    expect(await app.count('api_tokens', { user_id: user.id })).to.equal(0);
  });

  it('refuses an evil Referer when there is no Origin, and an opaque Origin (null)', async () => {
    expect((await renameWithCookie({ referer: `${EVIL}/attack.html` })).status).to.equal(403);
    expect((await issueTokenWithCookie({ origin: 'null' })).status).to.equal(403);
    expect(await storedName()).to.equal('Victim');
  });

  it("allows the service's own origin, by Origin or by Referer", async () => {
    expect((await renameWithCookie({ origin: app.url })).status).to.equal(200);
    expect((await issueTokenWithCookie({ referer: `${app.url}/profile?tab=tokens` })).status).to.equal(201);
    expect(await storedName()).to.equal('Renamed');
  });

  it('allows an origin listed in CORS_ORIGINS', async () => {
    expect((await renameWithCookie({ origin: 'https://ui.example' })).status).to.equal(200);
    expect((await issueTokenWithCookie({ referer: 'https://UI.example/settings' })).status).to.equal(201);
  });

  it('allows a request naming no origin at all (a non-browser client holding the cookie)', async () => {
    expect((await renameWithCookie({})).status).to.equal(200);
  });

  it('does not affect safe methods, nor requests authenticated by a token', async () => {
    expect((await app.request('GET', '/api/user', { cookie: user.cookie, headers: { origin: EVIL } })).status).to.equal(200);
    const issued = await issueTokenWithCookie({ origin: app.url });
    const token = issued.body.key as string;
    const byBearer = await app.request('PUT', '/api/user', { token, body: { name: 'By bearer' }, headers: { origin: EVIL } });
    expect(byBearer.status).to.equal(200);
    const byApiKey = await app.request('POST', '/api/user/access-tokens', { body: { name: 'by key' }, headers: { 'x-api-key': token, origin: EVIL } });
    expect(byApiKey.status).to.equal(201);
  });

  it('refuses the logout of a session from another origin', async () => {
    expect((await app.request('POST', '/api/logout', { cookie: user.cookie, headers: { origin: EVIL } })).status).to.equal(403);
    expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(200);
  });
});

/**
 * GET /api/logout ends a session, and a link, an image or a redirect on another site makes that
 * request with the cookie: refused when Origin, Referer or Sec-Fetch-Site names another site.
 */
describe('CSRF: GET /api/logout started by another site', () => {
  let app: TestApp;
  let user: TestUser;
  beforeEach(async () => {
    app = await startTestApp({ env: { CORS_ORIGINS: 'https://ui.example' } });
    user = await createUser(app, { login: 'logout-victim' });
  });
  afterEach(async () => {
    await app.close();
  });

  const logout = (headers: Record<string, string>) => app.request('GET', '/api/logout', { cookie: user.cookie, headers });
  const sessionWorks = async () => (await app.request('GET', '/api/user', { cookie: user.cookie })).status === 200;

  const foreign: Array<[string, () => Record<string, string>]> = [
    ['an image on another site (Sec-Fetch-Site: cross-site, no Referer)', () => ({ 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'image' })],
    ['a sibling site (Sec-Fetch-Site: same-site)', () => ({ 'sec-fetch-site': 'same-site' })],
    ['a foreign Referer', () => ({ referer: `${EVIL}/page.html` })],
    ['a foreign Origin', () => ({ origin: EVIL })],
    ['an opaque Origin', () => ({ origin: 'null' })],
    [
      'a redirect through this service from another site (own Referer, Sec-Fetch-Site: cross-site)',
      () => ({ referer: `${app.url}/login`, 'sec-fetch-site': 'cross-site' }),
    ],
  ];
  for (const [name, headers] of foreign) {
    it(`refuses ${name} with 403 {message}; the session goes on`, async () => {
      const res = await logout(headers());
      expect(res.status).to.equal(403);
      expect(res.body).to.have.keys('message');
      expect(res.body.message).to.match(/cross-site request refused/);
      expect(res.setCookie.filter((cookie) => cookie.startsWith('svc_session='))).to.be.empty;
      expect(await sessionWorks()).to.equal(true);
      expect(await app.count('audit_log', { action: 'user.logout' })).to.equal(0);
    });
  }

  const allowed: Array<[string, () => Record<string, string>]> = [
    ['an address typed into the browser (Sec-Fetch-Site: none)', () => ({ 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' })],
    ["a link on the service's own page", () => ({ 'sec-fetch-site': 'same-origin', referer: `${app.url}/` })],
    ['a link on an origin in CORS_ORIGINS', () => ({ 'sec-fetch-site': 'cross-site', referer: 'https://ui.example/menu' })],
    ['a client naming nothing (curl)', () => ({})],
  ];
  for (const [name, headers] of allowed) {
    it(`ends the session for ${name}`, async () => {
      const res = await logout(headers());
      expect(res.status).to.equal(302);
      expect(res.headers.get('location')).to.equal('/login');
      expect(await sessionWorks()).to.equal(false);
    });
  }
});

describe('CSRF behind a proxy', () => {
  const publicOrigin = { origin: 'https://gatehouse.example', 'x-forwarded-host': 'gatehouse.example', 'x-forwarded-proto': 'https' };

  it("takes the service's origin from X-Forwarded-Host and -Proto of a trusted proxy", async () => {
    const app = await startTestApp({ env: { TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      const user = await createUser(app);
      expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Proxied' }, headers: publicOrigin })).status).to.equal(200);
      const elsewhere = await app.request('PUT', '/api/user', {
        cookie: user.cookie,
        body: { name: 'Proxied' },
        headers: { ...publicOrigin, 'x-forwarded-host': 'evil.example' },
      });
      expect(elsewhere.status).to.equal(403);
    } finally {
      await app.close();
    }
  });

  it('believes no forwarding header from a peer that is not a trusted proxy', async () => {
    const app = await startTestApp();
    try {
      const user = await createUser(app);
      expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Spoofed' }, headers: publicOrigin })).status).to.equal(403);
    } finally {
      await app.close();
    }
  });
});
