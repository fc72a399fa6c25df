import { expect } from 'chai';
import { safeRedirect } from '../src/identity/post-login-redirect.ts';
import { createUser, DEFAULT_PASSWORD } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const ATTACKS = [
  '/%2F%5Cevil.example',
  '/..%2f..%2fevil.example',
  '/%252F%252Fevil.example',
  '/%25252F%25252Fevil.example',
  '//evil.example',
  '/\\evil.example',
  '/\t/evil.example',
  '/%09/evil.example',
  '/%0d%0aLocation:%20https://evil.example',
  'https://evil.example',
  'javascript:alert(1)',
  'evil.example',
  '/../evil.example',
  '/a/../../evil.example',
  '/%2e%2e/%2e%2e/evil.example',
  '/%E0%A4%A',
  '',
];

describe('post-login redirect', () => {
  describe('safeRedirect', () => {
    for (const target of ATTACKS) {
      it(`sends ${JSON.stringify(target)} to /`, () => {
        expect(safeRedirect(target)).to.equal('/');
      });
    }

    it('keeps local paths, with their query and fragment', () => {
      for (const target of ['/', '/dashboards/d/abc', '/dashboards?tab=2&q=a%20b', '/d/x#panel-2', '/a/./b/../c', '/search?q=caf%C3%A9']) {
        expect(safeRedirect(target), target).to.equal(target);
      }
    });

    it('sends a non-string to /', () => {
      expect(safeRedirect(undefined)).to.equal('/');
      expect(safeRedirect(['/x'])).to.equal('/');
    });
  });

  describe('POST /api/login?redirect=', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp();
      await createUser(app, { login: 'walker' });
    });
    after(async () => {
      await app.close();
    });

    it("answers redirectUrl / for the issue's examples, whether sent once or twice encoded", async () => {
      for (const target of ['/%2F%5Cevil.example', '/..%2f..%2fevil.example']) {
        for (const query of [target, encodeURIComponent(target)]) {
          const res = await app.request('POST', `/api/login?redirect=${query}`, { body: { user: 'walker', password: DEFAULT_PASSWORD } });
          expect(res.status, query).to.equal(200);
          expect(res.body.redirectUrl, query).to.equal('/');
        }
      }
    });

    it('answers a local path as given', async () => {
      const res = await app.request('POST', `/api/login?redirect=${encodeURIComponent('/dashboards/d/abc?tab=2')}`, {
        body: { user: 'walker', password: DEFAULT_PASSWORD },
      });
      expect(res.body.redirectUrl).to.equal('/dashboards/d/abc?tab=2');
    });
  });
});
