/**
 * A real Prometheus (Debian `prometheus`, 2.42) on a free loopback port, owned by the test: its
 * own temp dir, data backfilled with `promtool tsdb create-blocks-from openmetrics` (so queries
 * are deterministic and nothing waits on a scrape), optional basic auth or mTLS through
 * `--web.config.file`, stopped by pid.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestCerts } from './certs.ts';

/** The samples: `demo_temperature{room}` every minute for ten minutes from T0 (2026-01-01T00:00:00Z). */
export const T0 = 1_767_225_600;
export const ROOMS = { kitchen: 20, cellar: 12 } as const;

export const BASIC_USER = 'prom-test';
export const BASIC_PASSWORD = 'prom-test-password';
/**
 * bcrypt (cost 4) of BASIC_PASSWORD, made once with
 * `python3 -c "import crypt; print(crypt.crypt('prom-test-password', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))"`.
 */
const BASIC_PASSWORD_BCRYPT = '$2b$04$8OQyoXwAth02D/V7tNo/QOkm/60BHV1vIuK3cGnd/m.an4s0RMi0i';

export type PrometheusAuth = { kind: 'none' } | { kind: 'basic' } | { kind: 'mtls'; certs: TestCerts };

export interface RunningPrometheus {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A gauge series of the test data: `base + minute` every minute for ten minutes from T0. */
export interface SeriesSample {
  metric: string;
  labels: Record<string, string>;
  base: number;
}

export interface PrometheusOptions {
  /** Adds `demo_up{host="host-<n>"} 1` at T0 for n = 1..hosts: a query answering many series. */
  hosts?: number;
  /** More series, beside demo_temperature. */
  series?: readonly SeriesSample[];
}

/** The samples of `series` as text-format lines (`name{labels} value timestamp`), timestamps in `unit` per second. */
export function seriesLines(series: readonly SeriesSample[], unit: 1 | 1000): string[] {
  const lines: string[] = [];
  for (const sample of series) {
    const labels = Object.entries(sample.labels)
      .map(([name, value]) => `${name}="${value}"`)
      .join(',');
    for (let minute = 0; minute < 10; minute++) lines.push(`${sample.metric}{${labels}} ${sample.base + minute} ${(T0 + minute * 60) * unit}`);
  }
  return lines;
}

function openMetrics({ hosts = 0, series = [] }: PrometheusOptions): string {
  const lines = ['# HELP demo_temperature A test gauge.', '# TYPE demo_temperature gauge'];
  for (let minute = 0; minute < 10; minute++) {
    for (const [room, base] of Object.entries(ROOMS)) lines.push(`demo_temperature{room="${room}"} ${base + minute} ${T0 + minute * 60}`);
  }
  if (hosts > 0) lines.push('# HELP demo_up A test gauge per host.', '# TYPE demo_up gauge');
  for (let host = 1; host <= hosts; host++) lines.push(`demo_up{host="host-${host}"} 1 ${T0}`);
  // one family at a time, as OpenMetrics wants
  for (const metric of new Set(series.map((sample) => sample.metric))) {
    lines.push(
      `# HELP ${metric} A test gauge.`,
      `# TYPE ${metric} gauge`,
      ...seriesLines(
        series.filter((sample) => sample.metric === metric),
        1,
      ),
    );
  }
  return `${lines.join('\n')}\n# EOF\n`;
}

function webConfig(auth: PrometheusAuth): string | null {
  if (auth.kind === 'basic') return `basic_auth_users:\n  ${BASIC_USER}: '${BASIC_PASSWORD_BCRYPT}'\n`;
  if (auth.kind === 'mtls') {
    const { paths } = auth.certs;
    return [
      'tls_server_config:',
      `  cert_file: ${paths.serverCert}`,
      `  key_file: ${paths.serverKey}`,
      '  client_auth_type: RequireAndVerifyClientCert',
      `  client_ca_file: ${paths.ca}`,
      '',
    ].join('\n');
  }
  return null;
}

async function waitUntilReady(url: string, child: ChildProcess, auth: PrometheusAuth, logs: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${logs()}`);
    // Readiness only: any HTTP answer (401 with basic auth) means it listens; mTLS: the port accepts connections.
    const listening = await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (listening && auth.kind === 'mtls') return;
    if (listening) {
      try {
        const res = await fetch(`${url}/-/ready`);
        if (res.status === 200 || (auth.kind === 'basic' && res.status === 401)) return;
      } catch {
        // not yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`prometheus did not become ready: ${logs()}`);
}

export async function startPrometheus(auth: PrometheusAuth = { kind: 'none' }, options: PrometheusOptions = {}): Promise<RunningPrometheus> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-prometheus-'));
  const data = path.join(dir, 'data');
  fs.writeFileSync(path.join(dir, 'samples.om'), openMetrics(options));
  execFileSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', path.join(dir, 'samples.om'), data], { stdio: 'pipe' });
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 1h\nscrape_configs: []\n');
  const port = await freePort();
  const args = [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${data}`,
    '--storage.tsdb.retention.time=100y',
    `--web.listen-address=127.0.0.1:${port}`,
  ];
  const web = webConfig(auth);
  if (web) {
    fs.writeFileSync(path.join(dir, 'web.yml'), web);
    args.push(`--web.config.file=${path.join(dir, 'web.yml')}`);
  }
  const child = spawn('prometheus', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = `${auth.kind === 'mtls' ? 'https' : 'http'}://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(url, child, auth, () => stderr);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, port, stop };
}
