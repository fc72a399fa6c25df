/**
 * VictoriaMetrics (Debian `victoria-metrics`) behind `vmauth` for bearer-token and basic auth, both on free
 * loopback ports, owned by the test and stopped by pid. The samples of prometheus.ts are
 * imported (`/api/v1/import/prometheus`, then `/internal/force_flush`) before the test queries.
 * vmauth forwards the client's Authorization, so VictoriaMetrics itself needs none.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOMS, seriesLines, T0, type SeriesSample } from './prometheus.ts';

export const VM_BEARER_TOKEN = 'vm-test-bearer-token';
/** vmauth's basic-auth user: a wrong password is refused with the Authorization header repeated. */
export const VM_BASIC_USER = 'vm-basic-user';
export const VM_BASIC_PASSWORD = 'vm-basic-password';

export interface RunningVictoriaMetrics {
  /** vmauth's URL: what a connector points at. */
  url: string;
  stop(): Promise<void>;
}

async function waitFor(url: string, child: ChildProcess, logs: () => string, accept: (status: number) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`${url}: exited (${child.exitCode}): ${logs()}`);
    try {
      if (accept((await fetch(url)).status)) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not become ready: ${logs()}`);
}

function run(command: string, args: string[], dir: string) {
  const child = spawn(command, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid!, 'SIGTERM');
    await exited;
  };
  return { child, logs: () => stderr, stop };
}

/** `series`: more samples to import beside demo_temperature. */
export async function startVictoriaMetrics(series: readonly SeriesSample[] = []): Promise<RunningVictoriaMetrics> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-vm-'));
  const [vmPort, authPort] = [await freePort(), await freePort()];
  const vm = run(
    'victoria-metrics',
    [`-storageDataPath=${path.join(dir, 'data')}`, `-httpListenAddr=127.0.0.1:${vmPort}`, '-search.latencyOffset=0s', '-retentionPeriod=100y'],
    dir,
  );
  const target = `http://127.0.0.1:${vmPort}`;
  fs.writeFileSync(
    path.join(dir, 'auth.yml'),
    [
      'users:',
      `  - bearer_token: "${VM_BEARER_TOKEN}"`,
      `    url_prefix: "${target}"`,
      `  - username: "${VM_BASIC_USER}"`,
      `    password: "${VM_BASIC_PASSWORD}"`,
      `    url_prefix: "${target}"`,
      '',
    ].join('\n'),
  );
  const auth = run('vmauth', [`-auth.config=${path.join(dir, 'auth.yml')}`, `-httpListenAddr=127.0.0.1:${authPort}`], dir);
  const stop = async () => {
    await auth.stop();
    await vm.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const vmUrl = `http://127.0.0.1:${vmPort}`;
    await waitFor(`${vmUrl}/health`, vm.child, vm.logs, (status) => status === 200);
    const lines: string[] = [];
    for (let minute = 0; minute < 10; minute++) {
      for (const [room, base] of Object.entries(ROOMS)) lines.push(`demo_temperature{room="${room}"} ${base + minute} ${(T0 + minute * 60) * 1000}`);
    }
    lines.push(...seriesLines(series, 1000));
    const imported = await fetch(`${vmUrl}/api/v1/import/prometheus`, { method: 'POST', body: `${lines.join('\n')}\n` });
    if (imported.status !== 204) throw new Error(`import failed: ${imported.status} ${await imported.text()}`);
    await fetch(`${vmUrl}/internal/force_flush`);
    // Without a token vmauth answers 401: listening is all that is asked here.
    await waitFor(`http://127.0.0.1:${authPort}/api/v1/labels`, auth.child, auth.logs, (status) => status === 401 || status === 400);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${authPort}`, stop };
}
