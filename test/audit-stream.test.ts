/**
 * The audit stream: every committed audit entry reaches the sink at least once, in order per
 * org, through the outbox written with the entry. A real VictoriaLogs is the sink (behind a
 * proxy the test can take down and that records the order lines went through); a webhook and
 * Loki's push API are played by a receiver in the test.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { startAuditStream } from '../src/audit/stream.ts';
import { effectiveSettings, loadConfig } from '../src/config/load.ts';
import { createTestDatabase, startTestApp, type Database, type TestApp } from './helpers/app.ts';
import { eventually, expectDeliveredInOrder, inParallel, startReceiver, startRecordingProxy, storedEntries, type Receiver } from './helpers/audit-sink.ts';
import { api, buildOrgWithPeople, buildTeam, createUser, DEFAULT_PASSWORD, type TestUser } from './helpers/factories.ts';
import { requirePeer } from './helpers/peers.ts';
import { startVictoriaLogs, type RunningVictoriaLogs } from './helpers/victoria-logs.ts';

async function auditIds(app: { db: TestApp['db'] }): Promise<string[]> {
  return (await app.db('audit_log').select('id')).map((row: { id: string }) => row.id);
}

describe('audit stream', function () {
  // under load, MariaDB takes minutes for the thousand writes
  this.timeout(480_000);
  let victoriaLogs: RunningVictoriaLogs;

  before(async function () {
    requirePeer(this, 'victoria-logs');
    victoriaLogs = await startVictoriaLogs();
  });
  after(async () => {
    await victoriaLogs?.stop();
  });

  it('delivers the entries of 1,000 writes made in parallel through the API to VictoriaLogs exactly once after dropping repeats by id, in order per org', async () => {
    const proxy = await startRecordingProxy(victoriaLogs.url);
    const app = await startTestApp({
      env: {
        AUDIT_STREAM: 'victorialogs',
        AUDIT_STREAM_URL: proxy.url,
        AUDIT_STREAM_HEADERS: 'AccountID: 11, ProjectID: 0',
        AUDIT_STREAM_INTERVAL_MS: '20',
        AUDIT_STREAM_BATCH_SIZE: '200',
      },
    });
    const stop = startAuditStream(app.services);
    try {
      const orgs = await Promise.all([1, 2, 3, 4].map(() => buildOrgWithPeople(app)));
      const writes = Array.from({ length: 1000 }, (_, i) => ({ org: orgs[i % orgs.length]!, theme: i % 2 ? 'light' : 'dark' }));
      await inParallel(writes, 25, async ({ org, theme }) => {
        const res = await api(app, org.admin, org.orgId).put('/api/org/preferences', { theme });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
      });
      const expected = await auditIds(app);
      expect(expected.length).to.be.at.least(1000);
      await eventually(
        'every entry in VictoriaLogs',
        120_000,
        async () => new Set((await storedEntries(victoriaLogs, 11)).map((e) => e.id)).size >= expected.length,
      );
      expectDeliveredInOrder(await storedEntries(victoriaLogs, 11), expected, proxy);
      expect(await app.count('audit_outbox')).to.equal(0);
    } finally {
      await stop();
      await app.close();
      await proxy.close();
    }
  });
});

/** An app streaming to `receiver` with `env`, its deliverer started; `close` stops both. */
async function streamingApp(env: Record<string, string>, database?: Database): Promise<{ app: TestApp; stop(): Promise<void>; close(): Promise<void> }> {
  const app = await startTestApp({ env: { AUDIT_STREAM_INTERVAL_MS: '20', AUDIT_STREAM_MAX_BACKOFF_MS: '100', ...env }, ...(database && { database }) });
  const stop = startAuditStream(app.services);
  return {
    app,
    stop,
    async close() {
      await stop();
      await app.close();
    },
  };
}

const entriesOf = (request: { body: string }) => JSON.parse(request.body) as Array<Record<string, any>>;

describe('audit stream sinks', function () {
  this.timeout(240_000);
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('signs each webhook body with HMAC-SHA256 of AUDIT_STREAM_SECRET in X-Gatehouse-Signature, and streams no token or password', async () => {
    const secret = 'webhook-signing-key-0123456789';
    const { app, close } = await streamingApp({
      AUDIT_STREAM: 'webhook',
      AUDIT_STREAM_URL: `${receiver.url}/hooks/audit?channel=ops`,
      AUDIT_STREAM_SECRET: secret,
      AUDIT_STREAM_BEARER_TOKEN: 'sink-bearer-token-xyz',
    });
    try {
      expect(effectiveSettings(app.services.config)).to.include({
        AUDIT_STREAM: 'webhook',
        AUDIT_STREAM_SECRET: '*****',
        AUDIT_STREAM_BEARER_TOKEN: '*****',
        AUDIT_STREAM_BASIC_AUTH: null,
        AUDIT_STREAM_HEADERS: null,
      });
      const { orgId, admin } = await buildOrgWithPeople(app);
      const account = await api(app, admin, orgId).post('/api/serviceaccounts', { name: 'streamed robot', role: 'Viewer' });
      expect(account.status).to.equal(201);
      const token = await api(app, admin, orgId).post(`/api/serviceaccounts/${account.body.id}/tokens`, { name: 'streamed key' });
      expect(token.status).to.equal(201);
      const newPassword = 'a brand new streamed password';
      expect((await api(app, admin).put('/api/user/password', { oldPassword: DEFAULT_PASSWORD, newPassword })).status).to.equal(200);
      const expected = (await app.db('audit_log').select('id')).map((row: { id: string }) => row.id);
      await eventually('every entry at the webhook', 30_000, () => new Set(receiver.requests.flatMap(entriesOf).map((e) => e.id)).size >= expected.length);

      for (const request of receiver.requests) {
        expect(request.method).to.equal('POST');
        expect(request.path).to.equal('/hooks/audit?channel=ops');
        expect(request.headers['content-type']).to.equal('application/json');
        expect(request.headers.authorization).to.equal('Bearer sink-bearer-token-xyz');
        // what a receiver does: the HMAC of the exact bytes received, compared in constant time
        const signature = request.headers['x-gatehouse-signature'] as string;
        expect(signature).to.equal(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
        expect(signature).not.to.equal(`sha256=${createHmac('sha256', 'another key').update(request.body).digest('hex')}`);
        for (const leaked of [token.body.key as string, newPassword, DEFAULT_PASSWORD, secret, 'sink-bearer-token-xyz'])
          expect(request.body).not.to.include(leaked);
      }
      const entries = receiver.requests.flatMap(entriesOf);
      expect(new Set(entries.map((e) => e.id))).to.deep.equal(new Set(expected));
      const issued = entries.find((entry) => entry.action === 'service_account.token_issued')!;
      expect(issued).to.include({ orgId, actorId: admin.id, outcome: 'success' });
      expect(Object.keys(issued).sort()).to.deep.equal(
        [
          'actorId',
          'actorName',
          'actorType',
          'action',
          'id',
          'ip',
          'metadata',
          'orgId',
          'outcome',
          'seq',
          'targetId',
          'targetName',
          'targetType',
          'timestamp',
          'userAgent',
        ].sort(),
      );
      expect(issued.id).to.match(/^aud_/);
    } finally {
      await close();
    }
  });

  it('pushes to Loki one stream per org, entries as JSON lines at their time in nanoseconds, with basic auth and the tenant header', async () => {
    const { app, close } = await streamingApp({
      AUDIT_STREAM: 'loki',
      AUDIT_STREAM_URL: `${receiver.url}/loki-gateway/`,
      AUDIT_STREAM_BASIC_AUTH: 'audit-writer:loki pass:word',
      AUDIT_STREAM_HEADERS: 'X-Scope-OrgID: audit-tenant',
    });
    try {
      const orgs = await Promise.all([1, 2].map(() => buildOrgWithPeople(app)));
      for (const { orgId, admin } of orgs) for (const theme of ['light', 'dark', 'light']) await api(app, admin, orgId).put('/api/org/preferences', { theme });
      const expected = (await app.db('audit_log').select('id')).map((row: { id: string }) => row.id);
      const lines = () =>
        receiver.requests.flatMap((request) =>
          (JSON.parse(request.body) as { streams: Array<{ stream: Record<string, string>; values: Array<[string, string]> }> }).streams.flatMap(
            ({ stream, values }) => values.map(([at, line]) => ({ stream, at, entry: JSON.parse(line) as Record<string, any> })),
          ),
        );
      await eventually('every entry at Loki', 30_000, () => new Set(lines().map((line) => line.entry.id)).size >= expected.length);

      for (const request of receiver.requests) {
        expect(request.method).to.equal('POST');
        expect(request.path).to.equal('/loki-gateway/loki/api/v1/push');
        expect(request.headers['content-type']).to.equal('application/json');
        expect(request.headers.authorization).to.equal(`Basic ${Buffer.from('audit-writer:loki pass:word').toString('base64')}`);
        expect(request.headers['x-scope-orgid']).to.equal('audit-tenant');
      }
      for (const { stream, at, entry } of lines()) {
        expect(stream).to.deep.equal({ service_name: 'gatehouse', source: 'audit', org: entry.orgId ?? '-' });
        expect(at).to.equal(`${Date.parse(entry.timestamp as string)}000000`);
      }
      for (const { orgId } of orgs) {
        const ofOrg = lines().filter((line) => line.stream.org === orgId);
        expect(ofOrg.map((line) => line.entry.seq)).to.deep.equal(ofOrg.map((_, i) => i + 1));
        expect(ofOrg.filter((line) => line.entry.action === 'org.preferences_updated')).to.have.length(3);
      }
    } finally {
      await close();
    }
  });

  it('gives an entry the sink keeps refusing up after AUDIT_STREAM_MAX_ATTEMPTS, counts it in /metrics and the status, and delivers the rest in order', async () => {
    const { app, close } = await streamingApp({
      AUDIT_STREAM: 'webhook',
      AUDIT_STREAM_URL: `${receiver.url}/hook`,
      AUDIT_STREAM_SECRET: 'k',
      AUDIT_STREAM_MAX_ATTEMPTS: '3',
    });
    const poisoned = (entry: Record<string, any>) => entry.action === 'team.updated' && entry.metadata?.previousName === 'poison';
    receiver.answer = (request) => (entriesOf(request).some(poisoned) ? { status: 422, body: 'entry rejected by schema' } : { status: 204 });
    try {
      const server = await createUser(app, { svcAdmin: true });
      const { orgId, admin } = await buildOrgWithPeople(app);
      const team = await buildTeam(app, { orgId, name: 'poison' });
      expect((await api(app, admin, orgId).put(`/api/teams/${team.id}`, { name: 'renamed' })).status).to.equal(200);
      for (const theme of ['light', 'dark']) expect((await api(app, admin, orgId).put('/api/org/preferences', { theme })).status).to.equal(200);
      const [poison] = await app.db('audit_log').where({ action: 'team.updated' }).select('id');
      const status = async () => (await app.request('GET', '/api/admin/audit-stream', { cookie: server.cookie })).body;
      await eventually('the dead letter and an empty outbox', 30_000, async () => (await status()).pending === 0);

      const body = await status();
      expect(body).to.include({ deadLetters: 1, pending: 0 });
      expect(body.lastError).to.equal('the sink answered 422: entry rejected by schema');
      expect(body.recentDeadLetters).to.have.length(1);
      expect(body.recentDeadLetters[0]).to.include({ id: poison.id, orgId, error: 'the sink answered 422: entry rejected by schema' });
      // sent alone three times, then given up
      expect(receiver.refused.filter((request) => entriesOf(request).length === 1 && entriesOf(request).some(poisoned))).to.have.length(3);
      const delivered = receiver.requests.flatMap(entriesOf);
      const expected = (await app.db('audit_log').whereNot({ id: poison.id }).select('id')).map((row: { id: string }) => row.id);
      expect(new Set(delivered.map((entry) => entry.id))).to.deep.equal(new Set(expected));
      const ofOrg = delivered.filter((entry) => entry.orgId === orgId).map((entry) => entry.seq as number);
      expect(ofOrg).to.deep.equal([...ofOrg].sort((a, b) => a - b));
      expect(new Set(ofOrg).size + 1).to.equal(Math.max(...ofOrg));
      const metrics = (await app.request<string>('GET', '/metrics')).body;
      expect(metrics).to.match(/^gatehouse_audit_stream_dead_letters_total 1$/m);
      expect(metrics).to.match(/^gatehouse_audit_stream_failures_total [1-9]\d*$/m);
      expect(metrics).to.match(/^gatehouse_audit_stream_pending 0$/m);
    } finally {
      await close();
    }
  });

  it('sends from one instance at a time when two share the database, each org in order', async () => {
    receiver.delayMs = 25;
    const database = await createTestDatabase();
    const env = { AUDIT_STREAM: 'webhook', AUDIT_STREAM_URL: `${receiver.url}/hook`, AUDIT_STREAM_SECRET: 'k', AUDIT_STREAM_BATCH_SIZE: '7' };
    const instances = [await streamingApp(env, database), await streamingApp(env, database)];
    try {
      const [one, two] = instances.map((instance) => instance.app) as [TestApp, TestApp];
      const orgs = await Promise.all([1, 2, 3].map(() => buildOrgWithPeople(one)));
      await inParallel(
        Array.from({ length: 120 }, (_, i) => i),
        12,
        async (i) => {
          const { orgId, admin } = orgs[i % orgs.length]!;
          const res = await api(i % 2 ? one : two, admin, orgId).put('/api/org/preferences', { theme: i % 4 < 2 ? 'light' : 'dark' });
          expect(res.status).to.equal(200);
        },
      );
      const expected = (await one.db('audit_log').select('id')).map((row: { id: string }) => row.id);
      await eventually('every entry at the webhook', 120_000, () => new Set(receiver.requests.flatMap(entriesOf).map((e) => e.id)).size >= expected.length);
      expect(receiver.maxInFlight).to.equal(1);
      const delivered = receiver.requests.flatMap(entriesOf);
      expect(delivered.map((entry) => entry.id).sort()).to.deep.equal([...expected].sort());
      for (const { orgId } of orgs) {
        const seqs = delivered.filter((entry) => entry.orgId === orgId).map((entry) => entry.seq as number);
        expect(seqs).to.deep.equal(seqs.map((_, i) => i + 1));
        expect(seqs).to.have.length(40);
      }
    } finally {
      for (const instance of instances) await instance.stop();
      for (const instance of instances) await instance.close();
      await database.drop();
    }
  });

  it('GET /api/admin/audit-stream: 401 without a session, 403 to an org admin, the lag and the last error to a server admin', async () => {
    receiver.down = true;
    const { app, close } = await streamingApp({
      AUDIT_STREAM: 'webhook',
      AUDIT_STREAM_URL: `${receiver.url}/hook?token=in-the-query`,
      AUDIT_STREAM_SECRET: 'k',
    });
    try {
      const server: TestUser = await createUser(app, { svcAdmin: true });
      const { orgId, admin } = await buildOrgWithPeople(app);
      expect((await app.request('GET', '/api/admin/audit-stream')).status).to.equal(401);
      const refused = await app.request('GET', '/api/admin/audit-stream', { cookie: admin.cookie });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal('permission denied: you need audit:read to do this');
      expect((await api(app, admin, orgId).put('/api/org/preferences', { theme: 'light' })).status).to.equal(200);
      const read = async () => (await app.request('GET', '/api/admin/audit-stream', { cookie: server.cookie })).body;
      await eventually('a failed delivery', 30_000, async () => (await read()).lastError !== null);
      app.clock.advance(90_000);
      const body = await read();
      const pending = await app.count('audit_outbox');
      expect(body).to.deep.include({
        enabled: true,
        kind: 'webhook',
        target: `${receiver.url}/hook`,
        pending,
        delivered: 0,
        deadLetters: 0,
        lastDeliveryAt: null,
      });
      expect(pending).to.be.greaterThan(0);
      expect(body.lagSeconds).to.equal(90);
      expect(body.oldestPendingAt).to.equal(new Date(app.clock.now() - 90_000).toISOString());
      expect(body.lastError).to.match(/^backend 127\.0\.0\.1:\d+ unreachable: connection reset$/);
    } finally {
      await close();
    }
  });

  it('GET /api/admin/audit-stream says when the stream is off, and audit entries then skip the outbox', async () => {
    const app = await startTestApp();
    try {
      const server = await createUser(app, { svcAdmin: true });
      const res = await app.request('GET', '/api/admin/audit-stream', { cookie: server.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        enabled: false,
        kind: null,
        target: null,
        pending: 0,
        oldestPendingAt: null,
        lagSeconds: 0,
        lastDeliveryAt: null,
        delivered: 0,
        lastError: null,
        lastErrorAt: null,
        deadLetters: 0,
        recentDeadLetters: [],
      });
      expect(await app.count('audit_log')).to.be.greaterThan(0);
      expect(await app.count('audit_outbox')).to.equal(0);
    } finally {
      await app.close();
    }
  });
});

describe('audit stream configuration', () => {
  const base = { NODE_ENV: 'test', DATA_DIR: 'data', AUDIT_STREAM: 'victorialogs', AUDIT_STREAM_URL: 'http://logs.example:9428' };

  it('reads the stream only when AUDIT_STREAM is set, in any case', () => {
    expect(loadConfig({ NODE_ENV: 'test', DATA_DIR: 'data', AUDIT_STREAM_URL: 'http://logs.example:9428' }).auditStream).to.equal(null);
    expect(loadConfig({ ...base, AUDIT_STREAM: ' VictoriaLogs ' }).auditStream).to.deep.include({
      kind: 'victorialogs',
      url: 'http://logs.example:9428',
      headers: [],
    });
    expect(loadConfig({ ...base, AUDIT_STREAM_HEADERS: 'AccountID: 12, ProjectID: 3' }).auditStream!.headers).to.deep.equal([
      { name: 'AccountID', value: '12' },
      { name: 'ProjectID', value: '3' },
    ]);
  });

  it('names the variable of a refused value', () => {
    const refused = (env: Record<string, string>, message: string) => expect(() => loadConfig({ ...base, ...env })).to.throw(message);
    refused({ AUDIT_STREAM: 'kafka' }, 'AUDIT_STREAM must be victorialogs, loki or webhook, got "kafka"');
    refused({ AUDIT_STREAM_URL: '' }, 'AUDIT_STREAM_URL is required when AUDIT_STREAM is set');
    refused({ AUDIT_STREAM_URL: 'ftp://logs.example' }, 'AUDIT_STREAM_URL must be an http(s) URL, got "ftp://logs.example"');
    refused({ AUDIT_STREAM_BASIC_AUTH: 'no-colon' }, 'AUDIT_STREAM_BASIC_AUTH must be `user:password`');
    refused(
      { AUDIT_STREAM_BASIC_AUTH: 'a:b', AUDIT_STREAM_BEARER_TOKEN: 't' },
      'only one of AUDIT_STREAM_BEARER_TOKEN and AUDIT_STREAM_BASIC_AUTH may set Authorization',
    );
    refused({ AUDIT_STREAM_HEADERS: 'no header name' }, 'AUDIT_STREAM_HEADERS must be a comma-separated list of `Name: value` headers');
    refused({ AUDIT_STREAM_BATCH_SIZE: '0' }, 'AUDIT_STREAM_BATCH_SIZE must be at least 1, got 0');
    refused({ AUDIT_STREAM: 'webhook' }, 'AUDIT_STREAM_SECRET is required when AUDIT_STREAM=webhook');
  });
});
