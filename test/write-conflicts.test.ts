import { expect } from 'chai';
import { createTestDatabase, startTestApp, TEST_DB, type Database, type TestApp } from './helpers/app.ts';
import { runWriteConflicts, SCENARIO_NAMES } from './helpers/write-conflicts.ts';

/**
 * Conflicting writes on the same rows, sent at once to two instances over one database (the
 * fuzz of test/helpers/write-conflicts.ts): every answer is 2xx, 404, 409 or 412 with a message,
 * never 500, and after each batch no orphan row, no folder cycle or overdeep tree, no acknowledged
 * write without its audit entry, no policy document that differs from a fresh build. Seeded:
 * WRITE_CONFLICTS_SEED replays a run, WRITE_CONFLICTS_ROUNDS sets its length. On MariaDB
 * transactions really run in parallel (2,000 rounds); SQLite runs one writer at a time, so a
 * shorter run there covers the same code paths.
 */
describe('write conflicts', function () {
  const rounds = Number(process.env.WRITE_CONFLICTS_ROUNDS ?? (TEST_DB === 'mysql' ? 2000 : 300));
  const seed = Number(process.env.WRITE_CONFLICTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const instanceCount = Number(process.env.WRITE_CONFLICTS_INSTANCES ?? 2);
  this.timeout(600_000);
  let database: Database;
  let instances: TestApp[];
  before(async () => {
    database = await createTestDatabase();
    const first = await startTestApp({ database });
    instances = instanceCount > 1 ? [first, await startTestApp({ database, clock: first.clock })] : [first];
  });
  after(async () => {
    for (const instance of instances ?? []) await instance.close();
    await database?.drop();
  });

  it(`answers ${rounds} rounds of conflicting writes on two instances without a 500 or a broken invariant`, async () => {
    console.log(`      write conflicts: seed ${seed} (WRITE_CONFLICTS_SEED=${seed} replays it), ${rounds} rounds, ${SCENARIO_NAMES.length} kinds`);
    const report = await runWriteConflicts(instances, { seed, rounds, parallel: 6, maxDelayMs: 15, checkEvery: 10 });
    console.log(
      `      ${report.rounds} rounds, ${report.requests} answers by status ${JSON.stringify(report.statuses)} in ${(report.durationMs / 1000).toFixed(1)} s`,
    );
    for (const line of [...report.setupFailures, ...report.failures, ...report.invariantBreaks]) console.log(`      ${line}`);
    expect(report.setupFailures, 'setup').to.deep.equal([]);
    expect(report.failures, `answers (seed ${seed})`).to.deep.equal([]);
    expect(report.invariantBreaks, `invariants (seed ${seed})`).to.deep.equal([]);
    expect(report.rounds).to.equal(rounds);
  });
});
