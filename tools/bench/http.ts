/**
 * The request path against a bare Koa app, in one run: both in processes of their own, loaded
 * in turn (interleaved rounds, so a machine that slows down slows both) by autocannon with a
 * bounded number of connections, on SQLite and on MariaDB. The bare app answers each path with
 * the body the service answered it with (tools/bench/bare-koa.ts). For each request it prints both
 * requests per second and the ratio (target: the service ≥ 50 % of bare Koa), and each server's
 * CPU time per request (Linux), user and kernel apart, which the ratio hides once the load
 * generator, on the same cores, is what limits bare Koa. `GET /api/health` is measured too, as a
 * reference and not a target: what every request pays before any work. The service logs at its
 * default level (info: a line per request), as in production.
 *
 *   npx tsx tools/bench/http.ts                          # both databases, 3 rounds of 3 s
 *   npx tsx tools/bench/http.ts --db sqlite --rounds 5 --seconds 5 --connections 16
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { arg, freePort, login, startService, stopChild, waitUntilUp } from './service-process.ts';

interface Scenario {
  label: string;
  path: string;
  credential: 'token' | 'cookie';
  /** Measured beside the others, with no target of its own. */
  reference?: true;
}

const SCENARIOS: Scenario[] = [
  { label: 'GET /api/user (token)', path: '/api/user', credential: 'token' },
  { label: 'GET /api/user (cookie)', path: '/api/user', credential: 'cookie' },
  { label: 'GET /api/user/permissions', path: '/api/user/permissions', credential: 'cookie' },
  { label: 'GET /api/teams/search', path: '/api/teams/search', credential: 'cookie' },
  // not a target: what every request pays before any work (no credential is read, no database)
  { label: 'GET /api/health (reference)', path: '/api/health', credential: 'cookie', reference: true },
];

/** CPU time a process has used so far, in user space and in the kernel, in µs (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMicros(child: ChildProcess): { user: number; system: number } {
  const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

interface Load {
  requestsPerSecond: number;
  /** The server process's CPU time per request: what the ratio of requests per second hides when the load generator is what limits it. */
  cpuMicrosPerRequest: number;
  /** Of which in the kernel (mostly the loopback write of the response). */
  systemMicrosPerRequest: number;
}

/** `seconds` of load on the server in `child`; fails on any answer but 200 (a benchmark of errors measures nothing). */
async function load(child: ChildProcess, url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<Load> {
  const cpuBefore = cpuMicros(child);
  const result = await autocannon({ url, headers, duration: seconds, connections, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${url}: ${result.non2xx} answers not 2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  const cpuAfter = cpuMicros(child);
  const perRequest = (micros: number) => micros / result.requests.total;
  return {
    requestsPerSecond: result.requests.total / seconds,
    cpuMicrosPerRequest: perRequest(cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system),
    systemMicrosPerRequest: perRequest(cpuAfter.system - cpuBefore.system),
  };
}

/** A bare Koa app answering each path with `bodies[path]`. */
async function startBareKoa(bodies: Record<string, unknown>): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'tools/bench/bare-koa.ts'], {
    env: { ...process.env, PORT: String(port), NODE_ENV: 'production', BODIES: JSON.stringify(bodies) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${url}/api/health`, child);
  return { url, child, stop: () => stopChild(child) };
}

async function accessToken(url: string, cookie: string): Promise<string> {
  const res = await fetch(`${url}/api/user/access-tokens`, {
    method: 'POST',
    headers: { cookie, origin: url, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  if (res.status !== 201) throw new Error(`creating an access token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

/** What the service answers on each benchmarked path, for the bare app to answer the same. */
async function serviceBodies(url: string, cookie: string): Promise<Record<string, unknown>> {
  const bodies: Record<string, unknown> = {};
  for (const { path } of SCENARIOS) {
    const res = await fetch(`${url}${path}`, { headers: { cookie } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    bodies[path] = await res.json();
  }
  return bodies;
}

async function measure(database: 'sqlite' | 'mysql', options: { rounds: number; seconds: number; connections: number }): Promise<void> {
  const service = await startService({ LOG_LEVEL: 'info' }, database);
  let bare: Awaited<ReturnType<typeof startBareKoa>> | null = null;
  try {
    const { cookie } = await login(service.url);
    const token = await accessToken(service.url, cookie);
    const credentials = { token: { authorization: `Bearer ${token}` }, cookie: { cookie } };
    bare = await startBareKoa(await serviceBodies(service.url, cookie));
    console.log(`${database}:`);
    for (const scenario of SCENARIOS) {
      const headers = credentials[scenario.credential];
      // one short warm-up each: JIT, prepared statements, the org's policy instance
      await load(bare.child, `${bare.url}${scenario.path}`, headers, 1, options.connections);
      await load(service.child, `${service.url}${scenario.path}`, headers, 1, options.connections);
      const totals = { bareRps: 0, serviceRps: 0, bareCpu: 0, serviceCpu: 0, bareSystem: 0, serviceSystem: 0 };
      for (let round = 0; round < options.rounds; round += 1) {
        const bareLoad = await load(bare.child, `${bare.url}${scenario.path}`, headers, options.seconds, options.connections);
        const serviceLoad = await load(service.child, `${service.url}${scenario.path}`, headers, options.seconds, options.connections);
        totals.bareRps += bareLoad.requestsPerSecond;
        totals.serviceRps += serviceLoad.requestsPerSecond;
        totals.bareCpu += bareLoad.cpuMicrosPerRequest;
        totals.serviceCpu += serviceLoad.cpuMicrosPerRequest;
        totals.bareSystem += bareLoad.systemMicrosPerRequest;
        totals.serviceSystem += serviceLoad.systemMicrosPerRequest;
      }
      const average = (total: number) => total / options.rounds;
      const [bareRps, serviceRps, bareCpu, serviceCpu, bareSystem, serviceSystem] = [
        average(totals.bareRps),
        average(totals.serviceRps),
        average(totals.bareCpu),
        average(totals.serviceCpu),
        average(totals.bareSystem),
        average(totals.serviceSystem),
      ];
      const cpu = (total: number, system: number) => `${total.toFixed(0)} µs (${(total - system).toFixed(0)} user + ${system.toFixed(0)} kernel)`;
      console.log(
        `  ${scenario.label.padEnd(28)} service ${serviceRps.toFixed(0).padStart(6)} req/s, bare Koa ${bareRps.toFixed(0).padStart(6)} req/s: ${((100 * serviceRps) / bareRps).toFixed(1)} % ${scenario.reference ? '(no target)' : '(target ≥ 50 %)'}; CPU per request ${cpu(serviceCpu, serviceSystem)} against ${cpu(bareCpu, bareSystem)}: ${((100 * bareCpu) / serviceCpu).toFixed(1)} %`,
      );
    }
  } finally {
    await Promise.all([bare?.stop(), service.stop()]);
  }
}

async function main(): Promise<void> {
  const databases = arg('db', 'both') === 'both' ? (['sqlite', 'mysql'] as const) : [arg('db', 'sqlite') as 'sqlite' | 'mysql'];
  const options = { rounds: Number(arg('rounds', '3')), seconds: Number(arg('seconds', '3')), connections: Number(arg('connections', '10')) };
  console.log(
    `${os.availableParallelism()} cores; ${options.connections} connections, ${options.rounds} interleaved rounds of ${options.seconds} s per request`,
  );
  for (const database of databases) await measure(database, options);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
