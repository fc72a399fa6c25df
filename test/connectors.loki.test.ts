/**
 * A logs connector on Loki's HTTP API, answered by the in-test server of helpers/loki-double.ts
 * (Loki is under the AGPL and is not run here), multi-tenant as `auth_enabled: true` makes Loki:
 * the tenant header as a custom header, the connectivity test, instant and range LogQL queries
 * normalised, the read-only proxy under the `loki/` prefix, and that the tenant never shows in a
 * response or the audit log.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { queryLoki } from '../src/connectors/backends/loki.ts';
import type { Backend } from '../src/connectors/backends/request.ts';
import { BadRequestError } from '../src/errors.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, DENIED, type TestUser } from './helpers/factories.ts';
import { LINES, lineTimestamp, OTHER_TENANT, startLoki, TENANT, type RunningLoki } from './helpers/loki.ts';

describe('connectors: logs on Loki', () => {
  let app: TestApp;
  let loki: RunningLoki;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let none: TestUser;
  /** Every body the service answered in this file: none may show the tenant. */
  const shown: unknown[] = [];

  before(async () => {
    loki = await startLoki();
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    none = await createUser(app, { role: 'None' });
  });
  after(async () => {
    await loki?.stop();
    await app?.close();
  });

  const as = (who: TestUser) => {
    const calls = api(app, who);
    const record = (send: (path: string, body?: unknown) => ReturnType<typeof calls.get>) => async (path: string, body?: unknown) => {
      const res = await send(path, body);
      shown.push(res.body);
      return res;
    };
    return { get: record(calls.get), post: record(calls.post) };
  };
  let names = 0;
  async function connector(url: string, tenant: string | null): Promise<string> {
    const res = await as(admin).post('/api/connectors', {
      name: `loki-${++names}`,
      type: 'logstore',
      url,
      ...(tenant && { jsonData: { httpHeaderName1: 'X-Scope-OrgID' }, secureJsonData: { httpHeaderValue1: tenant } }),
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  const at = (index: number) => lineTimestamp(loki.t0, index);
  const byLevel = (a: { labels: Record<string, string> }, b: { labels: Record<string, string> }) => a.labels.level!.localeCompare(b.labels.level!);

  describe('POST /api/connectors/:uid/test', () => {
    it('401, 403 for an Editor and a Viewer; OK with the label names when the tenant header is set', async () => {
      const uid = await connector(loki.url, TENANT);
      expect((await app.request('POST', `/api/connectors/${uid}/test`)).status).to.equal(401);
      for (const who of [editor, viewer]) {
        const denied = await as(who).post(`/api/connectors/${uid}/test`);
        expect(denied.status).to.equal(403);
        expect(denied.body.message).to.match(DENIED);
      }
      const res = await as(admin).post(`/api/connectors/${uid}/test`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'OK', message: 'Successfully queried the Loki API: 2 label names', details: { labels: ['job', 'level'] } });
    });

    it("without the tenant header: Loki's 401 `no org id`; another tenant: OK with no label", async () => {
      const anonymous = await connector(loki.url, null);
      const refused = await as(admin).post(`/api/connectors/${anonymous}/test`);
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.equal({ status: 'ERROR', message: 'backend answered 401: no org id', details: { status: 401, error: 'no org id' } });
      const other = await connector(loki.url, OTHER_TENANT);
      expect((await as(admin).post(`/api/connectors/${other}/test`)).body).to.deep.equal({
        status: 'OK',
        message: 'Successfully queried the Loki API: 0 label names',
        details: { labels: [] },
      });
    });
  });

  describe('POST /api/connectors/:uid/query', () => {
    let uid: string;
    before(async () => (uid = await connector(loki.url, TENANT)));

    it('401; 403 for a member without query; a Viewer runs a range query, streams normalised, oldest first on request', async () => {
      const body = { query: '{job="checkout"}', type: 'range', start: loki.t0, end: loki.t0 + 60, direction: 'forward' };
      expect((await app.request('POST', `/api/connectors/${uid}/query`, { body })).status).to.equal(401);
      const denied = await as(none).post(`/api/connectors/${uid}/query`, body);
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
      const res = await as(viewer).post(`/api/connectors/${uid}/query`, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.resultType).to.equal('streams');
      expect(res.body.streams.sort(byLevel)).to.deep.equal([
        {
          labels: { job: 'checkout', level: 'error' },
          entries: [
            [at(1), LINES[1].line],
            [at(3), LINES[3].line],
          ],
        },
        {
          labels: { job: 'checkout', level: 'info' },
          entries: [
            [at(0), LINES[0].line],
            [at(2), LINES[2].line],
            [at(4), LINES[4].line],
          ],
        },
      ]);
    });

    it('limit and direction: newest first by default, at most `limit` lines over all streams; a line filter', async () => {
      const newest = await as(viewer).post(`/api/connectors/${uid}/query`, {
        query: '{job="checkout"}',
        type: 'range',
        start: loki.t0,
        end: loki.t0 + 60,
        limit: 2,
      });
      expect(newest.body.streams.sort(byLevel)).to.deep.equal([
        { labels: { job: 'checkout', level: 'error' }, entries: [[at(3), LINES[3].line]] },
        { labels: { job: 'checkout', level: 'info' }, entries: [[at(4), LINES[4].line]] },
      ]);
      const declined = await as(viewer).post(`/api/connectors/${uid}/query`, {
        query: '{job="checkout"} |= "declined"',
        type: 'range',
        start: loki.t0,
        end: loki.t0 + 60,
      });
      expect(declined.body).to.deep.equal({
        resultType: 'streams',
        streams: [
          {
            labels: { job: 'checkout', level: 'error' },
            entries: [
              [at(3), LINES[3].line],
              [at(1), LINES[1].line],
            ],
          },
        ],
      });
    });

    it('metric LogQL as series: an instant vector and a range matrix', async () => {
      const query = 'sum by (level) (count_over_time({job="checkout"}[1m]))';
      const instant = await as(viewer).post(`/api/connectors/${uid}/query`, { query, time: loki.t0 + 10 });
      expect(instant.status, JSON.stringify(instant.body)).to.equal(200);
      expect(instant.body.resultType).to.equal('vector');
      expect(instant.body.series.sort(byLevel)).to.deep.equal([
        { labels: { level: 'error' }, values: [[loki.t0 + 10, 2]] },
        { labels: { level: 'info' }, values: [[loki.t0 + 10, 3]] },
      ]);
      const range = await as(viewer).post(`/api/connectors/${uid}/query`, {
        query: 'sum(count_over_time({job="checkout"}[2s]))',
        type: 'range',
        start: loki.t0,
        end: loki.t0 + 4,
        step: 2,
      });
      expect(range.body).to.deep.equal({
        resultType: 'matrix',
        series: [
          {
            labels: {},
            values: [
              [loki.t0, 1],
              [loki.t0 + 2, 2],
              [loki.t0 + 4, 2],
            ],
          },
        ],
      });
    });

    it('another tenant sees no line', async () => {
      const other = await connector(loki.url, OTHER_TENANT);
      const res = await as(viewer).post(`/api/connectors/${other}/query`, { query: '{job="checkout"}', type: 'range', start: loki.t0, end: loki.t0 + 60 });
      expect(res.body).to.deep.equal({ resultType: 'streams', streams: [] });
    });

    it("a bad LogQL is a 400 with Loki's message; bad limits, direction and ranges are 400s", async () => {
      const bad = await as(viewer).post(`/api/connectors/${uid}/query`, { query: '{job="checkout"', type: 'range', start: loki.t0, end: loki.t0 + 60 });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.deep.equal({ message: 'backend answered 400: parse error at line 1, col 16: syntax error: unexpected $end, expecting } or ,' });
      // Loki 3 answers log lines to range queries only.
      const instantLines = await as(viewer).post(`/api/connectors/${uid}/query`, { query: '{job="checkout"}', time: loki.t0 + 10 });
      expect(instantLines.status).to.equal(400);
      expect(instantLines.body).to.deep.equal({
        message: 'backend answered 400: log queries are not supported as an instant query type, please change your query to a range query type',
      });
      for (const [body, message] of [
        [{ query: '{job="checkout"}', limit: 5001 }, /limit/],
        [{ query: '{job="checkout"}', limit: 0 }, /limit/],
        [{ query: '{job="checkout"}', direction: 'sideways' }, /direction/],
        [{ query: '{job="checkout"}', type: 'range', start: loki.t0 }, /^a range query needs start and end$/],
      ] as const) {
        const res = await as(viewer).post(`/api/connectors/${uid}/query`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.match(message);
      }
    });

    it('queryLoki itself (the chat tool calls it without the route schema) refuses a limit out of range before calling Loki', async () => {
      const untouched: Backend = {
        send: () => Promise.reject(new Error('Loki must not be called')),
        stream: () => Promise.reject(new Error('Loki must not be called')),
      };
      for (const limit of [0, 5001, 2.5]) {
        const refused = await queryLoki(untouched, { query: '{job="checkout"}', type: 'range', start: loki.t0, end: loki.t0 + 60, limit }).catch((err) => err);
        expect(refused, String(limit)).to.be.instanceOf(BadRequestError);
        expect(refused.message).to.equal('limit must be an integer from 1 to 5000');
      }
    });

    it('limit and direction on a metrics connector are a 400', async () => {
      const metrics = await as(admin).post('/api/connectors', { name: 'metrics', type: 'tsmetrics', url: 'http://127.0.0.1:9' });
      const res = await as(viewer).post(`/api/connectors/${metrics.body.uid}/query`, { query: 'up', limit: 10 });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ message: 'limit and direction apply to logs connectors only' });
    });
  });

  describe('GET|POST /api/connectors/proxy/uid/:uid/loki/<path>', () => {
    let uid: string;
    before(async () => (uid = await connector(loki.url, TENANT)));
    const proxy = (path: string) => `/api/connectors/proxy/uid/${uid}/${path}`;

    it("401, 403; forwards Loki's read paths with the tenant header", async () => {
      expect((await app.request('GET', proxy('loki/api/v1/labels'))).status).to.equal(401);
      expect((await as(none).get(proxy('loki/api/v1/labels'))).status).to.equal(403);
      const labels = await as(viewer).get(proxy('loki/api/v1/labels'));
      expect(labels.status).to.equal(200);
      expect(labels.body).to.deep.equal({ status: 'success', data: ['job', 'level'] });
      const values = await as(viewer).get(proxy('loki/api/v1/label/level/values'));
      expect(values.body.data).to.deep.equal(['error', 'info']);
      const series = await as(viewer).get(proxy(`loki/api/v1/series?${encodeURIComponent('match[]')}=${encodeURIComponent('{job="checkout"}')}`));
      expect(series.body.data).to.have.deep.members([
        { job: 'checkout', level: 'error' },
        { job: 'checkout', level: 'info' },
      ]);
      const query = `query=${encodeURIComponent('{level="error"}')}&start=${loki.t0}&end=${loki.t0 + 60}&orgId=org_main`;
      const range = await as(viewer).get(proxy(`loki/api/v1/query_range?${query}`));
      expect(range.status).to.equal(200);
      expect(range.body.data.result).to.deep.equal([
        {
          stream: { job: 'checkout', level: 'error' },
          values: [
            [at(3), LINES[3].line],
            [at(1), LINES[1].line],
          ],
        },
      ]);
    });

    it('forwards a form POST', async () => {
      const form = new URLSearchParams({ query: 'sum(count_over_time({job="checkout"}[1m]))', time: String(loki.t0 + 10) });
      const res = await app.request('POST', proxy('loki/api/v1/query'), {
        cookie: viewer.cookie,
        rawBody: form.toString(),
        contentType: 'application/x-www-form-urlencoded',
      });
      shown.push(res.body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.result).to.deep.equal([{ metric: {}, value: [loki.t0 + 10, '5'] }]);
    });

    it("passes Loki's own errors through, and refuses push, tail, delete and every other path (404)", async () => {
      const bad = await as(viewer).get(proxy(`loki/api/v1/query_range?query=${encodeURIComponent('{job=')}`));
      expect(bad.status).to.equal(400);
      expect(bad.body).to.match(/^parse error/);
      for (const path of [
        'loki/api/v1/push',
        'loki/api/v1/tail',
        'loki/api/v1/delete',
        'loki/api/v1/rules',
        'loki/api/v1/index/stats',
        'loki/api/v1/label/../../push',
        'api/v1/labels',
        'api/v1/push',
        'ready',
        'config',
      ]) {
        const refused = await as(admin).post(proxy(path));
        expect(refused.status, path).to.equal(404);
      }
    });
  });

  describe('what reaches a backend', () => {
    let recorder: http.Server;
    const paths: string[] = [];
    let url: string;
    before(async () => {
      recorder = http.createServer((req, res) => {
        paths.push(req.url!);
        res.statusCode = 500;
        res.setHeader('content-type', 'text/plain');
        res.end(`rpc error: too many outstanding requests for tenant ${req.headers['x-scope-orgid']}\n`);
      });
      await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/prefix`;
    });
    after(() => new Promise<void>((resolve) => recorder.close(() => resolve())));

    it("the log paths go under the URL's own path and the loki/ prefix; a 5xx is a 502 without the tenant", async () => {
      const uid = await connector(url, TENANT);
      const res = await as(viewer).post(`/api/connectors/${uid}/query`, { query: '{job="checkout"}' });
      expect(res.status).to.equal(502);
      expect(res.body).to.deep.equal({ message: 'backend answered 500: rpc error: too many outstanding requests for tenant [redacted]' });
      expect(paths).to.deep.equal(['/prefix/loki/api/v1/query']);
    });
  });

  // Last: mocha runs a suite's own tests before its nested suites, so this one is a suite too.
  describe('after all of the above', () => {
    it('the tenant never appeared in a response or an audit entry', async () => {
      expect(shown.length).to.be.greaterThan(20);
      expect(JSON.stringify(shown)).not.to.contain(TENANT);
      const audit = await app.db('audit_log').select('*');
      expect(audit.length).to.be.greaterThan(0);
      expect(JSON.stringify(audit)).not.to.contain(TENANT);
    });
  });
});
