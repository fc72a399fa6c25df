/**
 * Two instances on one MariaDB database, as production runs them: grants and revokes committed on
 * one, decisions asked on the other all along. For every cycle it prints how long after the commit
 * the other instance still allowed a revoked grant (target: never later than AUTHZ_REVISION_POLL_MS
 * + 50 ms) and first allowed a new one, and how many documents it rebuilt (target: 0, every change
 * patched from the change log).
 *
 *   npm run bench:cross-instance                          # 1,000 cycles, poll every 100 ms
 *   npm run bench:cross-instance -- --cycles 200 --poll-ms 1000
 *   MYSQL_URL=mysql://root@127.0.0.1:3306 npm run bench:cross-instance
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import knexFactory from 'knex';
import { grantManaged, revokeManaged } from '../../src/accesscontrol/policy-writer.ts';
import type { AuthzInput } from '../../src/authz/types.ts';
import type { Services } from '../../src/services.ts';
import { inProcessServices } from './in-process.ts';
import { fillOrg, scaled } from './scale-org.ts';
import { arg, ms, percentile } from './service-process.ts';

const ORG = 'org_main';
const CYCLES = Number(arg('cycles', '1000'));
const POLL_MS = Number(arg('poll-ms', '100'));
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

/** Asks `input` of `services` until `wanted` is answered; returns the ms since `since` of the last answer that was not. */
async function untilAnswered(services: Services, input: AuthzInput, wanted: boolean, since: number): Promise<number> {
  let lastOther = since;
  for (;;) {
    const { allow } = await services.engine.authorize(input);
    const now = performance.now();
    if (allow === wanted) return lastOther - since;
    lastOther = now;
    if (now - since > 10 * POLL_MS + 1000) throw new Error(`the other instance still answered ${allow} ${ms(now - since)} after the commit`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function main(): Promise<void> {
  const name = `gatehouse_bench_${randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'mysql2', connection: MYSQL_URL });
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  process.env.AUTHZ_REVISION_POLL_MS = String(POLL_MS);
  // instances on one database share their secrets
  process.env.JWT_SECRET ??= randomBytes(32).toString('hex');
  const writer = await inProcessServices('gatehouse-bench-writer-', `${MYSQL_URL}/${name}`);
  const reader = await inProcessServices('gatehouse-bench-reader-', `${MYSQL_URL}/${name}`);
  try {
    const org = await fillOrg(writer.services.db, ORG, scaled(0.01));
    await writer.services.transact(async (tx) => tx.policyChanged(ORG));
    const dashboard = org.dashboards[org.dashboards.length - 1]!;
    const question = (user: string): AuthzInput => ({
      subject: { id: user, kind: 'user', server_admin: false, disabled: false },
      org_id: ORG,
      action: 'dashboards:delete',
      resource: { kind: 'dashboards', uid: dashboard },
    });
    let grantee: string | undefined;
    for (const user of org.users) if (!grantee && !(await reader.services.engine.authorize(question(user))).allow) grantee = user;
    if (!grantee) throw new Error('every member may delete the dashboard before any grant');
    const input = question(grantee);
    const permission = { action: 'dashboards:delete', scope: `dashboards:uid:${dashboard}` };
    const holder = { kind: 'user' as const, userId: grantee };
    const rebuildsBefore = reader.services.engine.stats().rebuilds;
    const revokedAllowedFor: number[] = [];
    const grantedAfter: number[] = [];
    const started = performance.now();
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await writer.services.transact((tx) => grantManaged(tx, ORG, holder, [permission], Date.now()));
      grantedAfter.push(await untilAnswered(reader.services, input, true, performance.now()));
      await writer.services.transact((tx) => revokeManaged(tx, ORG, holder, permission.scope, [permission.action]));
      revokedAllowedFor.push(await untilAnswered(reader.services, input, false, performance.now()));
    }
    const rebuilds = reader.services.engine.stats().rebuilds - rebuildsBefore;
    const latest = Math.max(...revokedAllowedFor);
    console.log(
      `two instances on MariaDB, AUTHZ_REVISION_POLL_MS=${POLL_MS}: ${CYCLES} grant/revoke cycles in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    console.log(
      `revoke, last allow on the other instance after the commit: p50 ${ms(percentile(revokedAllowedFor, 50))}, p99 ${ms(percentile(revokedAllowedFor, 99))}, latest ${ms(latest)}   (target ≤ ${POLL_MS + 50} ms: ${latest <= POLL_MS + 50 ? 'met' : 'missed'})`,
    );
    console.log(
      `grant, first allow on the other instance after the commit: p50 ${ms(percentile(grantedAfter, 50))}, p99 ${ms(percentile(grantedAfter, 99))}, latest ${ms(Math.max(...grantedAfter))}`,
    );
    console.log(`documents the other instance rebuilt meanwhile: ${rebuilds}   (target 0: every change patched from the change log)`);
  } finally {
    for (const instance of [writer, reader]) {
      instance.services.engine.stopChangePoll();
      await instance.services.db.destroy();
      fs.rmSync(instance.dir, { recursive: true, force: true });
    }
    await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.destroy();
  }
}

await main();
