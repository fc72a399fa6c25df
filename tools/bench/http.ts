/**
 * The request path against a bare Koa app, in one run: both in processes of their own, loaded
 * in turn (interleaved rounds, so a machine that slows down slows both) by autocannon with a
 * bounded number of connections, on SQLite and on MariaDB. The service runs as production runs
 * it: its default configuration, the general rate limit on (with a limit the load does not reach,
 * BENCH_RATE_LIMIT_PER_MINUTE), logging at `info` (a line per request) to a file. The bare app
 * answers each path with the body the service answered it with (tools/bench/bare-koa.ts). For
 * each request it prints both requests per second, their ratio beside its target (the service
 * ≥ 50 % of bare Koa, `GET /api/teams/search` ≥ 40 %), each server's CPU time per request
 * (Linux), user and kernel apart, which the ratio hides once the load generator, on the same
 * cores, is what limits bare Koa, and the statements the service sent to its database per request
 * (gatehouse_db_queries_total), with its pool size. `GET /api/health` is measured too, as a
 * reference and not a target: what every request pays before any work.
 *
 *   npx tsx tools/bench/http.ts                          # both databases, 3 rounds of 3 s
 *   npx tsx tools/bench/http.ts --db mysql --rounds 1 --seconds 5 --connections 16
 *   npx tsx tools/bench/http.ts --db sqlite --only cookie   # the requests whose label contains `cookie`
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { arg, freePort, login, startService, stopChild, waitUntilUp } from './service-process.ts';

/** The general rate limit stays on, as in production, with a limit no benchmark client reaches in a minute. */
const BENCH_RATE_LIMIT_PER_MINUTE = 100_000_000;

interface Scenario {
  label: string;
  path: string;
  credential: 'token' | 'cookie';
  /** The least share of bare Koa's requests per second; null: measured beside the others, with no target of its own. */
  target: number | null;
}

const SCENARIOS: Scenario[] = [
  { label: 'GET /api/user (token)', path: '/api/user', credential: 'token', target: 0.5 },
  { label: 'GET /api/user (cookie)', path: '/api/user', credential: 'cookie', target: 0.5 },
  { label: 'GET /api/user/permissions', path: '/api/user/permissions', credential: 'cookie', target: 0.5 },
  { label: 'GET /api/teams/search', path: '/api/teams/search', credential: 'cookie', target: 0.4 },
  // not a target: what every request pays before any work (no credential is read, no database)
  { label: 'GET /api/health (reference)', path: '/api/health', credential: 'cookie', target: null },
];

/** One sample of the service's /metrics (public: the benchmark sets no METRICS_TOKEN). */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : NaN;
}

/** CPU time a process has used so far, in user space and in the kernel, in µs (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMicros(child: ChildProcess): { user: number; system: number } {
  const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

interface Load {
  requests: number;
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
    requests: result.requests.total,
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
  const service = await startService({ LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: String(BENCH_RATE_LIMIT_PER_MINUTE) }, database, { logFile: true });
  let bare: Awaited<ReturnType<typeof startBareKoa>> | null = null;
  try {
    const { cookie } = await login(service.url);
    const token = await accessToken(service.url, cookie);
    const credentials = { token: { authorization: `Bearer ${token}` }, cookie: { cookie } };
    bare = await startBareKoa(await serviceBodies(service.url, cookie));
    const poolMax = await metric(service.url, 'gatehouse_db_pool_max');
    console.log(
      `${database}: database pool of ${poolMax} connection(s); rate limit on (${BENCH_RATE_LIMIT_PER_MINUTE.toLocaleString('en')} a minute); logs at info to a file`,
    );
    const only = arg('only', '');
    for (const scenario of SCENARIOS.filter((candidate) => candidate.label.includes(only))) {
      const headers = credentials[scenario.credential];
      // one short warm-up each: JIT, prepared statements, the org's policy instance
      await load(bare.child, `${bare.url}${scenario.path}`, headers, 1, options.connections);
      await load(service.child, `${service.url}${scenario.path}`, headers, 1, options.connections);
      const totals = { bareRps: 0, serviceRps: 0, bareCpu: 0, serviceCpu: 0, bareSystem: 0, serviceSystem: 0, queries: 0, requests: 0 };
      for (let round = 0; round < options.rounds; round += 1) {
        const bareLoad = await load(bare.child, `${bare.url}${scenario.path}`, headers, options.seconds, options.connections);
        const queriesBefore = await metric(service.url, 'gatehouse_db_queries_total');
        const serviceLoad = await load(service.child, `${service.url}${scenario.path}`, headers, options.seconds, options.connections);
        // the scrape's own request sends no query; the rate limit's flushes (one or two statements a slice) are counted in
        totals.queries += (await metric(service.url, 'gatehouse_db_queries_total')) - queriesBefore;
        totals.requests += serviceLoad.requests;
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
      const ratio = serviceRps / bareRps;
      const verdict =
        scenario.target === null ? '(no target)' : `(target ≥ ${(100 * scenario.target).toFixed(0)} %: ${ratio >= scenario.target ? 'met' : 'MISSED'})`;
      const cpu = (total: number, system: number) => `${total.toFixed(0)} µs (${(total - system).toFixed(0)} user + ${system.toFixed(0)} kernel)`;
      console.log(
        `  ${scenario.label.padEnd(28)} service ${serviceRps.toFixed(0).padStart(6)} req/s, bare Koa ${bareRps.toFixed(0).padStart(6)} req/s: ${(100 * ratio).toFixed(1)} % ${verdict}; ${(totals.queries / totals.requests).toFixed(4)} queries per request (${(totals.queries / (options.rounds * options.seconds)).toFixed(1)} a second); CPU per request ${cpu(serviceCpu, serviceSystem)} against ${cpu(bareCpu, bareSystem)}: ${((100 * bareCpu) / serviceCpu).toFixed(1)} %`,
      );
    }
    const logLines = fs.readFileSync(service.logFile!, 'utf8').split('\n').length - 1;
    console.log(`  (the service logged ${logLines.toLocaleString('en')} lines)`);
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
