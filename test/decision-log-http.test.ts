/**
 * DECISION_LOG=http: a collector inside the test receives what OPA's decision-log plugin sends, a
 * gzip-compressed JSON array of decision events; a 500 is retried, a full buffer drops and counts,
 * and what waits is sent at shutdown.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { HttpDecisionSink } from '../src/authz/decision-log-http.ts';
import type { DecisionLogEntry } from '../src/authz/decision-log.ts';
import { readManifest } from '../src/authz/manifest.ts';
import { loadConfig } from '../src/config.ts';
import { AddressPolicy } from '../src/outbound/address-policy.ts';
import { OutboundClient } from '../src/outbound/client.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser } from './helpers/factories.ts';
import { REPO_ROOT } from './helpers/opa.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  method: string;
  entries: DecisionLogEntry[];
}

/** An HTTP collector that answers each request with the next of `statuses` (then 204) and keeps what it received. */
async function startCollector(statuses: number[] = []) {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = statuses.shift() ?? 204;
      if (status < 300) {
        const entries = JSON.parse(gunzipSync(Buffer.concat(chunks)).toString('utf8')) as DecisionLogEntry[];
        received.push({ headers: req.headers, method: req.method ?? '', entries });
      }
      res.writeHead(status).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logs`;
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { url, received, until, statuses, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const delivered = (received: Received[]) => received.flatMap((batch) => batch.entries);

describe('decision log over http', () => {
  describe('the service with DECISION_LOG=http', () => {
    let app: TestApp;
    let collector: Awaited<ReturnType<typeof startCollector>>;

    before(async () => {
      collector = await startCollector();
      app = await startTestApp({ env: { DECISION_LOG: 'http', DECISION_LOG_URL: collector.url } });
    });
    after(async () => {
      await app?.close();
      await collector?.close();
    });

    it("posts gzip-compressed JSON arrays of decision events with OPA's field names", async () => {
      const admin = await createUser(app, { role: 'Admin' });
      const viewer = await createUser(app, { role: 'Viewer' });
      expect((await api(app, admin).get('/api/teams/search')).status).to.equal(200);
      expect((await api(app, viewer).post('/api/teams', { name: 'refused' })).status).to.equal(403);
      const ofViewer = () => delivered(collector.received).find((entry) => entry.input.subject.id === viewer.id && entry.input.action === 'teams:create');
      await collector.until(() => !!ofViewer());

      const batch = collector.received[0]!;
      expect(batch.method).to.equal('POST');
      expect(batch.headers).to.include({ 'content-encoding': 'gzip', 'content-type': 'application/json' });
      const manifest = readManifest(REPO_ROOT);
      const denied = ofViewer()!;
      expect(Object.keys(denied).sort()).to.deep.equal(['bundles', 'decision_id', 'input', 'labels', 'metrics', 'path', 'result', 'timestamp']);
      expect(denied).to.deep.include({
        path: 'authz/decision',
        result: { allow: false, reasons: [{ kind: 'missing', action: 'teams:create' }] },
        bundles: { authz: { revision: manifest.sourceHash } },
      });
      expect(denied.labels).to.include({ app: 'gatehouse', version: manifest.opaVersion });
      const allowed = delivered(collector.received).find((entry) => entry.input.subject.id === admin.id && entry.input.action === 'teams:read')!;
      expect(allowed.result.allow).to.equal(true);
      expect(await app.request<string>('GET', '/metrics').then((res) => res.body)).to.match(/^gatehouse_decision_log_sent_total [1-9]\d*$/m);
    });
  });

  describe('HttpDecisionSink', () => {
    const { outbound } = loadConfig({ SECRET_KEY: 's'.repeat(32), JWT_SECRET: 'j'.repeat(32) });
    const client = new OutboundClient(new AddressPolicy(['0.0.0.0/0', '::/0'], []), outbound);
    const line = (n: number) => `${JSON.stringify({ decision_id: `d${n}` })}\n`;

    it('sends a batch the collector refused again after a backoff, in order, and nothing twice', async () => {
      const collector = await startCollector([500, 503]);
      const failures: unknown[] = [];
      let sent = 0;
      const sink = new HttpDecisionSink(
        { url: collector.url, bufferSize: 100, flushIntervalMs: 10, firstBackoffMs: 20 },
        client,
        { delivered: (n) => (sent += n), dropped: () => {} },
        (err) => failures.push(err),
      );
      try {
        for (let n = 1; n <= 3; n++) sink.write(line(n));
        await collector.until(() => collector.received.length > 0);
        sink.write(line(4));
        await sink.close();
        expect(failures.map((err) => (err as Error).message)).to.deep.equal(['the collector answered 500', 'the collector answered 503']);
        expect(delivered(collector.received).map((entry) => entry.decision_id)).to.deep.equal(['d1', 'd2', 'd3', 'd4']);
        expect(sent).to.equal(4);
        expect(sink.pending).to.equal(0);
      } finally {
        await sink.close();
        await collector.close();
      }
    });

    it('drops and counts what comes while the buffer is full', async () => {
      const collector = await startCollector([500, 500, 500, 500, 500, 500]);
      let dropped = 0;
      const sink = new HttpDecisionSink(
        { url: collector.url, bufferSize: 3, flushIntervalMs: 60_000 },
        client,
        { delivered: () => {}, dropped: (n) => (dropped += n) },
        () => {},
      );
      try {
        for (let n = 1; n <= 5; n++) sink.write(line(n));
        expect(dropped).to.equal(2);
        expect(sink.pending).to.equal(3);
        await sink.flush();
        expect(sink.pending, 'a refused batch stays').to.equal(3);
        collector.statuses.length = 0;
        await sink.close();
        expect(delivered(collector.received).map((entry) => entry.decision_id)).to.deep.equal(['d1', 'd2', 'd3']);
      } finally {
        await collector.close();
      }
    });
  });
});
