/**
 * A real VictoriaLogs (Apache-2.0; built once by tools/victoria-logs.sh with `go install`) on a
 * free loopback port, owned by the test: its own temp dir, stopped by pid. `ingest` writes
 * newline-delimited JSON lines through `/insert/jsonline` and waits until a query over their
 * time range finds them (they are searchable about a second after the write).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './prometheus.ts';

const VICTORIA_LOGS_VERSION = 'v1.52.1';

/** `VICTORIA_LOGS_BIN` when set, else where tools/victoria-logs.sh caches it. */
export const VICTORIA_LOGS_BIN =
  process.env.VICTORIA_LOGS_BIN ||
  path.join(process.env.GATEHOUSE_CACHE || path.join(os.homedir(), '.cache', 'gatehouse'), `victoria-logs-${VICTORIA_LOGS_VERSION}`, 'victoria-logs');

/** One log line as ingested: `ts` (RFC 3339) is the time field, `msg` the message; the rest are fields. */
export type LogLine = { ts: string; msg: string } & Record<string, string>;

export interface Tenant {
  accountId?: number;
  projectId?: number;
}

export interface RunningVictoriaLogs {
  url: string;
  /**
   * Writes `lines` with `streamFields` as the stream's fields, for `tenant` (default 0:0), and
   * resolves once a query over the tenant sees at least `lines.length` more lines than before,
   * and a query naming each stream sees that stream's.
   */
  ingest(lines: LogLine[], options?: { streamFields?: string[]; tenant?: Tenant }): Promise<void>;
  stop(): Promise<void>;
}

function tenantHeaders(tenant: Tenant = {}): Record<string, string> {
  return { AccountID: String(tenant.accountId ?? 0), ProjectID: String(tenant.projectId ?? 0) };
}

/** The tenant's lines from `start` on (RFC 3339 or unix seconds) that `filter` selects, by a stats query over that range. */
async function countLines(url: string, tenant?: Tenant, start = '0', filter = '*'): Promise<number> {
  const body = new URLSearchParams({ query: `${filter} | stats count() as n`, start, end: new Date(Date.now() + 3_600_000).toISOString() });
  const res = await fetch(`${url}/select/logsql/query`, { method: 'POST', body, headers: tenantHeaders(tenant) });
  if (res.status !== 200) throw new Error(`victoria-logs count: ${res.status} ${await res.text()}`);
  const text = (await res.text()).trim();
  return text ? Number((JSON.parse(text.split('\n')[0]!) as { n: string }).n) : 0;
}

async function hasStreamFields(url: string, tenant: Tenant | undefined, start: string, fields: readonly string[]): Promise<boolean> {
  if (fields.length === 0) return true;
  const params = new URLSearchParams({ query: '*', start });
  const res = await fetch(`${url}/select/logsql/stream_field_names?${params}`, { headers: tenantHeaders(tenant) });
  if (res.status !== 200) throw new Error(`victoria-logs stream field names: ${res.status} ${await res.text()}`);
  const names = new Set(((await res.json()) as { values: Array<{ value: string }> }).values.map((entry) => entry.value));
  return fields.every((field) => names.has(field));
}

async function waitUntilHealthy(url: string, exited: () => number | null, logs: () => string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (exited() !== null) throw new Error(`victoria-logs exited (${exited()}): ${logs()}`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`victoria-logs did not become healthy: ${logs()}`);
}

export async function startVictoriaLogs(): Promise<RunningVictoriaLogs> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-victoria-logs-'));
  const port = await freePort();
  const child = spawn(
    VICTORIA_LOGS_BIN,
    [`-storageDataPath=${path.join(dir, 'data')}`, `-httpListenAddr=127.0.0.1:${port}`, '-loggerLevel=ERROR', '-retentionPeriod=100y'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const ingest: RunningVictoriaLogs['ingest'] = async (lines, options = {}) => {
    // counted over the lines' own time range, the way a reader asks for them
    const since = lines.map((line) => line.ts).sort()[0] ?? '0';
    const streamFields = options.streamFields ?? [];
    // Each stream by its own stream filter too: a query naming a stream reads the streams' index,
    // which becomes searchable apart from the lines (and from other streams' entries).
    const streams = new Map<string, number>();
    for (const line of lines) {
      const filter = `{${streamFields.map((field) => `${field}=${JSON.stringify(line[field] ?? '')}`).join(',')}}`;
      streams.set(filter, (streams.get(filter) ?? 0) + 1);
    }
    if (streamFields.length === 0) streams.clear();
    const before = await countLines(url, options.tenant, since);
    const streamsBefore = new Map<string, number>();
    for (const filter of streams.keys()) streamsBefore.set(filter, await countLines(url, options.tenant, since, filter));
    const params = new URLSearchParams({ _time_field: 'ts', _msg_field: 'msg', _stream_fields: (options.streamFields ?? []).join(',') });
    const res = await fetch(`${url}/insert/jsonline?${params}`, {
      method: 'POST',
      headers: { 'content-type': 'application/stream+json', ...tenantHeaders(options.tenant) },
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    });
    if (res.status !== 200 && res.status !== 204) throw new Error(`victoria-logs ingest: ${res.status} ${await res.text()}`);
    const everyStreamCounted = async () => {
      for (const [filter, count] of streams) if ((await countLines(url, options.tenant, since, filter)) < streamsBefore.get(filter)! + count) return false;
      return true;
    };
    for (let attempt = 0; attempt < 200; attempt++) {
      const counted = (await countLines(url, options.tenant, since)) >= before + lines.length;
      // the streams' index too: the field-name endpoints read it rather than the lines
      if (counted && (await hasStreamFields(url, options.tenant, since, streamFields)) && (await everyStreamCounted())) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`victoria-logs: ${lines.length} ingested lines did not become searchable`);
  };
  try {
    await waitUntilHealthy(
      url,
      () => child.exitCode,
      () => stderr,
    );
    return { url, ingest, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
