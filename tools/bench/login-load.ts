/**
 * What a burst of logins does to everyone else. The service runs in its own process (as in
 * production) on a temporary SQLite file; this process is the clients. For each setting it
 * measures the latency of an authenticated `GET /api/user` quiet, then while 50 clients log in
 * back to back, and prints the p50/p99 of both and their ratio (target: loaded p99 ≤ 3× quiet).
 * The same run measures the old behaviour (as many scrypt at once as libuv's 4 threads allow)
 * as the baseline.
 *
 *   npm run bench:login-load                  # 5 s per phase
 *   npm run bench:login-load -- --seconds 10
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const READERS = 10;
const LOGINS = 50;
const PASSWORD = 'bench password correct horse';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function startService(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-login-load-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      DATABASE_URL: '',
      LOG_LEVEL: 'warn',
      // it measures logins and GET /api/user, not the general rate limit, which one client would reach
      RATE_LIMIT_PER_MINUTE: '0',
      JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123456789',
      SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
      SEED_ADMIN_EMAIL: 'bench@example.com',
      SEED_ADMIN_LOGIN: 'bench',
      SEED_ADMIN_PASSWORD: PASSWORD,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i += 1) {
    const up = await fetch(`${url}/api/login/providers`).then(
      () => true,
      () => false,
    );
    if (up) return { url, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new Error('the service did not start');
}

async function login(url: string, user = 'bench'): Promise<{ status: number; cookie: string }> {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user, password: PASSWORD }),
  });
  await res.arrayBuffer();
  return { status: res.status, cookie: (res.headers.getSetCookie()[0] ?? '').split(';')[0]! };
}

/** Runs `clients` loops of `request` until `until`, returning each request's latency in ms and its status. */
async function load(clients: number, until: number, request: () => Promise<number>): Promise<{ latencies: number[]; statuses: Map<number, number> }> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const status = await request();
        latencies.push(performance.now() - started);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return { latencies, statuses };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

async function measure(label: string, env: Record<string, string>, seconds: number): Promise<void> {
  const { url, child } = await startService(env);
  try {
    const { cookie } = await login(url);
    // one account per client: the lockout counts attempts per account, and fifty logins of one
    // account at once would mostly be turned away before any password check
    const logins = Array.from({ length: LOGINS }, (_, i) => `bench-${i}`);
    for (const user of logins) {
      const res = await fetch(`${url}/api/admin/users`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', origin: url },
        body: JSON.stringify({ name: user, login: user, email: `${user}@example.com`, password: PASSWORD }),
      });
      if (res.status !== 200 && res.status !== 201) throw new Error(`creating ${user}: ${res.status} ${await res.text()}`);
    }
    const readUser = async () => {
      const res = await fetch(`${url}/api/user`, { headers: { cookie } });
      await res.arrayBuffer();
      return res.status;
    };
    await load(READERS, performance.now() + 1000, readUser);
    const quiet = await load(READERS, performance.now() + seconds * 1000, readUser);
    const until = performance.now() + seconds * 1000;
    let next = 0;
    const [loaded, signIns] = await Promise.all([
      load(READERS, until, readUser),
      load(LOGINS, until, async () => (await login(url, logins[next++ % LOGINS])).status),
    ]);
    const ratio = percentile(loaded.latencies, 99) / percentile(quiet.latencies, 99);
    console.log(`${label}:`);
    console.log(
      `  GET /api/user quiet:  p50 ${ms(percentile(quiet.latencies, 50))}, p99 ${ms(percentile(quiet.latencies, 99))} (${quiet.latencies.length} requests)`,
    );
    console.log(
      `  with ${LOGINS} logging in: p50 ${ms(percentile(loaded.latencies, 50))}, p99 ${ms(percentile(loaded.latencies, 99))} (${loaded.latencies.length} requests)`,
    );
    console.log(`  p99 loaded / quiet:   ${ratio.toFixed(1)}× (target ≤ 3×)`);
    console.log(
      `  logins: ${[...signIns.statuses].map(([status, count]) => `${count}× ${status}`).join(', ')}; login p50 ${ms(percentile(signIns.latencies, 50))}, p99 ${ms(percentile(signIns.latencies, 99))}`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const seconds = Number(arg('seconds', '5'));
  console.log(`${os.availableParallelism()} cores, ${READERS} readers, ${LOGINS} concurrent logins, ${seconds} s per phase`);
  await measure('baseline: 4 scrypt at once (libuv threads, the old behaviour)', { PASSWORD_HASH_CONCURRENCY: '4' }, seconds);
  await measure('default: PASSWORD_HASH_CONCURRENCY cores - 1, queue 64', {}, seconds);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
