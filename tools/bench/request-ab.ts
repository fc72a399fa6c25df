/**
 * Two builds of the service compared request by request, in one process: each build's app
 * (from its own checkout: e.g. a `git worktree` of the base commit) answers the same requests
 * through its whole middleware chain, with sockets that take the bytes and go nowhere, so no
 * HTTP parser, kernel or load generator is measured, only the JavaScript of a request. The two
 * are loaded in turn, in chunks of requests; for each path it prints each build's CPU time per
 * request and the median (and quartiles) of B − A over the chunks: on a shared 2-core machine
 * whose speed drifts by tens of percent within minutes, a paired difference is what stays
 * meaningful. Both log at info into a batch that is thrown away.
 *
 *   git worktree add /tmp/base <commit> && ln -s $PWD/node_modules /tmp/base/node_modules
 *   npx tsx tools/bench/request-ab.ts /tmp/base . [/api/user,/api/teams/search] [--chunks 21] [--chunk 2000]
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Duplex } from 'node:stream';
import pino from 'pino';
import { arg, login, SEEDED_SERVICE_ENV } from './service-process.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => unknown;

/** A socket that accepts every write at once. */
class NullSocket extends Duplex {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 40000;
  override _read(): void {}
  override _write(_chunk: unknown, _encoding: string, done: () => void): void {
    done();
  }
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

/** One GET through `handler`, resolved with its status once the response is sent and closed, as Node's server does. */
function get(handler: Handler, url: string, cookie: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = new NullSocket();
    const req = new http.IncomingMessage(socket as never);
    Object.assign(req, { method: 'GET', url, headers: { host: '127.0.0.1:3000', cookie }, httpVersion: '1.1', httpVersionMajor: 1, httpVersionMinor: 1 });
    req.push(null);
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as never);
    res.on('finish', () => {
      res.detachSocket(socket as never);
      process.nextTick(() => res.emit('close'));
      resolve(res.statusCode);
    });
    void handler(req, res);
  });
}

/** A build's app on a temporary SQLite file, seeded with the benchmarks' admin, and its session cookie. */
async function build(checkout: string): Promise<{ handler: Handler; cookie: string; close(): Promise<void> }> {
  const root = path.resolve(checkout);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-request-ab-'));
  const env = { ...process.env, ...SEEDED_SERVICE_ENV, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'info' };
  const { loadConfig } = await import(`${root}/src/config.ts`);
  const { startServices } = await import(`${root}/src/startup.ts`);
  const { bootstrap } = await import(`${root}/src/bootstrap.ts`);
  const { buildApp } = await import(`${root}/src/app.ts`);
  const { BatchedLines } = await import(`${root}/src/logging/batched-lines.ts`);
  // the service's logger where the build has one (createLineLogger), else pino's
  const { createLineLogger } = (await import(`${root}/src/logging/line-writer.ts`)) as { createLineLogger?: typeof pino };
  const logger = (createLineLogger ?? pino)({ level: 'info' }, new BatchedLines({ write: () => true }, 4096));
  // the policy build and migrations are found from the working directory
  const cwd = process.cwd();
  process.chdir(root);
  const services = await startServices(loadConfig(env), logger);
  await bootstrap(services);
  process.chdir(cwd);
  const handler = buildApp(services).app.callback() as Handler;
  // a real login (a request with a body) over a real socket, once
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const { cookie } = await login(`http://127.0.0.1:${port}`);
  await new Promise((resolve) => server.close(resolve));
  return {
    handler,
    cookie,
    close: async () => {
      await services.db.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const quantile = (values: number[], q: number) => [...values].sort((x, y) => x - y)[Math.floor(values.length * q)]!;
const positional = process.argv.slice(2).filter((value, i, all) => !value.startsWith('--') && !all[i - 1]?.startsWith('--'));
const [checkoutA, checkoutB] = positional;
if (!checkoutA || !checkoutB) throw new Error('usage: request-ab.ts <checkout A> <checkout B> [paths]');
const paths = (positional[2] ?? '/api/user,/api/teams/search,/api/user/permissions,/api/health').split(',');
const chunks = Number(arg('chunks', '21'));
const chunkSize = Number(arg('chunk', '2000'));

const builds = { a: await build(checkoutA), b: await build(checkoutB) };
try {
  for (const [name, { handler, cookie }] of Object.entries(builds)) {
    for (const p of paths) {
      const status = await get(handler, p, cookie);
      if (status !== 200) throw new Error(`${name} ${p}: ${status}`);
    }
  }
  // warm-up: JIT, caches, each org's policy instance
  for (let i = 0; i < 3000; i += 1) for (const p of paths) for (const { handler, cookie } of Object.values(builds)) await get(handler, p, cookie);
  const perRequest: Record<string, { a: number[]; b: number[] }> = Object.fromEntries(paths.map((p) => [p, { a: [], b: [] }]));
  for (let chunk = 0; chunk < chunks; chunk += 1) {
    for (const p of paths) {
      // alternate which goes first
      for (const key of chunk % 2 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
        const { handler, cookie } = builds[key];
        const before = process.cpuUsage();
        for (let i = 0; i < chunkSize; i += 1) await get(handler, p, cookie);
        const used = process.cpuUsage(before);
        perRequest[p]![key].push((used.user + used.system) / chunkSize);
      }
    }
  }
  console.log(`A ${checkoutA}, B ${checkoutB}: CPU µs per request, ${chunks} chunks of ${chunkSize}`);
  for (const p of paths) {
    const { a, b } = perRequest[p]!;
    const differences = a.map((value, i) => b[i]! - value);
    const median = (values: number[]) => quantile(values, 0.5).toFixed(2);
    console.log(
      `  ${p.padEnd(24)} A ${median(a)}  B ${median(b)}  B − A ${median(differences)} µs (quartiles ${quantile(differences, 0.25).toFixed(2)} .. ${quantile(differences, 0.75).toFixed(2)})`,
    );
  }
} finally {
  await builds.a.close();
  await builds.b.close();
}
process.exit(0);
