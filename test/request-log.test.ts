/**
 * Request logs: one line at info per request, failed ones included, with the request id (a
 * trusted proxy's X-Request-Id, else a new one, echoed in the response), method, path, route
 * template, status, duration and principal id; a refused authorization logs its reasons under
 * the same request id; no cookie or token reaches the log.
 */
import { expect } from 'chai';
import { createLineLogger } from '../src/logging/line-writer.ts';
import { api, buildTeam, createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  req?: { method: string; path: string };
  res?: { statusCode: number };
  route?: string;
  principalId?: string | null;
  durationMs?: number;
  reasons?: Array<{ kind: string }>;
  action?: string;
}

const INFO = 30;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function recordingApp(env: Record<string, string> = {}) {
  const raw: string[] = [];
  const logger = createLineLogger({ level: 'info' }, { write: (line: string) => raw.push(line) });
  const lines = () => raw.map((line) => JSON.parse(line) as LogLine);
  return { raw, lines, start: () => startTestApp({ env, logger }) };
}

describe('request logs', () => {
  const log = recordingApp();
  let app: TestApp;
  let user: TestUser;
  before(async () => {
    app = await log.start();
    user = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app.close();
  });

  const completed = (requestId: string | null) => log.lines().filter((line) => line.requestId === requestId && line.res);

  it('logs a request at info with its id, method, path, route template, status, duration and principal', async () => {
    const team = await buildTeam(app, { members: [user.id] });
    const res = await api(app, user).get(`/api/teams/${team.id}?perpage=1`);
    expect(res.status).to.equal(200);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).to.match(UUID);
    const [line, ...more] = completed(requestId);
    expect(more).to.deep.equal([]);
    expect(line).to.deep.include({
      level: INFO,
      msg: 'request completed',
      req: { method: 'GET', path: `/api/teams/${team.id}` },
      res: { statusCode: 200 },
      route: '/api/teams/:id',
      principalId: user.id,
    });
    expect(line!.durationMs).to.be.a('number');
  });

  it('logs requests that end in an error, anonymous ones and unknown paths too', async () => {
    const cases: Array<[Promise<{ headers: Headers }>, number, string, string | null]> = [
      [app.request('GET', '/api/teams/search'), 401, '/api/teams/search', null],
      [api(app, user).post('/api/teams', { name: 'x', unknown: 1 }), 400, '/api/teams', user.id],
      [api(app, user).post('/api/teams', { name: 'refused' }), 403, '/api/teams', user.id],
      [app.request('GET', '/api/nothing/here'), 404, 'unmatched', null],
    ];
    for (const [request, status, route, principalId] of cases) {
      const res = await request;
      const [line] = completed(res.headers.get('x-request-id'));
      expect(line, `${status} ${route}`).to.deep.include({ level: INFO, res: { statusCode: status }, route, principalId });
    }
  });

  it('logs a request that fails unexpectedly at error, with the error under the same request id', async () => {
    const engine = app.services.engine;
    const original = engine.authorize;
    engine.authorize = async () => {
      throw new Error('policy engine exploded');
    };
    try {
      const res = await api(app, user).get('/api/teams/search');
      expect(res.status).to.equal(500);
      const requestId = res.headers.get('x-request-id');
      const [line] = completed(requestId);
      expect(line).to.deep.include({ level: 50, res: { statusCode: 500 }, route: '/api/teams/search', principalId: user.id });
      const unhandled = log.lines().find((entry) => entry.requestId === requestId && entry.msg === 'unhandled error');
      expect(JSON.stringify(unhandled)).to.include('policy engine exploded');
    } finally {
      engine.authorize = original;
    }
  });

  it('logs a refused authorization with its reasons under the request id', async () => {
    const res = await api(app, user).post('/api/teams', { name: 'still refused' });
    expect(res.status).to.equal(403);
    const requestId = res.headers.get('x-request-id');
    const denial = log.lines().find((line) => line.requestId === requestId && line.msg === 'authorization denied');
    expect(denial).to.deep.include({ level: INFO, action: 'teams:create' });
    expect(denial!.reasons).to.deep.equal([{ kind: 'missing', action: 'teams:create' }]);
  });

  it('never logs cookies, tokens or query strings', async () => {
    await app.request('GET', '/api/user?token=secret-in-query', { cookie: user.cookie });
    await app.request('GET', '/api/user', { token: 'svc_pat_not-a-real-token' });
    const text = log.raw.join('');
    expect(text).to.not.include(user.cookie.split('=')[1]);
    expect(text).to.not.include('secret-in-query');
    expect(text).to.not.include('svc_pat_not-a-real-token');
  });

  it('ignores an X-Request-Id from a client that is not a trusted proxy', async () => {
    const res = await app.request('GET', '/api/health', { headers: { 'x-request-id': 'client-chosen-id' } });
    expect(res.headers.get('x-request-id')).to.match(UUID);
    expect(completed('client-chosen-id')).to.deep.equal([]);
  });

  describe('behind a trusted proxy', () => {
    const proxied = recordingApp({ TRUSTED_PROXIES: '127.0.0.1' });
    let behindProxy: TestApp;
    before(async () => {
      behindProxy = await proxied.start();
    });
    after(async () => {
      await behindProxy.close();
    });

    it("keeps the proxy's X-Request-Id, echoes it and logs under it; a malformed one is replaced", async () => {
      const res = await behindProxy.request('GET', '/api/health', { headers: { 'x-request-id': 'edge-7f3a:01' } });
      expect(res.headers.get('x-request-id')).to.equal('edge-7f3a:01');
      expect(proxied.lines().filter((line) => line.requestId === 'edge-7f3a:01' && line.res)).to.have.length(1);

      const odd = await behindProxy.request('GET', '/api/health', { headers: { 'x-request-id': 'has spaces\tand tabs' } });
      expect(odd.headers.get('x-request-id')).to.match(UUID);
    });
  });
});
