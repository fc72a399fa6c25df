/**
 * The write-conflict fuzz of the test suite (test/helpers/write-conflicts.ts), run long: pairs and
 * triples of conflicting writes on the same rows (update × delete, move × delete, move × move,
 * rename × rename, grant × revoke, member add × org delete, token create × account delete…) sent
 * at once with seeded random delays to two app servers over one fresh MariaDB database. Prints
 * the figure: conflicting pairs, answers by status, 500s, invariant breaks, the seed and the
 * duration; exits 1 on any 500, other answer out of place or broken invariant.
 *
 *   npm run bench:write-conflicts                              # 20,000 pairs, two instances
 *   npm run bench:write-conflicts -- --pairs 5000 --seed 42 --instances 1
 *   npm run bench:write-conflicts -- --url mysql://root@127.0.0.1:3306
 */
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { runWriteConflicts } from '../../test/helpers/write-conflicts.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const serverUrl = arg('url', process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306');
const pairs = Number(arg('pairs', '20000'));
const seed = Number(arg('seed', String(Math.floor(Math.random() * 2 ** 31))));
const instanceCount = Number(arg('instances', '2'));
const parallel = Number(arg('parallel', '6'));

const name = `gatehouse_bench_${randomBytes(6).toString('hex')}`;
const admin = knexFactory({ client: 'mysql2', connection: serverUrl });
await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
const database = { url: `${serverUrl}/${name}`, drop: async () => {} };
const instances: TestApp[] = [];

/** Runs the fuzz; true when it found no failure. */
async function run(): Promise<boolean> {
  // as in the test: each commit checks every loaded document against a fresh build, a few loaded orgs keep that flat
  const env = { AUTHZ_MAX_LOADED_ORGS: '6' };
  const first = await startTestApp({ database, env });
  instances.push(first);
  while (instances.length < instanceCount) instances.push(await startTestApp({ database, clock: first.clock, env }));
  console.log(`write conflicts: seed ${seed}, at least ${pairs} conflicting pairs, ${instanceCount} instance(s) on ${serverUrl}`);
  const report = await runWriteConflicts(instances, { seed, pairs, parallel, maxDelayMs: 15, checkEvery: 10, progress: (line) => console.log(`  ${line}`) });
  for (const line of [...report.setupFailures, ...report.failures, ...report.invariantBreaks]) console.log(`  ${line}`);
  const answers = Object.values(report.statuses).reduce((sum, count) => sum + count, 0);
  console.log('');
  console.log(`pairs              ${report.pairs} (${report.rounds} rounds, ${answers} answers)`);
  console.log(`answers by status  ${JSON.stringify(report.statuses)}`);
  console.log(`500s               ${report.statuses[500] ?? 0}`);
  console.log(`other failures     ${report.failures.length - (report.statuses[500] ?? 0)} answers out of place, ${report.setupFailures.length} setup failures`);
  console.log(`invariant breaks   ${report.invariantBreaks.length}`);
  console.log(`seed               ${seed} (--seed ${seed} replays it)`);
  console.log(`duration           ${(report.durationMs / 1000).toFixed(1)} s`);
  return report.failures.length === 0 && report.invariantBreaks.length === 0 && report.setupFailures.length === 0;
}

const passed = await run().finally(async () => {
  for (const instance of instances) await instance.close();
  await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
  await admin.destroy();
});
process.exit(passed ? 0 : 1);
