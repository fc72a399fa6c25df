import { expect } from 'chai';
import Koa from 'koa';
import pino from 'pino';
import { errorMiddleware } from '../src/http/error-middleware.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser } from './helpers/factories.ts';

describe('HTTP layer', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { BODY_LIMIT_BYTES: '2048' } });
  });
  after(async () => {
    await app.close();
  });

  it('answers malformed JSON with 400 {message}', async () => {
    const res = await app.request('POST', '/api/setup/admin', { rawBody: '{"name": ' });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({ message: 'request body is not valid JSON' });
  });

  it('answers a non-JSON content type with 400', async () => {
    const res = await app.request('POST', '/api/setup/admin', { rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded' });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.match(/must be JSON/);
  });

  it('answers a missing body with 400', async () => {
    const res = await app.request('POST', '/api/setup/admin');
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal('request body is required');
  });

  it('answers an oversized body with 413', async () => {
    const res = await app.request('POST', '/api/setup/admin', { body: { name: 'x'.repeat(4096), email: 'a@b.c', password: 'long-enough-password' } });
    expect(res.status).to.equal(413);
    expect(res.body.message).to.match(/too large/);
  });

  it('answers an unknown API path with 404 {message}', async () => {
    const res = await app.request('GET', '/api/does-not-exist');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ message: 'not found' });
  });

  it('answers an invalid query parameter with 400', async () => {
    const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    const res = await app.request('GET', '/api/admin/audit-log?perpage=lots', { cookie: admin.cookie });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.match(/perpage must be integer/);
  });

  it('treats a dead session cookie as anonymous: public routes work, protected ones say the session expired', async () => {
    expect((await app.request('GET', '/api/setup/config', { cookie: 'svc_session=stale' })).status).to.equal(200);
    const res = await app.request('GET', '/api/user', { cookie: 'svc_session=stale' });
    expect(res.status).to.equal(401);
    expect(res.body.message).to.equal('session expired or revoked');
  });

  it('finds the session cookie among others, quoted or not, and not in a cookie whose name only ends like it', async () => {
    const user = await createUser(app);
    const value = user.cookie.slice('svc_session='.length);
    const me = async (cookie: string) => (await app.request('GET', '/api/user', { cookie })).status;
    expect(await me(`theme=dark; svc_session=${value}; lang=en`)).to.equal(200);
    expect(await me(`theme=dark;svc_session="${value}"`)).to.equal(200);
    expect(await me(`xsvc_session=${value}`)).to.equal(401);
    expect(await me(`svc_session=; other=${value}`)).to.equal(401);
    // the first of two is the one read, as the cookies package reads it
    expect(await me(`svc_session=stale; svc_session=${value}`)).to.equal(401);
  });

  it('refuses a Bearer token it does not know with 401', async () => {
    const res = await app.request('GET', '/api/user', { token: 'svc_pat_unknown' });
    expect(res.status).to.equal(401);
    const apiKey = await app.request('GET', '/api/setup/config', { headers: { 'x-api-key': 'garbage' } });
    expect(apiKey.status).to.equal(401);
  });

  it('answers a malformed Authorization header with 401', async () => {
    const res = await app.request('GET', '/api/user', { headers: { authorization: 'Basic abc' } });
    expect(res.status).to.equal(401);
    expect(res.body.message).to.match(/Bearer/);
  });
});

describe('error rendering', () => {
  async function renderError(thrown: unknown) {
    const app = new Koa();
    app.use(errorMiddleware(pino({ level: 'silent' })));
    app.use(() => {
      throw thrown;
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/api/x`);
    const body = await res.json();
    server.close();
    return { status: res.status, body };
  }

  it('redacts unexpected errors as 500 {message}', async () => {
    const res = await renderError(new Error('SELECT secret FROM somewhere failed'));
    expect(res).to.deep.equal({ status: 500, body: { message: 'internal server error' } });
  });

  it('translates a unique violation of either dialect into 409', async () => {
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'ER_DUP_ENTRY']) {
      const err = Object.assign(new Error('Duplicate entry x for key users_login_unique'), { code });
      const res = await renderError(err);
      expect(res.status).to.equal(409);
      expect(res.body.message).to.equal('a resource with the same unique value already exists');
    }
  });
});
