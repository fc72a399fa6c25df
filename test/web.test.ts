/**
 * The browser routes over HTTP: where `/` sends each kind of visitor, the pages, and the asset
 * whitelist (types, 404s, no way out of it).
 */
import http from 'node:http';
import { expect } from 'chai';
import { buildServiceAccount, createUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const ASSETS: Array<[string, RegExp]> = [
  ['style.css', /^text\/css; charset=utf-8$/],
  ['api.js', /^text\/javascript; charset=utf-8$/],
  ['setup.js', /^text\/javascript; charset=utf-8$/],
  ['login.js', /^text\/javascript; charset=utf-8$/],
  ['home.js', /^text\/javascript; charset=utf-8$/],
  ['favicon.svg', /^image\/svg\+xml/],
];

describe('web pages', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  describe('GET /', () => {
    it('redirects to /setup while no user exists', async () => {
      const res = await app.request('GET', '/');
      expect(res.status).to.equal(302);
      expect(res.headers.get('location')).to.equal('/setup');
      expect(res.headers.get('cache-control')).to.equal('no-store');
    });

    it('redirects to /login when a user exists and the request has no session', async () => {
      await createUser(app);
      const res = await app.request('GET', '/');
      expect(res.status).to.equal(302);
      expect(res.headers.get('location')).to.equal('/login');
    });

    it('redirects to /login when the session cookie is dead', async () => {
      await createUser(app);
      const res = await app.request('GET', '/', { cookie: 'svc_session=not-a-session' });
      expect(res.status).to.equal(302);
      expect(res.headers.get('location')).to.equal('/login');
    });

    it('serves the home page to a signed-in user', async () => {
      const user = await createUser(app);
      const res = await app.request('GET', '/', { cookie: user.cookie });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(res.body).to.include('<script type="module" src="/assets/home.js">').and.include('id="sign-out"');
    });

    it('counts only human users: a service account alone still means setup', async () => {
      await buildServiceAccount(app, { name: 'robot' });
      const res = await app.request('GET', '/');
      expect(res.headers.get('location')).to.equal('/setup');
    });
  });

  for (const [path, script] of [
    ['/setup', 'setup.js'],
    ['/login', 'login.js'],
  ] as const) {
    it(`GET ${path} is an HTML page with its script, its stylesheet and a strict CSP`, async () => {
      const res = await app.request('GET', path);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(res.body).to.match(/^<!doctype html>/i);
      expect(res.body).to.include(`src="/assets/${script}"`).and.include('href="/assets/style.css"');
      expect(res.headers.get('content-security-policy')).to.include("default-src 'none'").and.include("script-src 'self'");
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    });
  }

  it('every input of the pages has a label bound to it, and every alert is a role="alert"', async () => {
    for (const path of ['/setup', '/login']) {
      const html = (await app.request<string>('GET', path)).body;
      const ids = [...html.matchAll(/<input[^>]*\sid="([^"]+)"/g)].map((m) => m[1]);
      expect(ids.length, path).to.be.greaterThan(1);
      for (const id of ids) expect(html, `${path} #${id}`).to.include(`<label for="${id}"`);
      expect(html).to.match(/class="alert" role="alert"/);
    }
  });

  it('pages reference no external resource', async () => {
    for (const path of ['/setup', '/login']) {
      const html = (await app.request<string>('GET', path)).body;
      expect(html, path).not.to.match(/(src|href)="(https?:)?\/\//);
    }
  });

  describe('assets', () => {
    for (const [file, type] of ASSETS) {
      it(`serves ${file} as ${type.source}`, async () => {
        const res = await app.request('GET', `/assets/${file}`);
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.match(type);
        expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
        expect(String(res.body).length).to.be.greaterThan(50);
      });
    }

    it('answers 304 to a request that holds the current ETag', async () => {
      const first = await app.request('GET', '/assets/style.css');
      const etag = first.headers.get('etag')!;
      expect(etag).to.match(/^"[^"]+"$/);
      expect(first.headers.get('cache-control')).to.equal('no-cache');
      // node:http, not fetch: fetch adds "Cache-Control: no-cache" to a conditional request.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        http.get(`${app.url}/assets/style.css`, { headers: { 'if-none-match': etag } }, (res) => resolve(res.resume().statusCode)).on('error', reject);
      });
      expect(status).to.equal(304);
    });

    it('an unknown asset is 404 {message}', async () => {
      for (const path of ['/assets/nope.js', '/assets/STYLE.CSS', '/assets/__proto__', '/assets/constructor', '/assets/style.css.map']) {
        const res = await app.request('GET', path);
        expect(res.status, path).to.equal(404);
        expect(res.body, path).to.deep.equal({ message: 'asset not found' });
      }
    });

    it('does not leak files outside the whitelist through encoded traversal', async () => {
      for (const path of [
        '/assets/..%2Fpackage.json',
        '/assets/..%2F..%2Fpackage.json',
        '/assets/%2e%2e%2fpackage.json',
        '/assets/..%5Croutes.ts',
        '/assets/..%2Fweb%2Froutes.ts',
      ]) {
        const res = await app.request('GET', path);
        expect(res.status, path).to.equal(404);
        const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
        expect(text, path).not.to.include('"devDependencies"').and.not.to.include('webRoutes');
      }
    });
  });
});
