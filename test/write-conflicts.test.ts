import { expect } from 'chai';
import { createTestDatabase, startTestApp, TEST_DB, type Database, type TestApp } from './helpers/app.ts';
import { runWriteConflicts, SCENARIO_NAMES } from './helpers/write-conflicts.ts';

/**
 * Conflicting writes on the same rows, sent at once to two instances over one database (the fuzz
 * of test/helpers/write-conflicts.ts): every answer is 2xx, 404, 409 or 412 with a message, never
 * 500, and after every few batches no orphan row, no folder cycle or overdeep tree, no
 * acknowledged write without its audit entry, no policy document that differs from a fresh build
 * (and AUTHZ_VERIFY_DOCUMENTS checks the documents after every commit besides). Seeded: the seed
 * printed replays a run (WRITE_CONFLICTS_SEED); WRITE_CONFLICTS_PAIRS sets its length,
 * WRITE_CONFLICTS_INSTANCES=1 runs it on one instance, WRITE_CONFLICTS_ONLY=<part of a name> runs
 * only the kinds of conflict so named. MariaDB runs transactions in parallel: 2,000 conflicting
 * pairs. SQLite runs one writing transaction at a time, so no two writes there ever interleave
 * inside a transaction: 300 pairs check the answers and invariants all the same. The longer run
 * is `npm run bench:write-conflicts`.
 */
describe('write conflicts', function () {
  const pairs = Number(process.env.WRITE_CONFLICTS_PAIRS ?? (TEST_DB === 'mysql' ? 2000 : 300));
  const seed = Number(process.env.WRITE_CONFLICTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const instanceCount = Number(process.env.WRITE_CONFLICTS_INSTANCES ?? 2);
  this.timeout(900_000);
  let database: Database;
  let instances: TestApp[] = [];
  before(async () => {
    database = await createTestDatabase();
    // Each commit checks every loaded document against a fresh build: a few loaded orgs keep that cost flat.
    const env = { AUTHZ_MAX_LOADED_ORGS: '6' };
    const first = await startTestApp({ database, env });
    instances = [first];
    while (instances.length < instanceCount) instances.push(await startTestApp({ database, clock: first.clock, env }));
  });
  after(async () => {
    for (const instance of instances) await instance.close();
    await database?.drop();
  });

  it(`answers ${pairs} pairs of conflicting writes on ${instanceCount} instances without a 500 or a broken invariant`, async () => {
    console.log(`      seed ${seed} (WRITE_CONFLICTS_SEED=${seed} replays it), ${SCENARIO_NAMES.length} kinds of conflict`);
    const report = await runWriteConflicts(instances, { seed, pairs, parallel: 6, maxDelayMs: 15, checkEvery: 10, only: process.env.WRITE_CONFLICTS_ONLY });
    console.log(
      `      ${report.rounds} rounds, ${report.pairs} conflicting pairs, answers by status ${JSON.stringify(report.statuses)}, ${(report.durationMs / 1000).toFixed(1)} s`,
    );
    for (const line of [...report.setupFailures, ...report.failures, ...report.invariantBreaks]) console.log(`      ${line}`);
    expect(report.setupFailures, 'setup').to.deep.equal([]);
    expect(report.failures, `answers (seed ${seed})`).to.deep.equal([]);
    expect(report.invariantBreaks, `invariants (seed ${seed})`).to.deep.equal([]);
    expect(report.pairs).to.be.at.least(pairs);
  });
});
