/**
 * What the service makes of a backend that does not answer as its API: a connectivity test or a
 * query answered by another page (an internal HTML page, a proxy's error page) says the status and
 * content type, never the page; the proxy passes an answer on as it comes, within the size limit
 * (an announced length over it is a 502, a longer stream is cut and the client sees it broken
 * off); and a backend's failure is logged once, as a warning with its cause, the connector and the
 * request id, never as an error of the service with a stack. The backend is a loopback server of
 * the test, one behaviour per path prefix.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, type TestUser } from './helpers/factories.ts';

const LIMIT = 64 * 1024;
const PAGE_MARKER = 'internal-page-7c1e: employee directory';
const WARN = 40;
const ERROR = 50;

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  cause?: string;
  resource?: { kind: string; uid: string };
  res?: { statusCode: number };
  err?: unknown;
}

describe('connectors: answers that are not the API, streaming and failures', function () {
  const raw: string[] = [];
  const lines = () => raw.map((line) => JSON.parse(line) as LogLine);
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  let backend: http.Server;
  let base: string;
  let closedPort: number;
  /** The held answer waits for this (or gives up after 10 s, so that a proxy that buffers fails the test rather than hangs it). */
  let release: () => void = () => {};
  let releasedByClient: boolean | null = null;

  before(async () => {
    backend = http.createServer((req, res) => {
      const [, behaviour] = req.url!.split('/');
      const pageStatus = { html: 200, 'missing-html': 404, 'gateway-html': 502 }[behaviour!];
      if (pageStatus) {
        res.writeHead(pageStatus, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<html><body><h1>${PAGE_MARKER}</h1><p>${'staff '.repeat(200)}</p></body></html>`);
      } else if (behaviour === 'other-json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ hello: PAGE_MARKER }));
      } else if (behaviour === 'held') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"status":"success","data":["first"');
        const finish = (byClient: boolean) => {
          clearTimeout(fallback);
          release = () => {};
          releasedByClient = byClient;
          res.end(',"last"]}');
        };
        const fallback = setTimeout(() => finish(false), 10_000);
        release = () => finish(true);
      } else if (behaviour === 'endless') {
        res.writeHead(200, { 'content-type': 'application/json' });
        let sent = 0;
        const more = () => {
          if (res.destroyed || sent > 4 * LIMIT) return res.end();
          sent += 16 * 1024;
          res.write('x'.repeat(16 * 1024));
          setTimeout(more, 5);
        };
        more();
      } else if (behaviour === 'declared') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) });
        res.end('x'.repeat(LIMIT + 1));
      } else if (behaviour === 'overloaded') {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('overloaded\n');
      }
      // 'stalled' never answers
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const logger = pino({ level: 'info' }, { write: (line: string) => raw.push(line) });
    app = await startTestApp({
      env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8', OUTBOUND_MAX_RESPONSE_BYTES: String(LIMIT), OUTBOUND_TIMEOUT_MS: '1000' },
      logger,
    });
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    release();
    backend?.closeAllConnections();
    await new Promise<void>((resolve) => backend?.close(() => resolve()));
    await app?.close();
  });

  let names = 0;
  async function connector(url: string, type: 'tsmetrics' | 'logstore' = 'tsmetrics'): Promise<string> {
    const res = await api(app, admin).post('/api/connectors', { name: `upstream-${++names}`, type, url });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  const proxyUrl = (uid: string, path = 'api/v1/query_range') => `${app.url}/api/connectors/proxy/uid/${uid}/${path}`;

  describe('an answer that is not the API', () => {
    it('the connectivity test says its status and content type, never the page', async () => {
      const cases = [
        [await connector(`${base}/html`), 'backend answered 200 OK (text/html): not a Prometheus API', 200, 'text/html'],
        [await connector(`${base}/html`, 'logstore'), 'backend answered 200 OK (text/html): not a Loki API', 200, 'text/html'],
        [await connector(`${base}/gateway-html`), 'backend answered 502 Bad Gateway (text/html): not a Prometheus API', 502, 'text/html'],
        [await connector(`${base}/other-json`), 'backend answered 200 OK (application/json): not a Prometheus API', 200, 'application/json'],
      ] as const;
      for (const [uid, message, status, contentType] of cases) {
        const res = await api(app, admin).post(`/api/connectors/${uid}/test`);
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.equal({ status: 'ERROR', message, details: { status, contentType } });
      }
    });

    it('a query says the same: a 400 for a 4xx page, a 502 for anything else', async () => {
      const page = await api(app, viewer).post(`/api/connectors/${await connector(`${base}/gateway-html`)}/query`, { query: 'up' });
      expect(page.status).to.equal(502);
      expect(page.body).to.deep.equal({ message: 'backend answered 502 Bad Gateway (text/html): not a Prometheus API' });
      const other = await api(app, viewer).post(`/api/connectors/${await connector(`${base}/html`)}/query`, { query: 'up' });
      expect(other.status).to.equal(502);
      expect(other.body).to.deep.equal({ message: 'backend answered 200 OK (text/html): not a Prometheus API' });
      const missing = await api(app, viewer).post(`/api/connectors/${await connector(`${base}/missing-html`, 'logstore')}/query`, { query: '{job="a"}' });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ message: 'backend answered 404 Not Found (text/html): not a Loki API' });
      expect(JSON.stringify([page.body, other.body, missing.body])).not.to.contain(PAGE_MARKER);
    });
  });

  describe('the proxy', () => {
    it('passes the first bytes of an answer on before the backend has finished it', async () => {
      const uid = await connector(`${base}/held`);
      const res = await fetch(proxyUrl(uid), { headers: { cookie: viewer.cookie } });
      expect(res.status).to.equal(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      release();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
      expect(releasedByClient, 'the client had the first bytes while the backend held the rest').to.equal(true);
      expect(JSON.parse(text)).to.deep.equal({ status: 'success', data: ['first', 'last'] });
    });

    it('keeps the size limit: an announced length over it is a 502, a longer stream is cut and the client sees it broken off', async () => {
      const declared = await api(app, viewer).get(`/api/connectors/proxy/uid/${await connector(`${base}/declared`)}/api/v1/query_range`);
      expect(declared.status).to.equal(502);
      expect(declared.body).to.deep.equal({ message: `backend response is larger than ${LIMIT} bytes` });
      const endless = await connector(`${base}/endless`);
      const outcome = await fetch(proxyUrl(endless), { headers: { cookie: viewer.cookie } }).then(
        (res) =>
          res.arrayBuffer().then(
            () => `complete (${res.status})`,
            () => 'broken off',
          ),
        () => 'broken off',
      );
      expect(outcome).to.equal('broken off');
    });
  });

  describe('the log of a backend failure', () => {
    /** The lines `which` picks, once the request's own is there: it is written when the response is closed, which the client may see first. */
    async function linesWhere(which: (line: LogLine) => boolean): Promise<LogLine[]> {
      for (let attempt = 0; attempt < 100; attempt++) {
        const found = lines().filter(which);
        if (found.some((line) => line.res)) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('no request line');
    }

    it('a 502 and a 504 (a query, the chat tool, the proxy) are one warning each with the cause, connector and request id; no error, no stack', async () => {
      const down = await connector(`http://127.0.0.1:${closedPort}`);
      const stalled = await connector(`${base}/stalled`);
      const overloaded = await connector(`${base}/overloaded`);
      const endless = await connector(`${base}/endless`);
      const before = raw.length;
      const chat = (uid: string) =>
        api(app, viewer).post('/api/chat/tools/metrics_query', {
          agentType: 'investigator',
          permissionMode: 'read_only',
          args: { connector: uid, query: 'up' },
        });
      // cut when it grows past the limit, after its status went (or before: the client is told either way)
      await fetch(proxyUrl(endless), { headers: { cookie: viewer.cookie } }).then(
        (res) => res.arrayBuffer().catch(() => null),
        () => null,
      );
      const cases = [
        [
          await api(app, viewer).post(`/api/connectors/${down}/query`, { query: 'up' }),
          down,
          502,
          `backend 127.0.0.1:${closedPort} unreachable: connection refused`,
        ],
        [
          await api(app, viewer).post(`/api/connectors/${stalled}/query`, { query: 'up' }),
          stalled,
          504,
          `backend ${base.slice(7)} did not answer within 1000 ms`,
        ],
        [await chat(down), down, 502, `backend 127.0.0.1:${closedPort} unreachable: connection refused`],
        [await api(app, viewer).get(`/api/connectors/proxy/uid/${overloaded}/api/v1/labels`), overloaded, 503, 'backend answered 503'],
      ] as const;
      for (const [res, uid, status, cause] of cases) {
        expect(res.status, cause).to.equal(status);
        const requestId = res.headers.get('x-request-id');
        const logged = await linesWhere((line) => line.requestId === requestId);
        expect(logged, cause).to.have.length(1);
        expect(logged[0]).to.deep.include({ level: WARN, msg: 'backend failed', cause, resource: { kind: 'connectors', uid } });
        expect(logged[0]!.res).to.deep.equal({ statusCode: status });
      }
      const [line, ...more] = await linesWhere((entry) => entry.resource?.uid === endless);
      expect(more).to.deep.equal([]);
      expect(line).to.deep.include({ level: WARN, msg: 'backend failed', cause: `backend response is larger than ${LIMIT} bytes` });
      expect(line!.requestId).to.be.a('string');
      const logged = raw.slice(before).join('\n');
      expect(lines().filter((line) => line.level >= ERROR)).to.deep.equal([]);
      expect(logged).not.to.match(/stack|"err"/);
    });
  });
});
