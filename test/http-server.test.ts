import net from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../src/config.ts';
import { createServer, listen, MAX_HEADER_BYTES } from '../src/http/server.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser } from './helpers/factories.ts';

/** Sends raw bytes and returns the whole answer (the server closes the connection after it). */
function rawRequest(port: number, request: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Given, so that loading the configuration writes no generated secret anywhere. */
const SECRETS = { SECRET_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };

const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

describe('the HTTP server: HOST, and what Node and the router refuse, as JSON', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('answers an over-long URL with 431 and a JSON {message}', async () => {
    const port = Number(new URL(app.url).port);
    const answer = await rawRequest(port, `GET /api/user?x=${'a'.repeat(MAX_HEADER_BYTES)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(answer).to.match(/^HTTP\/1\.1 431 /);
    expect(answer.toLowerCase()).to.include('content-type: application/json');
    expect(bodyOf(answer).message).to.match(/exceed \d+ bytes/);
  });

  it('answers over-large headers with 431 and a malformed request with 400, both JSON', async () => {
    const port = Number(new URL(app.url).port);
    const large = await rawRequest(port, `GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`);
    expect(large).to.match(/^HTTP\/1\.1 431 /);
    const malformed = await rawRequest(port, 'NOT A REQUEST\r\n\r\n');
    expect(malformed).to.match(/^HTTP\/1\.1 400 /);
    expect(bodyOf(malformed)).to.deep.equal({ message: 'malformed HTTP request' });
  });

  it('answers a method the path lacks with 405, the Allow header and a JSON {message}', async () => {
    const res = await app.request('PATCH', '/api/login');
    expect(res.status).to.equal(405);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.headers.get('allow')).to.include('POST');
    expect(res.body.message).to.equal('method PATCH is not allowed on /api/login (allowed: POST)');
  });

  it('routes by path as the router always has: any case, a trailing slash, a static segment before a parameter, 404 and 501', async () => {
    const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    for (const path of ['/api/user', '/API/User', '/api/user/']) {
      const res = await app.request('GET', path, { cookie: admin.cookie });
      expect(res.status, path).to.equal(200);
      expect(res.body.login, path).to.equal(admin.login);
    }
    const search = await app.request('GET', '/api/teams/search', { cookie: admin.cookie });
    expect(search.status).to.equal(200);
    expect(search.body).to.have.property('teams');
    expect((await app.request('GET', '/assets/style.css')).status).to.equal(200);
    expect((await app.request('GET', '/metrics/')).status).to.not.equal(404);
    for (const path of ['/api', '/api/nothing-here', '/api/teams/search/more', '/nothing/here', '//api/user']) {
      expect((await app.request('GET', path, { cookie: admin.cookie })).status, path).to.equal(404);
    }
    expect((await app.request('GET', '/api/nothing-here', { cookie: admin.cookie })).body).to.deep.equal({ message: 'not found' });
    for (const path of ['/api/user', '/nothing/here']) {
      expect((await app.request('PROPFIND', path, { cookie: admin.cookie })).status, path).to.equal(501);
    }
  });

  it('listens only on HOST when it is set', async () => {
    const config = loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.2', PORT: '0', ...SECRETS });
    expect(config.host).to.equal('127.0.0.2');
    const server = createServer(app.built.app);
    const { address, port } = await listen(server, config.host, config.port);
    try {
      expect(address).to.equal('127.0.0.2');
      const reached = await fetch(`http://127.0.0.2:${port}/api/login/providers`);
      expect(reached.status).to.equal(200);
      const elsewhere = await fetch(`http://127.0.0.1:${port}/api/login/providers`).then(
        () => 'connected',
        (err: { cause?: { code?: string } }) => err.cause?.code,
      );
      expect(elsewhere).to.equal('ECONNREFUSED');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a PORT out of range as a configuration error', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', PORT: '70000', ...SECRETS })).to.throw('PORT must be at most 65535, got 70000');
  });
});
