/**
 * The connector proxy's overhead against a direct backend call, in the same run: a real
 * Prometheus (Debian `prometheus`, backfilled as in the tests) on loopback, the service on a
 * temporary SQLite file, and the same instant query sent N times each way, alternating. Prints
 * p50 and p99 of both and the overhead beside its target (p50 ≤ 5 ms).
 *
 *   npm run bench:connector-proxy                     # 500 calls each way
 *   npm run bench:connector-proxy -- --calls 2000
 */
import { startTestApp } from '../../test/helpers/app.ts';
import { createUser } from '../../test/helpers/factories.ts';
import { startPrometheus, T0 } from '../../test/helpers/prometheus.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (value: number) => `${value.toFixed(2)} ms`;
/** The proxy may add at most this much to a typical (p50) query. */
const TARGET_OVERHEAD_MS = 5;

async function timed(send: () => Promise<Response>): Promise<number> {
  const t0 = process.hrtime.bigint();
  const res = await send();
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function main(): Promise<void> {
  const calls = Number(arg('calls', '500'));
  const prometheus = await startPrometheus();
  const app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
  try {
    const admin = await createUser(app, { role: 'Admin' });
    const created = await app.request('POST', '/api/connectors', { cookie: admin.cookie, body: { name: 'bench', type: 'tsmetrics', url: prometheus.url } });
    const path = `api/v1/query?query=${encodeURIComponent('sum(demo_temperature)')}&time=${T0 + 300}`;
    const direct = () => fetch(`${prometheus.url}/${path}`);
    const proxied = () => fetch(`${app.url}/api/connectors/proxy/uid/${created.body.uid}/${path}`, { headers: { cookie: admin.cookie } });
    for (let i = 0; i < 50; i++) await Promise.all([timed(direct), timed(proxied)]);
    const times = { direct: [] as number[], proxied: [] as number[] };
    for (let i = 0; i < calls; i++) {
      times.direct.push(await timed(direct));
      times.proxied.push(await timed(proxied));
    }
    const [d, p] = [times.direct.sort((a, b) => a - b), times.proxied.sort((a, b) => a - b)];
    console.log(`connector proxy vs direct Prometheus call (${calls} sequential instant queries each, alternating):`);
    console.log(`  direct   p50 ${ms(percentile(d, 50))}, p99 ${ms(percentile(d, 99))}`);
    console.log(`  proxied  p50 ${ms(percentile(p, 50))}, p99 ${ms(percentile(p, 99))}`);
    const overhead = percentile(p, 50) - percentile(d, 50);
    console.log(
      `  overhead p50 ${ms(overhead)} (target ≤ ${TARGET_OVERHEAD_MS} ms: ${overhead <= TARGET_OVERHEAD_MS ? 'met' : 'missed'}), p99 ${ms(percentile(p, 99) - percentile(d, 99))}`,
    );
  } finally {
    await app.close();
    await prometheus.stop();
  }
}

await main();
