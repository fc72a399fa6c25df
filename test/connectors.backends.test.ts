/**
 * A connector against real Prometheus servers (Debian `prometheus`, started by the test on free
 * loopback ports, data backfilled with promtool): the connectivity test, instant and range
 * queries, the read-only proxy, basic auth and mTLS; and against a recording loopback server,
 * what is and is not sent (bearer and custom headers, never the caller's cookie or Authorization)
 * and what comes back (no upstream header). Without prometheus the suite is skipped, except in CI.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeTestCerts, type TestCerts } from './helpers/certs.ts';
import { api, createUser, DENIED, type TestUser } from './helpers/factories.ts';
import { startVictoriaMetrics, VM_BEARER_TOKEN, type RunningVictoriaMetrics } from './helpers/victoria-metrics.ts';
import { BASIC_PASSWORD, BASIC_USER, ROOMS, startPrometheus, T0, type RunningPrometheus } from './helpers/prometheus.ts';
import { peerAvailable, requirePeer } from './helpers/peers.ts';

const ORG = 'org_main';

describe('connectors: backends', function () {
  let app: TestApp;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let certs: TestCerts;
  const servers: RunningPrometheus[] = [];
  let plain: RunningPrometheus;
  let basic: RunningPrometheus;
  let mtls: RunningPrometheus;
  let victoria: RunningVictoriaMetrics | undefined;

  before(async function () {
    requirePeer(this, 'prometheus');
    certs = makeTestCerts();
    // One at a time: the machine has two cores and each server reads its blocks at start.
    for (const auth of [{ kind: 'none' as const }, { kind: 'basic' as const }, { kind: 'mtls' as const, certs }]) servers.push(await startPrometheus(auth));
    [plain, basic, mtls] = servers as [RunningPrometheus, RunningPrometheus, RunningPrometheus];
    // its tests skip without it (or fail under CI): see the bearer-token describe
    if (peerAvailable('victoria-metrics')) victoria = await startVictoriaMetrics();
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    for (const server of servers) await server.stop();
    await victoria?.stop();
    await app?.close();
    if (certs) fs.rmSync(certs.dir, { recursive: true, force: true });
  });

  const as = (who: TestUser) => api(app, who);
  let names = 0;
  async function connector(url: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await as(admin).post('/api/connectors', { name: `prom-${++names}`, type: 'tsmetrics', url, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }

  describe('POST /api/connectors/:uid/test', () => {
    it('401, 403 for an Editor and a Viewer (needs write); OK with the label names for an admin', async () => {
      const uid = await connector(plain.url);
      expect((await app.request('POST', `/api/connectors/${uid}/test`)).status).to.equal(401);
      for (const who of [editor, viewer]) {
        const denied = await as(who).post(`/api/connectors/${uid}/test`);
        expect(denied.status).to.equal(403);
        expect(denied.body.message).to.match(DENIED);
      }
      const res = await as(admin).post(`/api/connectors/${uid}/test`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        status: 'OK',
        message: 'Successfully queried the Prometheus API: 2 label names',
        details: { labels: ['__name__', 'room'] },
      });
    });

    it('basic auth: OK with the password, the backend status and its message without or with a wrong one', async () => {
      const good = await connector(basic.url, { jsonData: { basicAuthUser: BASIC_USER }, secureJsonData: { basicAuthPassword: BASIC_PASSWORD } });
      expect((await as(admin).post(`/api/connectors/${good}/test`)).body.status).to.equal('OK');
      const wrong = await connector(basic.url, { jsonData: { basicAuthUser: BASIC_USER }, secureJsonData: { basicAuthPassword: 'not-the-password' } });
      const none = await connector(basic.url);
      for (const uid of [wrong, none]) {
        const res = await as(admin).post(`/api/connectors/${uid}/test`);
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.equal({ status: 'ERROR', message: 'backend answered 401: Unauthorized', details: { status: 401, error: 'Unauthorized' } });
        expect(JSON.stringify(res.body)).not.to.contain('not-the-password');
      }
    });

    it('mTLS: OK with the client certificate and CA; without the certificate the handshake fails', async () => {
      const tlsSecrets = { tlsClientCert: certs.clientCert, tlsClientKey: certs.clientKey, tlsCACert: certs.ca };
      const good = await connector(mtls.url, { jsonData: { tlsAuth: true, tlsAuthWithCACert: true }, secureJsonData: tlsSecrets });
      const res = await as(admin).post(`/api/connectors/${good}/test`);
      expect(res.body, JSON.stringify(res.body)).to.include({ status: 'OK' });
      const noCert = await connector(mtls.url, { jsonData: { tlsAuthWithCACert: true }, secureJsonData: { tlsCACert: certs.ca } });
      const refused = await as(admin).post(`/api/connectors/${noCert}/test`);
      expect(refused.status).to.equal(400);
      expect(refused.body.status).to.equal('ERROR');
      expect(refused.body.message).to.match(new RegExp(`^backend 127\\.0\\.0\\.1:${mtls.port} unreachable: `));
      const untrusted = await connector(mtls.url, {
        jsonData: { tlsAuth: true },
        secureJsonData: { tlsClientCert: certs.clientCert, tlsClientKey: certs.clientKey },
      });
      expect((await as(admin).post(`/api/connectors/${untrusted}/test`)).body.message).to.match(/unreachable: TLS failed/);
    });

    it('refuses an address the policy refuses, naming the variable, and reports an unreachable backend', async () => {
      const metadata = await connector('http://169.254.169.254/');
      const refused = await as(admin).post(`/api/connectors/${metadata}/test`);
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.equal({
        status: 'ERROR',
        message:
          'connections to 169.254.169.254 are refused: link-local (cloud metadata); set CONNECTOR_ALLOWED_NETWORKS to a CIDR that contains it to allow it',
        details: {},
      });
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const down = await connector(`http://127.0.0.1:${port}`);
      expect((await as(admin).post(`/api/connectors/${down}/test`)).body.message).to.equal(`backend 127.0.0.1:${port} unreachable: connection refused`);
    });

    it('a changes connector has no backend to test', async () => {
      const res = await as(admin).post('/api/connectors', { name: 'deploys', type: 'changes' });
      const tested = await as(admin).post(`/api/connectors/${res.body.uid}/test`);
      expect(tested.status).to.equal(400);
      expect(tested.body.message).to.match(/has no backend/);
    });
  });

  describe('bearer token (VictoriaMetrics behind vmauth)', () => {
    before(function () {
      requirePeer(this, 'victoria-metrics');
    });

    it('tests and queries with the token; a wrong token is refused, and its echo never reaches the caller', async () => {
      const good = await connector(victoria!.url, { secureJsonData: { bearerToken: VM_BEARER_TOKEN } });
      expect((await as(admin).post(`/api/connectors/${good}/test`)).body).to.deep.include({ status: 'OK', details: { labels: ['__name__', 'room'] } });
      const query = await as(viewer).post(`/api/connectors/${good}/query`, { query: 'sum(demo_temperature)', time: T0 + 300 });
      expect(query.body).to.deep.equal({ resultType: 'vector', series: [{ labels: {}, values: [[T0 + 300, ROOMS.cellar + ROOMS.kitchen + 10]] }] });
      const wrongToken = 'wrong-bearer-token-value';
      const wrong = await connector(victoria!.url, { secureJsonData: { bearerToken: wrongToken } });
      const tested = await as(admin).post(`/api/connectors/${wrong}/test`);
      expect(tested.status).to.equal(400);
      // vmauth answers a wrong token with 400 and repeats it
      expect(tested.body).to.deep.equal({
        status: 'ERROR',
        message: 'backend answered 400: cannot find the provided auth token "Bearer [redacted]" in config',
        details: { status: 400, error: 'cannot find the provided auth token "Bearer [redacted]" in config' },
      });
      const proxied = await as(viewer).get(`/api/connectors/proxy/uid/${wrong}/api/v1/labels`);
      expect(proxied.status).to.equal(400);
      expect(JSON.stringify(proxied.body)).to.contain('[redacted]').and.not.to.contain(wrongToken);
      const queried = await as(viewer).post(`/api/connectors/${wrong}/query`, { query: 'up' });
      expect(queried.status).to.equal(400);
      expect(queried.body.message).not.to.contain(wrongToken);
    });
  });

  describe('POST /api/connectors/:uid/query', () => {
    let uid: string;
    before(async () => (uid = await connector(plain.url)));
    const bySeries = (a: { labels: { room: string } }, b: { labels: { room: string } }) => a.labels.room.localeCompare(b.labels.room);

    it('401; a Viewer runs an instant query, normalised', async () => {
      expect((await app.request('POST', `/api/connectors/${uid}/query`, { body: { query: 'up' } })).status).to.equal(401);
      const res = await as(viewer).post(`/api/connectors/${uid}/query`, { query: 'demo_temperature', time: T0 + 300 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.resultType).to.equal('vector');
      expect(res.body.series.sort(bySeries)).to.deep.equal([
        { labels: { __name__: 'demo_temperature', room: 'cellar' }, values: [[T0 + 300, ROOMS.cellar + 5]] },
        { labels: { __name__: 'demo_temperature', room: 'kitchen' }, values: [[T0 + 300, ROOMS.kitchen + 5]] },
      ]);
    });

    it('a range query, and a scalar', async () => {
      const range = await as(viewer).post(`/api/connectors/${uid}/query`, {
        query: 'demo_temperature{room="kitchen"}',
        type: 'range',
        start: T0,
        end: T0 + 120,
        step: 60,
      });
      expect(range.body).to.deep.equal({
        resultType: 'matrix',
        series: [
          {
            labels: { __name__: 'demo_temperature', room: 'kitchen' },
            values: [
              [T0, 20],
              [T0 + 60, 21],
              [T0 + 120, 22],
            ],
          },
        ],
      });
      const scalar = await as(viewer).post(`/api/connectors/${uid}/query`, { query: 'scalar(sum(demo_temperature))', time: T0 });
      expect(scalar.body).to.deep.equal({ resultType: 'scalar', series: [{ labels: {}, values: [[T0, ROOMS.cellar + ROOMS.kitchen]] }] });
    });

    it("the backend's refusal of a bad query is a 400 with its message; a range without step is a 400", async () => {
      const bad = await as(viewer).post(`/api/connectors/${uid}/query`, { query: 'sum(', time: T0 });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.deep.equal({ message: 'backend answered 400: invalid parameter "query": 1:5: parse error: unclosed left parenthesis' });
      const noStep = await as(viewer).post(`/api/connectors/${uid}/query`, { query: 'up', type: 'range', start: T0, end: T0 + 60 });
      expect(noStep.status).to.equal(400);
      expect(noStep.body.message).to.equal('a range query needs start, end and step');
    });

    it('a connector whose list names only a grantee is queried by the grantee (and admins) alone', async () => {
      const restricted = await connector(plain.url);
      const grantee = await createUser(app, { role: 'Viewer' });
      const listed = await as(admin).post(`/api/connectors/${restricted}/permissions`, { items: [{ userId: grantee.id, permission: 1 }] });
      expect(listed.status).to.equal(200);
      const body = { query: 'demo_temperature', time: T0 };
      const denied = await as(viewer).post(`/api/connectors/${restricted}/query`, body);
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
      expect((await as(grantee).post(`/api/connectors/${restricted}/query`, body)).status).to.equal(200);
      expect((await as(admin).post(`/api/connectors/${restricted}/query`, body)).status).to.equal(200);
      expect((await as(viewer).post(`/api/connectors/${uid}/query`, body)).status).to.equal(200);
    });
  });

  describe('GET|POST /api/connectors/proxy/uid/:uid/<path>', () => {
    let uid: string;
    before(async () => (uid = await connector(basic.url, { jsonData: { basicAuthUser: BASIC_USER }, secureJsonData: { basicAuthPassword: BASIC_PASSWORD } })));
    const proxy = (path: string) => `/api/connectors/proxy/uid/${uid}/${path}`;

    it("401; forwards the Prometheus read paths with the connector's credentials", async () => {
      expect((await app.request('GET', proxy('api/v1/labels'))).status).to.equal(401);
      const labels = await as(viewer).get(proxy('api/v1/labels'));
      expect(labels.status).to.equal(200);
      expect(labels.body).to.deep.equal({ status: 'success', data: ['__name__', 'room'] });
      const values = await as(viewer).get(proxy('api/v1/label/room/values'));
      expect(values.body.data).to.deep.equal(['cellar', 'kitchen']);
      const query = await as(viewer).get(proxy(`api/v1/query?query=${encodeURIComponent('demo_temperature{room="cellar"}')}&time=${T0}&orgId=${ORG}`));
      expect(query.body.data.result).to.deep.equal([{ metric: { __name__: 'demo_temperature', room: 'cellar' }, value: [T0, '12'] }]);
      const series = await as(viewer).get(proxy(`api/v1/series?${encodeURIComponent('match[]')}=demo_temperature&start=${T0}&end=${T0 + 600}`));
      expect(series.body.data).to.have.length(2);
    });

    it('forwards a form POST as it came (repeated and bracketed names)', async () => {
      const form = new URLSearchParams([
        ['match[]', 'demo_temperature{room="kitchen"}'],
        ['match[]', 'demo_temperature{room="cellar"}'],
        ['start', String(T0)],
        ['end', String(T0 + 600)],
      ]);
      const res = await app.request('POST', proxy('api/v1/series'), {
        cookie: viewer.cookie,
        rawBody: form.toString(),
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.map((s: { room: string }) => s.room).sort()).to.deep.equal(['cellar', 'kitchen']);
      const query = await app.request('POST', proxy('api/v1/query'), {
        cookie: viewer.cookie,
        rawBody: `query=sum(demo_temperature)&time=${T0}`,
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(query.body.data.result[0].value).to.deep.equal([T0, '32']);
    });

    it("passes the backend's own errors through, and refuses every other path (404)", async () => {
      const bad = await as(viewer).get(proxy('api/v1/query?query=sum('));
      expect(bad.status).to.equal(400);
      expect(bad.body.errorType).to.equal('bad_data');
      for (const path of [
        'api/v1/admin/tsdb/delete_series',
        'api/v1/write',
        'api/v1/status/config',
        '-/quit',
        'api/v1/query/../admin/tsdb/snapshot',
        'api/v1/label/../../-/quit/values',
        'federate',
      ]) {
        const refused = await as(admin).post(proxy(path));
        expect(refused.status, path).to.equal(404);
      }
    });

    it('403 for a caller who may not query the connector', async () => {
      const none = await createUser(app, { role: 'None' });
      expect((await as(none).get(proxy('api/v1/labels'))).status).to.equal(403);
    });
  });

  describe('what reaches a backend, and what comes back', () => {
    let recorder: http.Server;
    let seen: http.IncomingHttpHeaders[];
    let paths: string[];
    let url: string;
    before(async () => {
      seen = [];
      paths = [];
      recorder = http.createServer((req, res) => {
        seen.push(req.headers);
        paths.push(req.url!);
        res.setHeader('content-type', 'application/json');
        res.setHeader('set-cookie', 'upstream=1');
        res.setHeader('x-upstream-internal', 'leak');
        res.end('{"status":"success","data":["__name__"]}');
      });
      await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/prefix/`;
    });
    after(() => new Promise<void>((resolve) => recorder.close(() => resolve())));

    it("sends the bearer token and custom headers, never the caller's cookie or Authorization; keeps the URL's path", async () => {
      const uid = await connector(url, {
        jsonData: { httpHeaderName1: 'X-Scope-OrgID' },
        secureJsonData: { bearerToken: 'backend-token', httpHeaderValue1: 'tenant-7' },
      });
      seen.length = 0;
      paths.length = 0;
      const res = await app.request('GET', `/api/connectors/proxy/uid/${uid}/api/v1/labels`, {
        cookie: viewer.cookie,
        headers: { 'x-scope-orgid': 'caller-tenant', 'x-forwarded-for': '10.9.9.9' },
      });
      expect(res.status).to.equal(200);
      const [headers] = seen;
      expect(headers).to.include({ authorization: 'Bearer backend-token', 'x-scope-orgid': 'tenant-7' });
      expect(headers).not.to.have.property('cookie');
      expect(headers).not.to.have.property('x-forwarded-for');
      expect(res.headers.get('set-cookie')).to.equal(null);
      expect(res.headers.get('x-upstream-internal')).to.equal(null);
      const token = await app.request('POST', `/api/connectors/${uid}/test`, { cookie: admin.cookie });
      expect(token.body.status).to.equal('OK');
      expect(seen[1]!.authorization).to.equal('Bearer backend-token');
      expect(paths).to.deep.equal(['/prefix/api/v1/labels', '/prefix/api/v1/labels']);
    });
  });
});
