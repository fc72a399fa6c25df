import { expect } from 'chai';
import { safeRedirect } from '../src/http/redirect.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser, DEFAULT_PASSWORD } from './helpers/factories.ts';

/** After login a browser goes only to a path of this service, however the target is encoded. */
describe('post-login redirects stay local', () => {
  const ATTACKS = [
    '/%2F%5Cevil.example',
    '/..%2f..%2fevil.example',
    '/%2e%2e/%2e%2e/evil.example',
    '/%252F%252Fevil.example',
    '//evil.example',
    '/\\evil.example',
    '/%5C%5Cevil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    '/%0d%0aSet-Cookie:x=1',
    '/ok/%E0%A4%A',
    ' /padded',
    '',
    '/a/../../evil',
  ];

  for (const target of ATTACKS) {
    it(`refuses ${JSON.stringify(target)}`, () => {
      expect(safeRedirect(target)).to.equal('/');
    });
  }

  it('keeps local paths, with their query and encoded characters', () => {
    for (const target of ['/', '/dashboards/d/abc', '/search?query=cpu%20load&folder=general', '/d/a%20b#panel-2'])
      expect(safeRedirect(target)).to.equal(target);
  });

  it('refuses what is not a string', () => {
    for (const target of [undefined, null, 42, ['/a']]) expect(safeRedirect(target)).to.equal('/');
  });

  describe('through the API', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp();
      await createUser(app, { login: 'redirected' });
    });
    after(async () => {
      await app.close();
    });

    it('POST /api/login answers redirectUrl "/" for an encoded escape, and GET /api/login/local does not follow one', async () => {
      for (const target of ['/%2F%5Cevil.example', '/..%2f..%2fevil.example']) {
        const login = await app.request('POST', `/api/login?redirect=${encodeURIComponent(target)}`, {
          body: { user: 'redirected', password: DEFAULT_PASSWORD },
        });
        expect(login.status).to.equal(200);
        expect(login.body.redirectUrl, target).to.equal('/');
        const local = await app.request('GET', `/api/login/local?redirect=${encodeURIComponent(target)}`);
        expect(local.status).to.equal(302);
        expect(local.headers.get('location'), target).to.not.include('evil');
      }
    });
  });
});
