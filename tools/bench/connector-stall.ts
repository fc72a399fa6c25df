/**
 * What large backend answers do to everyone else. The service runs in its own process in its
 * default configuration (loopback backends allowed: the backend is local) on a temporary SQLite
 * file. A local backend (a worker thread of this process) answers every request with the same
 * 9.5 MiB Prometheus range result, under the 10 MiB OUTBOUND_MAX_RESPONSE_BYTES. This process
 * measures the latency of an authenticated `GET /api/user` (10 clients) quiet, then while 20
 * clients (another worker thread) fetch those answers back to back, half through
 * `POST /api/connectors/:uid/query`, half through the proxy, and prints the p50/p99 of both and
 * their ratio beside the target (loaded p99 ≤ 5× quiet).
 *
 *   npm run bench:connector-stall                  # 10 s per phase
 *   npm run bench:connector-stall -- --seconds 20
 */
import { Worker } from 'node:worker_threads';
import { arg, login, ms, percentile, startService } from './service-process.ts';

const READERS = 10;
const LARGE_CLIENTS = 20;
const ANSWER_BYTES = 9.5 * 1024 * 1024;
const TARGET_RATIO = 5;

/** The backend: one Prometheus matrix answer of ANSWER_BYTES, made once, sent to every request. */
const BACKEND = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
const point = (i) => '[' + (1767225600 + i * 15) + ',"' + (i % 1000) / 10 + '"]';
const series = (n) => '{"metric":{"__name__":"bench_load","instance":"host-' + n + '"},"values":[' + Array.from({ length: 1000 }, (_, i) => point(i)).join(',') + ']}';
const parts = [];
let size = 60;
for (let n = 0; size < ${ANSWER_BYTES}; n++) { const one = series(n); if (size + one.length + 1 > ${ANSWER_BYTES}) break; parts.push(one); size += one.length + 1; }
let body = '{"status":"success","data":{"resultType":"matrix","result":[' + parts.join(',') + ']}}';
body = Buffer.from(body.padEnd(${ANSWER_BYTES}, ' '));
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body));
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port, bytes: body.length, series: parts.length }));
`;

/** The large-answer clients: LARGE_CLIENTS loops until told to stop, then their counts. */
const CLIENTS = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, cookie, uid, clients } = workerData;
let running = true;
const done = { query: 0, proxy: 0, bytes: 0, failed: 0, latencies: [], seconds: 0 };
const started = performance.now();
const query = { query: 'bench_load', type: 'range', start: 1767225600, end: 1767240585, step: 15 };
const requests = {
  query: () => fetch(url + '/api/connectors/' + uid + '/query', { method: 'POST', headers: { cookie, origin: url, 'content-type': 'application/json' }, body: JSON.stringify(query) }),
  proxy: () => fetch(url + '/api/connectors/proxy/uid/' + uid + '/api/v1/query_range?query=bench_load&start=1767225600&end=1767240585&step=15', { headers: { cookie } }),
};
const loops = Array.from({ length: clients }, async (_, i) => {
  const kind = i % 2 === 0 ? 'query' : 'proxy';
  while (running) {
    const sent = performance.now();
    try {
      const res = await requests[kind]();
      const bytes = (await res.arrayBuffer()).byteLength;
      if (res.status !== 200) { done.failed++; continue; }
      done[kind]++;
      done.bytes += bytes;
      done.latencies.push(performance.now() - sent);
    } catch { done.failed++; }
  }
});
parentPort.on('message', async () => { running = false; await Promise.all(loops); done.seconds = (performance.now() - started) / 1000; parentPort.postMessage(done); });
`;

interface LargeAnswers {
  query: number;
  proxy: number;
  bytes: number;
  failed: number;
  latencies: number[];
  seconds: number;
}

/** Runs `clients` loops of `request` until `until`: each request's latency in ms. */
async function load(clients: number, until: number, request: () => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const status = await request();
        if (status !== 200) throw new Error(`GET /api/user answered ${status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

const figures = (latencies: number[]) => `p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))} (${latencies.length} requests)`;

async function main(): Promise<void> {
  const seconds = Number(arg('seconds', '10'));
  const backend = new Worker(BACKEND, { eval: true });
  const { port, bytes, series } = await new Promise<{ port: number; bytes: number; series: number }>((resolve) => backend.once('message', resolve));
  const service = await startService({ CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' });
  try {
    const { url } = service;
    const { cookie } = await login(url);
    const created = await fetch(`${url}/api/connectors`, {
      method: 'POST',
      headers: { cookie, origin: url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'large answers', type: 'tsmetrics', url: `http://127.0.0.1:${port}` }),
    });
    if (created.status !== 201) throw new Error(`creating the connector: ${created.status} ${await created.text()}`);
    const { uid } = (await created.json()) as { uid: string };
    const readUser = async () => {
      const res = await fetch(`${url}/api/user`, { headers: { cookie } });
      await res.arrayBuffer();
      return res.status;
    };
    await load(READERS, performance.now() + 1000, readUser);
    const quiet = await load(READERS, performance.now() + seconds * 1000, readUser);

    const clients = new Worker(CLIENTS, { eval: true, workerData: { url, cookie, uid, clients: LARGE_CLIENTS } });
    // the answers are under way before the measurement starts
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const loaded = await load(READERS, performance.now() + seconds * 1000, readUser);
    clients.postMessage('stop');
    const large = await new Promise<LargeAnswers>((resolve) => clients.once('message', resolve));
    await clients.terminate();

    const ratio = percentile(loaded, 99) / percentile(quiet, 99);
    console.log(`backend answer: ${(bytes / 1024 / 1024).toFixed(2)} MiB (${series} series of 1,000 samples), OUTBOUND_MAX_RESPONSE_BYTES at its default`);
    console.log(`GET /api/user, ${READERS} clients, ${seconds} s per phase:`);
    console.log(`  quiet                                      ${figures(quiet)}`);
    console.log(`  with ${LARGE_CLIENTS} clients fetching large answers     ${figures(loaded)}`);
    console.log(`  loaded p99 / quiet p99: ${ratio.toFixed(1)}× (target ≤ ${TARGET_RATIO}×: ${ratio <= TARGET_RATIO ? 'met' : 'missed'})`);
    console.log(
      `large answers: ${large.query} through query, ${large.proxy} through the proxy, ${large.failed} failed; ` +
        `${(large.bytes / 1024 / 1024 / large.seconds).toFixed(0)} MiB/s; each p50 ${ms(percentile(large.latencies, 50))}, p99 ${ms(percentile(large.latencies, 99))}`,
    );
  } finally {
    await service.stop();
    await backend.terminate();
  }
}

await main();
