/**
 * The audit stream through a crash: the service runs as its own process, the sink is down while
 * entries are written, the process is killed (SIGKILL) and started again, twice, and once the
 * sink is back every entry arrives, in order per org. And a bad stream configuration stops the
 * process at startup with a named error (exit 2).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createDb } from '../src/db/knex.ts';
import { createTestDatabase, type Database } from './helpers/app.ts';
import { eventually, expectDeliveredInOrder, inParallel, startRecordingProxy, storedEntries, type RecordingProxy } from './helpers/audit-sink.ts';
import { requirePeer } from './helpers/peers.ts';
import { startServiceProcess, type ServiceProcess } from './helpers/service-process.ts';
import { startVictoriaLogs, type RunningVictoriaLogs } from './helpers/victoria-logs.ts';

const ADMIN = { email: 'stream-admin@example.test', password: 'a long enough password' };

interface Session {
  url: string;
  cookie: string;
}

async function signIn(url: string): Promise<Session> {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: ADMIN.email, password: ADMIN.password }),
  });
  expect(res.status, await res.clone().text()).to.equal(200);
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_session='))!
    .split(';')[0]!;
  return { url, cookie };
}

async function call(session: Session, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${session.url}${urlPath}`, {
    method,
    headers: { cookie: session.cookie, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** `count` audited writes in parallel: the main org's preferences, and a few orgs made and renamed. */
async function write(session: Session, count: number, label: string): Promise<void> {
  await inParallel(
    Array.from({ length: count }, (_, i) => i),
    10,
    async (i) => {
      const res =
        i % 10 === 0
          ? await call(session, 'POST', '/api/orgs', { name: `${label} org ${i}` })
          : await call(session, 'PUT', '/api/org/preferences', { theme: i % 2 ? 'light' : 'dark' });
      expect(res.status, JSON.stringify(res.body)).to.equal(i % 10 === 0 ? 201 : 200);
    },
  );
}

describe('audit stream across crashes', function () {
  // several boots of a TypeScript process, slow on a loaded machine
  this.timeout(600_000);
  let victoriaLogs: RunningVictoriaLogs;
  let proxy: RecordingProxy;
  let database: Database;
  let db: Knex;
  let dataDir: string;
  const running: ServiceProcess[] = [];

  before(async function () {
    requirePeer(this, 'victoria-logs');
    victoriaLogs = await startVictoriaLogs();
    proxy = await startRecordingProxy(victoriaLogs.url);
    database = await createTestDatabase();
    db = createDb({ databaseUrl: database.url, sqliteFile: '' });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-stream-'));
  });
  after(async () => {
    for (const service of running) await service.kill('SIGKILL');
    await db?.destroy();
    await database?.drop();
    await proxy?.close();
    await victoriaLogs?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function start(): ServiceProcess {
    const service = startServiceProcess({
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      SEED_ADMIN_EMAIL: ADMIN.email,
      SEED_ADMIN_PASSWORD: ADMIN.password,
      AUDIT_STREAM: 'victorialogs',
      AUDIT_STREAM_URL: proxy.url,
      AUDIT_STREAM_HEADERS: 'AccountID: 21',
      AUDIT_STREAM_BATCH_SIZE: '20',
      AUDIT_STREAM_INTERVAL_MS: '50',
      AUDIT_STREAM_MAX_BACKOFF_MS: '400',
      OUTBOUND_CONNECT_TIMEOUT_MS: '1000',
      OUTBOUND_TIMEOUT_MS: '2000',
    });
    running.push(service);
    return service;
  }

  it('loses no entry when the sink is down and the service is killed and started again, and delivers each org in order', async () => {
    proxy.down = true;
    const first = start();
    const firstSession = await signIn(await first.listening);
    await write(firstSession, 150, 'first');
    await eventually('a failed delivery to show', 30_000, async () => (await call(firstSession, 'GET', '/api/admin/audit-stream')).body.lastError !== null);
    const status = (await call(firstSession, 'GET', '/api/admin/audit-stream')).body;
    expect(status).to.include({ enabled: true, kind: 'victorialogs', target: `${proxy.url}/`, delivered: 0, deadLetters: 0, lastDeliveryAt: null });
    expect(status.pending).to.be.at.least(150);
    expect(status.oldestPendingAt).to.be.a('string');
    expect(status.lastError).to.match(/unreachable: connection reset/);
    await first.kill('SIGKILL');

    const second = start();
    await write(await signIn(await second.listening), 150, 'second');
    proxy.down = false;
    // killed again while it delivers: what the sink took before the kill is sent again
    await eventually('a first delivery', 60_000, () => proxy.taken.length > 0);
    await second.kill('SIGKILL');

    const third = start();
    const thirdSession = await signIn(await third.listening);
    const expected = (await db('audit_log').select('id')).map((row: { id: string }) => row.id);
    expect(expected.length).to.be.at.least(300);
    await eventually(
      'every entry in VictoriaLogs',
      120_000,
      async () => new Set((await storedEntries(victoriaLogs, 21)).map((e) => e.id)).size >= expected.length,
    );
    expectDeliveredInOrder(await storedEntries(victoriaLogs, 21), expected, proxy);
    await eventually('an empty outbox', 30_000, async () => (await call(thirdSession, 'GET', '/api/admin/audit-stream')).body.pending === 0);
    const after = (await call(thirdSession, 'GET', '/api/admin/audit-stream')).body;
    expect(after.lagSeconds).to.equal(0);
    expect(after.lastDeliveryAt).to.be.a('string');
    expect(after.delivered).to.be.at.least(expected.length);
    await third.kill('SIGTERM');
    expect(await third.exited).to.equal(0);
  });

  it('refuses an unknown AUDIT_STREAM, a stream without AUDIT_STREAM_URL and a header it may not send: one line, exit code 2', async () => {
    const refused = async (env: Record<string, string>, message: string) => {
      const service = startServiceProcess({ DATA_DIR: dataDir, ...env });
      running.push(service);
      expect(await service.exited, service.stderr()).to.equal(2);
      expect(service.stderr().trim().split('\n')).to.deep.equal([`configuration error: ${message}`]);
    };
    await Promise.all([
      refused({ AUDIT_STREAM: 'kafka', AUDIT_STREAM_URL: 'http://127.0.0.1:9' }, 'AUDIT_STREAM must be victorialogs, loki or webhook, got "kafka"'),
      refused({ AUDIT_STREAM: 'loki' }, 'AUDIT_STREAM_URL is required when AUDIT_STREAM is set'),
      refused(
        { AUDIT_STREAM: 'loki', AUDIT_STREAM_URL: 'http://127.0.0.1:9', AUDIT_STREAM_HEADERS: 'Host: elsewhere' },
        'AUDIT_STREAM_HEADERS: the header Host cannot be set on a connector',
      ),
    ]);
  });
});
