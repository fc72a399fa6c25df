/**
 * A real Grafana Loki (3.7.8, built once by tools/loki.sh: no Debian package exists) on free
 * loopback ports, owned by the test: its own temp dir, `auth_enabled: true` (a request without
 * `X-Scope-OrgID` is 401 `no org id`), filesystem storage and an in-memory ring, fixed log lines
 * pushed for one tenant before the test reads them, stopped by pid.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './prometheus.ts';

const LOKI_VERSION = 'v3.7.8';

/** `LOKI_BIN` when set, else where tools/loki.sh caches it. */
export const LOKI_BIN =
  process.env.LOKI_BIN || path.join(process.env.GATEHOUSE_CACHE || path.join(os.homedir(), '.cache', 'gatehouse'), `loki-${LOKI_VERSION}`, 'loki');

/** The tenant the log lines belong to (sent as `X-Scope-OrgID`), and one that has none. */
export const TENANT = 'gatehouse-tenant-7f3a';
export const OTHER_TENANT = 'gatehouse-tenant-empty';

/**
 * The lines pushed for TENANT: `{job="checkout", level}` one per second from the instance's `t0`
 * (unix seconds, a whole minute shortly before start: Loki refuses lines older than a week and
 * its labels API looks at the last six hours by default).
 */
export const LINES = [
  { level: 'info', line: 'order 1001 placed' },
  { level: 'error', line: 'order 1002 payment declined' },
  { level: 'info', line: 'order 1003 placed' },
  { level: 'error', line: 'order 1004 payment declined' },
  { level: 'info', line: 'order 1005 placed' },
] as const;

export interface RunningLoki {
  url: string;
  /** The first line's time, unix seconds; line i is at t0 + i. */
  t0: number;
  stop(): Promise<void>;
}

/** Line i's timestamp as Loki returns it: nanoseconds, as a string. */
export const lineTimestamp = (t0: number, index: number) => `${BigInt(t0 + index) * 1_000_000_000n}`;

function config(dir: string, httpPort: number, grpcPort: number): string {
  return `auth_enabled: true
server:
  http_listen_address: 127.0.0.1
  http_listen_port: ${httpPort}
  grpc_listen_address: 127.0.0.1
  grpc_listen_port: ${grpcPort}
  log_level: warn
common:
  path_prefix: ${dir}
  instance_addr: 127.0.0.1
  replication_factor: 1
  ring:
    kvstore:
      store: inmemory
  storage:
    filesystem:
      chunks_directory: ${dir}/chunks
      rules_directory: ${dir}/rules
schema_config:
  configs:
    - from: 2024-01-01
      store: tsdb
      object_store: filesystem
      schema: v13
      index:
        prefix: index_
        period: 24h
# Pointing both at its own gRPC port makes it ready in ~3.5 s rather than ~20 s.
frontend:
  scheduler_address: 127.0.0.1:${grpcPort}
frontend_worker:
  scheduler_address: 127.0.0.1:${grpcPort}
ingester:
  lifecycler:
    min_ready_duration: 0s
# The streams carry only the labels pushed (no service_name or detected_level added by Loki).
limits_config:
  discover_service_name: []
  discover_log_levels: false
analytics:
  reporting_enabled: false
`;
}

async function waitUntilReady(url: string, exited: () => number | null, logs: () => string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (exited() !== null) throw new Error(`loki exited (${exited()}): ${logs()}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`loki did not become ready: ${logs()}`);
}

async function push(url: string, t0: number): Promise<void> {
  const streams = ['info', 'error'].map((level) => ({
    stream: { job: 'checkout', level },
    values: LINES.flatMap((entry, index) => (entry.level === level ? [[lineTimestamp(t0, index), entry.line]] : [])),
  }));
  const res = await fetch(`${url}/loki/api/v1/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-scope-orgid': TENANT },
    body: JSON.stringify({ streams }),
  });
  if (res.status !== 204) throw new Error(`loki push: ${res.status} ${await res.text()}`);
}

export async function startLoki(): Promise<RunningLoki> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-loki-'));
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  fs.writeFileSync(path.join(dir, 'loki.yml'), config(dir, httpPort, grpcPort));
  const child = spawn(LOKI_BIN, [`-config.file=${path.join(dir, 'loki.yml')}`], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = `http://127.0.0.1:${httpPort}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(
      url,
      () => child.exitCode,
      () => stderr,
    );
    const t0 = Math.floor(Date.now() / 60_000) * 60 - 60;
    await push(url, t0);
    return { url, t0, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
