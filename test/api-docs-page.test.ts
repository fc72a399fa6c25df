/**
 * GET /api/docs, the API reference page, in a real browser (Debian's chromium, driven by
 * playwright-core): Redoc, served by the service itself, renders the service's OpenAPI document
 * and shows every path of it, with nothing loaded from elsewhere and no error. The page and its
 * scripts are public and read no credential. A screenshot is left under test-artifacts/browser/.
 * Without /usr/bin/chromium the browser part is skipped, except in CI.
 */
import fs from 'node:fs';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { CHROMIUM, launchChromium } from './helpers/chromium.ts';

const REDOCLY_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const SHOTS = fileURLToPath(new URL('../test-artifacts/browser/', import.meta.url));

describe('the API reference page', function () {
  this.timeout(120_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  /** A GET by node:http, which hands over the bytes as sent and adds no header (fetch decompresses, and adds `Cache-Control: no-cache` to a conditional request). */
  function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      http
        .get(`${app.url}${path}`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  }

  describe('over HTTP', () => {
    it('is a public HTML page whose policy loads scripts from this service only', async () => {
      const res = await fetch(`${app.url}/api/docs`, { headers: { cookie: 'svc_session=forged' } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      const policy = res.headers.get('content-security-policy') ?? '';
      expect(policy).to.include("default-src 'none'").and.include("script-src 'self';").and.include("connect-src 'self'").and.include("frame-ancestors 'none'");
      expect(policy).to.not.match(/https?:|\*/);
      const html = await res.text();
      expect(html).to.include('<script src="/api/docs/assets/redoc.standalone.js" defer></script>');
      expect(html).to.not.match(/<script>|https?:\/\/(?!www\.w3\.org)/);
    });

    it("serves Redoc's bundle as JavaScript, gzipped when accepted, revalidated by its ETag", async () => {
      const plain = await fetch(`${app.url}/api/docs/assets/redoc.standalone.js`, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).to.equal(200);
      expect(plain.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
      expect(plain.headers.get('cache-control')).to.equal('no-cache');
      expect(plain.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(plain.headers.get('content-encoding')).to.equal(null);
      const body = Buffer.from(await plain.arrayBuffer());
      expect(body.toString('utf8')).to.include('Redoc');
      const etag = plain.headers.get('etag');
      expect(etag).to.match(/^"[\w-]+"$/);

      const gzipped = await rawGet('/api/docs/assets/redoc.standalone.js', { 'accept-encoding': 'gzip, deflate' });
      expect(gzipped.status).to.equal(200);
      expect(gzipped.headers['content-encoding']).to.equal('gzip');
      expect(gzipped.headers.vary).to.include('Accept-Encoding');
      expect(gzipped.body.length).to.be.lessThan(body.length / 2);
      expect(gunzipSync(gzipped.body).equals(body)).to.equal(true);

      const again = await rawGet('/api/docs/assets/redoc.standalone.js', { 'if-none-match': etag! });
      expect(again.status).to.equal(304);
      expect(again.body.length).to.equal(0);
    });

    it('serves only its own files: anything else is a 404 {message}', async () => {
      for (const name of ['redoc.lib.js', '..%2Fpackage.json', 'api-docs.html', 'constructor', 'hasOwnProperty']) {
        const res = await app.request('GET', `/api/docs/assets/${name}`);
        expect(res.status, name).to.equal(404);
        expect(res.body).to.deep.equal({ message: 'asset not found' });
      }
    });
  });

  describe(`in chromium (${CHROMIUM})`, () => {
    let browser: Browser;
    before(async function () {
      if (!fs.existsSync(CHROMIUM)) {
        if (process.env.CI) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
        console.log(`      skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
        this.skip();
      }
      fs.mkdirSync(SHOTS, { recursive: true });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
    });

    it('renders every path of the OpenAPI document, loading nothing from elsewhere and logging no error', async () => {
      const openApi = (await app.request('GET', '/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        // Redoc's sidebar credits Redocly with a logo from its CDN: the page's policy refuses it, as it should
        if (message.type() === 'error' && !message.text().startsWith(`Loading the image '${REDOCLY_LOGO}' violates the following Content Security Policy`)) {
          problems.push(`console: ${message.text()}`);
        }
      });
      // a request that reaches the network layer for another host would leave the machine: record it, stop it
      await page.route('**/*', async (route) => {
        if (route.request().url().startsWith(`${app.url}/`)) return route.continue();
        foreign.push(route.request().url());
        return route.abort();
      });

      const res = await page.goto(`${app.url}/api/docs`);
      expect(res?.status()).to.equal(200);
      await page.locator('h1', { hasText: 'Gatehouse' }).waitFor({ timeout: 60_000 });
      await page.waitForFunction(() => document.body.textContent?.includes('/api/teams/{id}'), undefined, { timeout: 30_000 });
      await page.screenshot({ path: `${SHOTS}api-docs.png` });

      const text = (await page.locator('body').textContent()) ?? '';
      const missing = Object.keys(openApi.paths).filter((path) => !text.includes(path));
      expect(Object.keys(openApi.paths).length).to.be.greaterThan(100);
      expect(missing, 'paths of the OpenAPI document the page does not show').to.deep.equal([]);
      // every operation's summary is on the page too
      const summaries = Object.values(openApi.paths).flatMap((methods) =>
        Object.values(methods).map((operation) => (operation as { summary?: string }).summary),
      );
      expect(summaries.filter((summary) => summary && !text.includes(summary))).to.deep.equal([]);
      expect(foreign).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
    });
  });
});
