/**
 * A logs connector on a real VictoriaLogs (`jsonData.backend: "victorialogs"`; the binary of
 * tools/victoria-logs.sh, started once for the file on a free loopback port): its settings, the
 * tenant headers `AccountID`/`ProjectID` as sealed custom headers, the connectivity test, LogsQL
 * line and stats queries, the read-only proxy and what it refuses (writes, internal paths, path
 * tricks), the chat tool `logs_query`, and that the tenant never shows in a response or the audit
 * log. Lines are ingested through `/insert/jsonline` before the reads. Without the binary the
 * suite is skipped, except in CI.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isStatsQuery } from '../src/connectors/backends/victorialogs.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, createUser, DENIED, type TestUser } from './helpers/factories.ts';
import { requirePeer } from './helpers/peers.ts';
import { startVictoriaLogs, type RunningVictoriaLogs } from './helpers/victoria-logs.ts';

/** The tenant the lines belong to; its ids are sealed in the connector, and must never show. */
const ACCOUNT_ID = '48213';
const PROJECT_ID = '90517';
const TENANT = { accountId: Number(ACCOUNT_ID), projectId: Number(PROJECT_ID) };

/** The lines ingested for TENANT, one a second from t0: `app` and `level` are the stream's fields, `region` another field. */
const LINES = [
  { level: 'info', msg: 'order 1001 placed' },
  { level: 'error', msg: 'order 1002 payment declined' },
  { level: 'info', msg: 'order 1003 placed' },
  { level: 'error', msg: 'order 1004 payment declined' },
  { level: 'info', msg: 'order 1005 placed' },
] as const;

describe('connectors: logs on VictoriaLogs', function () {
  let app: TestApp;
  let logs: RunningVictoriaLogs;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let none: TestUser;
  /** A whole minute shortly before now (the connectivity test looks at the last six hours); line i is at t0 + i. */
  let t0: number;
  /** Every body the service answered in this file: none may show the tenant. */
  const shown: unknown[] = [];

  before(async function () {
    requirePeer(this, 'victoria-logs');
    // a peer to start, lines to ingest and an app on MariaDB, on cores others share
    this.timeout(90_000);
    logs = await startVictoriaLogs();
    t0 = Math.floor(Date.now() / 60_000) * 60 - 60;
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
    await logs.ingest(
      LINES.map((line, index) => ({ ts: iso(t0 + index), app: 'checkout', region: 'eu', ...line })),
      { streamFields: ['app', 'level'], tenant: TENANT },
    );
    // the default tenant (0:0) has a line of its own
    await logs.ingest([{ ts: iso(t0), app: 'billing', msg: 'tenant zero' }], { streamFields: ['app'] });
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    none = await createUser(app, { role: 'None' });
  });
  after(async () => {
    await logs?.stop();
    await app?.close();
  });

  const as = (who: TestUser) => {
    const calls = api(app, who);
    const record = (send: (path: string, body?: unknown) => ReturnType<typeof calls.get>) => async (path: string, body?: unknown) => {
      const res = await send(path, body);
      shown.push(res.body);
      return res;
    };
    return { get: record(calls.get), post: record(calls.post), put: record(calls.put) };
  };
  const tenantSettings = {
    jsonData: { backend: 'victorialogs', httpHeaderName1: 'AccountID', httpHeaderName2: 'ProjectID' },
    secureJsonData: { httpHeaderValue1: ACCOUNT_ID, httpHeaderValue2: PROJECT_ID },
  };
  let names = 0;
  async function connector(url: string, tenant = true, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await as(admin).post('/api/connectors', {
      name: `victorialogs-${++names}`,
      type: 'logstore',
      url,
      ...(tenant ? tenantSettings : { jsonData: { backend: 'victorialogs' } }),
      ...extra,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  const ns = (index: number) => `${BigInt(t0 + index) * 1_000_000_000n}`;
  const labels = (level: string) => ({ app: 'checkout', level, region: 'eu' });
  const byLevel = (a: { labels: Record<string, string> }, b: { labels: Record<string, string> }) => a.labels.level!.localeCompare(b.labels.level!);

  describe('settings', () => {
    it('jsonData.backend: loki (the default) or victorialogs, kept and changed by PUT; another value is a 400, as is a backend on another type', async () => {
      const res = await as(admin).post('/api/connectors', { name: 'vl-settings', type: 'logstore', url: logs.url, ...tenantSettings });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.jsonData).to.deep.equal(tenantSettings.jsonData);
      expect(res.body.secureJsonFields).to.deep.equal({ httpHeaderValue1: true, httpHeaderValue2: true });
      const read = await as(viewer).get(`/api/connectors/${res.body.uid}`);
      expect(read.body.jsonData.backend).to.equal('victorialogs');
      const toLoki = await as(admin).put(`/api/connectors/${res.body.uid}`, { jsonData: { ...tenantSettings.jsonData, backend: 'loki' } });
      expect(toLoki.status, JSON.stringify(toLoki.body)).to.equal(200);
      expect(toLoki.body.jsonData.backend).to.equal('loki');
      expect(toLoki.body.secureJsonFields).to.deep.equal({ httpHeaderValue1: true, httpHeaderValue2: true });
      const refusedPut = await as(admin).put(`/api/connectors/${res.body.uid}`, { jsonData: { backend: 'elasticsearch' } });
      expect(refusedPut.status).to.equal(400);
      expect(refusedPut.body).to.deep.equal({ message: 'jsonData.backend must be one of loki, victorialogs' });
      const back = await as(admin).put(`/api/connectors/${res.body.uid}`, { jsonData: tenantSettings.jsonData });
      expect(back.body.jsonData.backend).to.equal('victorialogs');
      for (const [body, message] of [
        [{ type: 'logstore', jsonData: { backend: 'VictoriaLogs' } }, 'jsonData.backend must be one of loki, victorialogs'],
        [{ type: 'logstore', jsonData: { backend: 7 } }, 'jsonData.backend must be one of loki, victorialogs'],
        [{ type: 'tsmetrics', jsonData: { backend: 'victorialogs' } }, 'jsonData.backend applies to logstore connectors only, not tsmetrics'],
      ] as const) {
        const refused = await as(admin).post('/api/connectors', { name: `vl-refused-${++names}`, url: logs.url, ...body });
        expect(refused.status, JSON.stringify(body)).to.equal(400);
        expect(refused.body).to.deep.equal({ message });
      }
      expect((await app.request('POST', '/api/connectors', { body: { name: 'x', type: 'logstore', url: logs.url, ...tenantSettings } })).status).to.equal(401);
      const denied = await as(editor).post('/api/connectors', { name: 'x', type: 'logstore', url: logs.url, ...tenantSettings });
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
    });
  });

  describe('POST /api/connectors/:uid/test', () => {
    it("401, 403 for an Editor and a Viewer; OK with the tenant's stream field names; the default tenant's are others", async () => {
      const uid = await connector(logs.url);
      expect((await app.request('POST', `/api/connectors/${uid}/test`)).status).to.equal(401);
      for (const who of [editor, viewer]) {
        const denied = await as(who).post(`/api/connectors/${uid}/test`);
        expect(denied.status).to.equal(403);
        expect(denied.body.message).to.match(DENIED);
      }
      const res = await as(admin).post(`/api/connectors/${uid}/test`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({
        status: 'OK',
        message: 'Successfully queried the VictoriaLogs API: 2 stream field names',
        details: { labels: ['app', 'level'] },
      });
      const defaultTenant = await as(admin).post(`/api/connectors/${await connector(logs.url, false)}/test`);
      expect(defaultTenant.body).to.deep.equal({
        status: 'OK',
        message: 'Successfully queried the VictoriaLogs API: 1 stream field names',
        details: { labels: ['app'] },
      });
    });
  });

  describe('POST /api/connectors/:uid/query', () => {
    let uid: string;
    before(async () => (uid = await connector(logs.url)));
    const query = (body: Record<string, unknown>, who = viewer) => as(who).post(`/api/connectors/${uid}/query`, body);

    it('401; 403 for a member without query; a range query: streams of the lines, newest first, fields beside the stream as labels', async () => {
      const body = { query: 'app:=checkout', type: 'range', start: t0, end: t0 + 60 };
      expect((await app.request('POST', `/api/connectors/${uid}/query`, { body })).status).to.equal(401);
      const denied = await query(body, none);
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
      const res = await query(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.resultType).to.equal('streams');
      expect(res.body.streams.sort(byLevel)).to.deep.equal([
        {
          labels: labels('error'),
          entries: [
            [ns(3), LINES[3].msg],
            [ns(1), LINES[1].msg],
          ],
        },
        {
          labels: labels('info'),
          entries: [
            [ns(4), LINES[4].msg],
            [ns(2), LINES[2].msg],
            [ns(0), LINES[0].msg],
          ],
        },
      ]);
    });

    it('limit keeps the newest lines, or with direction forward the oldest; a word filter; an instant query reads the lines up to `time`', async () => {
      const newest = await query({ query: '*', type: 'range', start: t0, end: t0 + 60, limit: 2 });
      expect(newest.body.streams.sort(byLevel)).to.deep.equal([
        { labels: labels('error'), entries: [[ns(3), LINES[3].msg]] },
        { labels: labels('info'), entries: [[ns(4), LINES[4].msg]] },
      ]);
      const oldest = await query({ query: '* # every line', type: 'range', start: t0, end: t0 + 60, limit: 2, direction: 'forward' });
      expect(oldest.body.streams.sort(byLevel)).to.deep.equal([
        { labels: labels('error'), entries: [[ns(1), LINES[1].msg]] },
        { labels: labels('info'), entries: [[ns(0), LINES[0].msg]] },
      ]);
      const declined = await query({ query: '{app="checkout"} declined', type: 'range', start: t0, end: t0 + 60 });
      expect(declined.body).to.deep.equal({
        resultType: 'streams',
        streams: [
          {
            labels: labels('error'),
            entries: [
              [ns(3), LINES[3].msg],
              [ns(1), LINES[1].msg],
            ],
          },
        ],
      });
      const instant = await query({ query: 'level:=info', time: t0 + 3 });
      expect(instant.status, JSON.stringify(instant.body)).to.equal(200);
      expect(instant.body.streams).to.deep.equal([
        {
          labels: labels('info'),
          entries: [
            [ns(2), LINES[2].msg],
            [ns(0), LINES[0].msg],
          ],
        },
      ]);
    });

    it('stats queries answer series as metric LogQL does: an instant vector and a range matrix', async () => {
      const instant = await query({ query: '* | stats by (level) count() lines', time: t0 + 10 });
      expect(instant.status, JSON.stringify(instant.body)).to.equal(200);
      expect(instant.body.resultType).to.equal('vector');
      expect(instant.body.series.sort(byLevel)).to.deep.equal([
        { labels: { __name__: 'lines', level: 'error' }, values: [[t0 + 10, 2]] },
        { labels: { __name__: 'lines', level: 'info' }, values: [[t0 + 10, 3]] },
      ]);
      const range = await query({ query: 'app:=checkout | count()', type: 'range', start: t0, end: t0 + 6, step: 2 });
      expect(range.status, JSON.stringify(range.body)).to.equal(200);
      expect(range.body).to.deep.equal({
        resultType: 'matrix',
        series: [
          {
            labels: { __name__: 'count(*)' },
            values: [
              [t0, 2],
              [t0 + 2, 2],
              [t0 + 4, 1],
            ],
          },
        ],
      });
    });

    it('the default tenant sees its own line only, and none of the other', async () => {
      const other = await connector(logs.url, false);
      const res = await as(viewer).post(`/api/connectors/${other}/query`, { query: '*', type: 'range', start: t0, end: t0 + 60 });
      expect(res.body).to.deep.equal({ resultType: 'streams', streams: [{ labels: { app: 'billing' }, entries: [[ns(0), 'tenant zero']] }] });
    });

    it("bad LogsQL is a 400 with VictoriaLogs' message; a stats range without step, bad limits, direction and ranges are 400s", async () => {
      const bad = await query({ query: '{app="checkout"', type: 'range', start: t0, end: t0 + 60 });
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.match(/^backend answered 400: cannot parse `query` arg \[\{app="checkout"\]: unexpected token/);
      const badStats = await query({ query: '* | stats by (level) nonsense()', time: t0 + 10 });
      expect(badStats.status).to.equal(400);
      expect(badStats.body.message).to.match(/^backend answered 4\d\d: .*nonsense/);
      for (const [body, message] of [
        [{ query: '* | stats count()', type: 'range', start: t0, end: t0 + 6 }, /^a stats range query needs start, end and step$/],
        [{ query: '*', type: 'range', start: t0 }, /^a range query needs start and end$/],
        [{ query: '*', limit: 5001 }, /limit/],
        [{ query: '*', limit: 0 }, /limit/],
        [{ query: '*', direction: 'sideways' }, /direction/],
      ] as const) {
        const res = await query(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.match(message);
      }
    });
  });

  describe('GET|POST /api/connectors/proxy/uid/:uid/select/logsql/<path>', () => {
    let uid: string;
    before(async () => (uid = await connector(logs.url)));
    const proxy = (path: string) => `/api/connectors/proxy/uid/${uid}/${path}`;

    it("401, 403; forwards VictoriaLogs' read paths with the tenant headers", async () => {
      expect((await app.request('GET', proxy('select/logsql/field_names?query=*'))).status).to.equal(401);
      expect((await as(none).get(proxy('select/logsql/field_names?query=*'))).status).to.equal(403);
      const fields = await as(viewer).get(proxy('select/logsql/field_names?query=*'));
      expect(fields.status).to.equal(200);
      expect(fields.body.values.map((entry: { value: string }) => entry.value).sort()).to.deep.equal([
        '_msg',
        '_stream',
        '_stream_id',
        '_time',
        'app',
        'level',
        'region',
      ]);
      const values = await as(viewer).get(proxy('select/logsql/field_values?query=*&field=level&orgId=org_main'));
      expect(values.body).to.deep.equal({
        values: [
          { value: 'info', hits: 3 },
          { value: 'error', hits: 2 },
        ],
      });
      const streams = await as(viewer).get(proxy('select/logsql/stream_field_values?query=*&field=app'));
      expect(streams.body).to.deep.equal({ values: [{ value: 'checkout', hits: 5 }] });
      const lines = await app.request('GET', proxy(`select/logsql/query?query=${encodeURIComponent('level:=error')}&limit=1`), { cookie: viewer.cookie });
      shown.push(lines.body);
      expect(lines.status).to.equal(200);
      expect(lines.body).to.include({ _msg: LINES[3].msg, level: 'error', app: 'checkout' });
    });

    it('forwards a form POST (a stats query)', async () => {
      const form = new URLSearchParams({ query: '* | stats count() lines', time: String(t0 + 10) });
      const res = await app.request('POST', proxy('select/logsql/stats_query'), {
        cookie: viewer.cookie,
        rawBody: form.toString(),
        contentType: 'application/x-www-form-urlencoded',
      });
      shown.push(res.body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.result).to.deep.equal([{ metric: { __name__: 'lines' }, value: [t0 + 10, '5'] }]);
    });

    it("passes VictoriaLogs' own errors through; refuses inserts, deletes, internal paths and the live tail (404), and nothing is written", async () => {
      const bad = await as(viewer).get(proxy(`select/logsql/query?query=${encodeURIComponent('{app=')}`));
      expect(bad.status).to.equal(400);
      expect(bad.body).to.match(/^cannot parse `query` arg/);
      for (const path of [
        'insert/jsonline?_msg_field=msg',
        'insert/loki/api/v1/push',
        'insert/elasticsearch/_bulk',
        'internal/force_merge',
        'internal/force_flush',
        'internal/partition/delete',
        'delete/run_task',
        'select/logsql/tail',
        'select/logsql/delete',
        'select/logsql',
        'select/logsql/',
        'select/logsql/query/',
        'select/logsql/query/../../../insert/jsonline',
        'metrics',
        'flags',
        'health',
        'loki/api/v1/labels',
      ]) {
        for (const method of ['GET', 'POST']) {
          const body = method === 'POST' ? { rawBody: '{"msg":"forged"}', contentType: 'application/stream+json' } : {};
          const refused = await app.request(method, proxy(path), { cookie: admin.cookie, ...body });
          expect(refused.status, `${method} ${path}`).to.equal(404);
        }
      }
      const count = await as(viewer).post(`/api/connectors/${uid}/query`, { query: '* | stats count() n', time: t0 + 3600 });
      expect(count.body.series).to.deep.equal([{ labels: { __name__: 'n' }, values: [[t0 + 3600, 5]] }]);
    });
  });

  describe('what reaches a backend', () => {
    let recorder: http.Server;
    const seen: Array<{ method: string; url: string; accountId?: string }> = [];
    let base: string;
    before(async () => {
      recorder = http.createServer((req, res) => {
        seen.push({ method: req.method!, url: req.url!, accountId: req.headers.accountid as string | undefined });
        if (req.url!.includes('/html/')) {
          res.setHeader('content-type', 'text/html');
          res.end('<html>a login page</html>');
          return;
        }
        res.statusCode = 503;
        res.setHeader('content-type', 'text/plain');
        res.end(`cannot serve the query for tenant ${req.headers.accountid}: storage is unavailable\n`);
      });
      await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => recorder.close(() => resolve())));

    /** A request sent as written: fetch would resolve `..` and `%2e%2e` before sending. */
    const raw = (method: string, path: string, cookie: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(app.url);
        const req = http.request(
          { host: url.hostname, port: url.port, method, path, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' } },
          (res) => {
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        req.end(method === 'POST' ? 'query=*' : undefined);
      });

    it("lines and stats go under the URL's own path; a 5xx is a 502 without the tenant; what is not the API is a 502 saying so", async () => {
      const uid = await connector(`${base}/prefix`);
      const lines = await as(viewer).post(`/api/connectors/${uid}/query`, { query: '*', type: 'range', start: t0, end: t0 + 60 });
      expect(lines.status).to.equal(502);
      expect(lines.body).to.deep.equal({ message: 'backend answered 503: cannot serve the query for tenant [redacted]: storage is unavailable' });
      const stats = await as(viewer).post(`/api/connectors/${uid}/query`, { query: '* | count()', time: t0 });
      expect(stats.status).to.equal(502);
      const test = await as(admin).post(`/api/connectors/${uid}/test`);
      expect(test.status).to.equal(400);
      expect(test.body).to.deep.equal({
        status: 'ERROR',
        message: 'backend answered 503: cannot serve the query for tenant [redacted]: storage is unavailable',
        details: { status: 503, error: 'cannot serve the query for tenant [redacted]: storage is unavailable' },
      });
      expect(seen.map(({ method, url }) => `${method} ${url.split('?')[0]}`)).to.deep.equal([
        'POST /prefix/select/logsql/query',
        'POST /prefix/select/logsql/stats_query',
        'GET /prefix/select/logsql/stream_field_names',
      ]);
      expect(seen.every((request) => request.accountId === ACCOUNT_ID)).to.equal(true);
      const html = await connector(`${base}/html`);
      const notTheApi = await as(viewer).post(`/api/connectors/${html}/query`, { query: '*' });
      expect(notTheApi.status).to.equal(502);
      expect(notTheApi.body).to.deep.equal({ message: 'backend answered 200 OK (text/html): not a VictoriaLogs API' });
    });

    it('the proxy refuses path tricks (dot segments, encoded slashes and dots, double slashes) before anything is sent', async () => {
      const uid = await connector(`${base}/prefix`);
      seen.length = 0;
      const prefix = `/api/connectors/proxy/uid/${uid}/`;
      for (const path of [
        'select/logsql/../../insert/jsonline',
        'select/logsql/%2e%2e/%2e%2e/insert/jsonline',
        'select/logsql/query/..%2f..%2f..%2finsert/jsonline',
        'select%2flogsql%2fquery',
        'select/logsql%2Fquery',
        'select/logsql/%71uery',
        'select//logsql/query',
        'select/logsql//query',
        '/select/logsql/query',
        'select/logsql/./query',
        'select/logsql/query%00',
      ]) {
        for (const method of ['GET', 'POST']) {
          const { status, body } = await raw(method, `${prefix}${path}`, viewer.cookie);
          expect(status, `${method} ${path}`).to.equal(404);
          expect(JSON.parse(body).message, path).to.match(/^the proxy forwards only the backend's query paths, not /);
        }
      }
      expect(seen).to.deep.equal([]);
      // the same path as written is forwarded (and the recorder's 503 passed on)
      expect((await raw('GET', `${prefix}select/logsql/query?query=*`, viewer.cookie)).status).to.equal(503);
    });
  });

  describe('the chat tool logs_query', () => {
    before(async () => {
      const res = await as(admin).post('/api/connectors', { name: 'vl-chat', type: 'logstore', url: logs.url, ...tenantSettings });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      await assignRole(app, 'org_main', none.id, 'fixed:chat:user');
    });
    const call = (who: TestUser, args: Record<string, unknown>) =>
      as(who).post('/api/chat/tools/logs_query', { agentType: 'investigator', permissionMode: 'read_only', args });

    it('takes LogsQL: lines newest first bounded by limit, stats as capped series; bad LogsQL a 400; RBAC', async () => {
      const range = { connector: 'vl-chat', start: t0, end: t0 + 60 };
      const lines = await call(viewer, { ...range, query: 'level:=error', limit: 1 });
      expect(lines.status, JSON.stringify(lines.body)).to.equal(200);
      expect(lines.body).to.deep.include({ resultType: 'streams', streams: [{ labels: labels('error'), entries: [[ns(3), LINES[3].msg]] }] });
      expect(lines.body.connector).to.include({ name: 'vl-chat', type: 'logstore', signalType: 'logs' });
      const stats = await call(viewer, { ...range, query: '* | stats by (level) count()', step: 60, maxSeries: 1 });
      expect(stats.status, JSON.stringify(stats.body)).to.equal(200);
      expect(stats.body).to.include({ resultType: 'matrix', truncated: true, totalSeries: 2 });
      expect(stats.body.series).to.have.length(1);
      const bad = await call(viewer, { ...range, query: '{app=' });
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.match(/^backend answered 400: cannot parse `query` arg/);
      const denied = await call(none, { ...range, query: '*' });
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.equal('permission denied: you need connectors:query to do this');
    });
  });

  describe('isStatsQuery', () => {
    it('a stats pipe, or a pipe starting with a stats function, outside quotes, parentheses and comments', () => {
      for (const query of [
        '* | stats count()',
        '* | STATS by (level) count() n',
        'app:=x | count()',
        '* | by (level) count()',
        '* | fields a | stats sum(b) | sort by (b)',
      ])
        expect(isStatsQuery(query), query).to.equal(true);
      for (const query of [
        '*',
        '"| stats count()"',
        "error '| count()'",
        '* # | stats count()',
        'statsd | fields a',
        '* | fields stats',
        'x:in(* | stats count())',
      ])
        expect(isStatsQuery(query), query).to.equal(false);
    });
  });

  // Last: mocha runs a suite's own tests before its nested suites, so this one is a suite too.
  describe('after all of the above', () => {
    it('the tenant never appeared in a response or an audit entry', async () => {
      expect(shown.length).to.be.greaterThan(20);
      const text = JSON.stringify(shown);
      expect(text).not.to.contain(ACCOUNT_ID);
      expect(text).not.to.contain(PROJECT_ID);
      const audit = JSON.stringify(await app.db('audit_log').select('*'));
      expect(audit).not.to.contain(ACCOUNT_ID);
      expect(audit).not.to.contain(PROJECT_ID);
    });
  });
});
