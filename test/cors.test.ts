import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('CORS_ORIGINS', () => {
  describe('unset', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp();
    });
    after(async () => {
      await app.close();
    });

    it('lets any origin call, without credentials', async () => {
      const res = await app.request('GET', '/api/access-control/status', { headers: { origin: 'https://anywhere.example' } });
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    });

    it('answers a preflight with 204 and the allowed methods and headers', async () => {
      const res = await app.request('OPTIONS', '/api/user', { headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'PUT' } });
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-methods')).to.include('PUT');
      expect(res.headers.get('access-control-allow-headers')).to.include('X-Svc-Org-Id');
    });
  });

  describe('with a list', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ env: { CORS_ORIGINS: 'https://ui.example, https://admin.example/' } });
    });
    after(async () => {
      await app.close();
    });

    it('allows a listed origin with credentials', async () => {
      const res = await app.request('GET', '/api/access-control/status', { headers: { origin: 'https://admin.example' } });
      expect(res.headers.get('access-control-allow-origin')).to.equal('https://admin.example');
      expect(res.headers.get('access-control-allow-credentials')).to.equal('true');
      expect(res.headers.get('vary')).to.match(/origin/i);
    });

    it('gives an unlisted origin no CORS headers, and its preflight none either', async () => {
      const res = await app.request('GET', '/api/access-control/status', { headers: { origin: 'https://evil.example' } });
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
      const preflight = await app.request('OPTIONS', '/api/user', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' } });
      expect(preflight.headers.get('access-control-allow-methods')).to.equal(null);
    });
  });
});
