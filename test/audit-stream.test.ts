/**
 * The audit stream: every committed audit entry reaches the sink at least once, in order per
 * org, through the outbox written with the entry. A real VictoriaLogs is the sink (behind a
 * proxy the test can take down and that records the order lines went through); a webhook and
 * Loki's push API are played by a receiver in the test.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { startAuditStream } from '../src/audit/stream.ts';
import { DEFAULT_ORG_ID } from '../src/orgs/store.ts';
import { startTestApp, testConfig, type TestApp } from './helpers/app.ts';
import { startReceiver, startRecordingProxy, type Receiver, type RecordingProxy } from './helpers/audit-sink.ts';
import { api, buildOrgWithPeople, createUser, type TestUser } from './helpers/factories.ts';
import { requirePeer } from './helpers/peers.ts';
import { startVictoriaLogs, type RunningVictoriaLogs } from './helpers/victoria-logs.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is true, at most `ms`. */
async function eventually(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

interface Stored {
  id: string;
  seq: number;
  org: string;
}

/** Every audit entry VictoriaLogs holds for tenant `accountId`, repeats included. */
export async function storedEntries(victoriaLogs: RunningVictoriaLogs, accountId: number): Promise<Stored[]> {
  const body = new URLSearchParams({ query: '* | fields id, seq, org', start: '0' });
  const res = await fetch(`${victoriaLogs.url}/select/logsql/query`, { method: 'POST', body, headers: { AccountID: String(accountId), ProjectID: '0' } });
  expect(res.status).to.equal(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; seq: string; org: string })
    .map((line) => ({ id: line.id, seq: Number(line.seq), org: line.org }));
}

/**
 * The stream's promise, checked on what arrived: after dropping repeats by id, every id of
 * `expectedIds` exactly once and nothing else; each org's numbers 1..n without a gap; and the
 * lines that went through the proxy in each org's order (a repeat comes after its first delivery).
 */
export function expectDeliveredInOrder(stored: Stored[], expectedIds: string[], proxy: RecordingProxy): void {
  const unique = new Map(stored.map((entry) => [entry.id, entry]));
  expect(unique.size).to.equal(expectedIds.length);
  expect([...unique.keys()].sort()).to.deep.equal([...expectedIds].sort());
  const byOrg = new Map<string, number[]>();
  for (const entry of unique.values()) byOrg.set(entry.org, [...(byOrg.get(entry.org) ?? []), entry.seq]);
  for (const [org, seqs] of byOrg)
    expect(
      seqs.sort((a, b) => a - b),
      org,
    ).to.deep.equal(seqs.map((_, i) => i + 1));
  const firstSeen = new Map<string, number>();
  const lastSeqOf = new Map<string, number>();
  for (const line of proxy.taken) {
    if (firstSeen.has(line.id as string)) continue;
    firstSeen.set(line.id as string, Number(line.seq));
    const previous = lastSeqOf.get(line.org as string) ?? 0;
    expect(Number(line.seq), `org ${line.org as string}: ${line.seq as number} after ${previous}`).to.equal(previous + 1);
    lastSeqOf.set(line.org as string, Number(line.seq));
  }
}

async function auditIds(app: { db: TestApp['db'] }): Promise<string[]> {
  return (await app.db('audit_log').select('id')).map((row: { id: string }) => row.id);
}

describe('audit stream', function () {
  this.timeout(180_000);
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
