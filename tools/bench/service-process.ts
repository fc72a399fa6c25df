/**
 * What the benchmarks that load the service over HTTP share: the service in a process of its own
 * (as in production) on a temporary SQLite file or a fresh MariaDB database, seeded with a server
 * admin, and the figures they print. BENCH_SERVICE_NODE_ARGS adds node options to the service
 * process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';

export const ADMIN_LOGIN = 'bench';
export const PASSWORD = 'bench password correct horse';
const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

/** The service's environment in every benchmark: production, a seeded server admin, no rate limit. */
export const SEEDED_SERVICE_ENV = {
  NODE_ENV: 'production',
  // the benchmarks measure requests, not the general rate limit, which their clients would reach
  RATE_LIMIT_PER_MINUTE: '0',
  JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123456789',
  SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
  SEED_ADMIN_EMAIL: 'bench@example.com',
  SEED_ADMIN_LOGIN: ADMIN_LOGIN,
  SEED_ADMIN_PASSWORD: PASSWORD,
};

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export const ms = (value: number) => `${value.toFixed(1)} ms`;

/** A new MariaDB database `name` on MYSQL_URL, and how to drop it. */
export async function createMysqlBenchDatabase(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = await mysql.createConnection(MYSQL_URL);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await admin.end();
  return {
    url: `${MYSQL_URL}/${name}`,
    async drop() {
      const conn = await mysql.createConnection(MYSQL_URL);
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    },
  };
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Polls `url` until it answers, or fails after 120 s (migrating a fresh MariaDB database on a busy machine takes a while) (the child's stderr is inherited: its own error shows). */
export async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    if (child.exitCode !== null) throw new Error(`the process at ${url} exited with ${child.exitCode}`);
    const up = await fetch(url).then(
      () => true,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing answered at ${url}`);
}

/** Ends a child by its pid and waits for it. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Starts the service with a seeded server admin (ADMIN_LOGIN / PASSWORD) on `database`: a
 * temporary SQLite file, or a database of its own on MariaDB (TEST_MYSQL_URL), dropped by stop().
 * Its log (stdout) is dropped, or written to `options.logFile` (in its data directory, removed by stop()).
 * `options.databaseUrl`: a database filled beforehand instead, which stop() leaves to its owner.
 */
export async function startService(
  env: Record<string, string> = {},
  database: 'sqlite' | 'mysql' = 'sqlite',
  options: { logFile?: boolean; databaseUrl?: string } = {},
): Promise<ServiceProcess & { logFile: string | null }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-'));
  let databaseUrl = options.databaseUrl ?? '';
  let dropDatabase = async () => {};
  if (database === 'mysql' && options.databaseUrl === undefined) {
    ({ url: databaseUrl, drop: dropDatabase } = await createMysqlBenchDatabase(`gatehouse_bench_${process.pid}_${port}`));
  }
  const logFile = options.logFile ? path.join(dir, 'service.log') : null;
  const logFd = logFile ? fs.openSync(logFile, 'a') : null;
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      ...SEEDED_SERVICE_ENV,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', logFd ?? 'ignore', 'inherit'],
  });
  if (logFd !== null) fs.closeSync(logFd);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    await dropDatabase();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilUp(`${url}/api/health`, child);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, child, stop, logFile };
}

/** Logs in with a password: the status and the session cookie (`name=value`). */
export async function login(url: string, user = ADMIN_LOGIN): Promise<{ status: number; cookie: string }> {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user, password: PASSWORD }),
  });
  await res.arrayBuffer();
  return { status: res.status, cookie: (res.headers.getSetCookie()[0] ?? '').split(';')[0]! };
}
