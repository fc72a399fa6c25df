/**
 * Benchmark of authorize() at org scale S (10,000 users, 1,000 teams, 5,000 folders nested up to
 * 8 deep, 50,000 dashboards, 100,000 grants). Prints the data-document build time and size,
 * p50/p99 of authorize() over a realistic mix, the time until a grant change is visible, the
 * process RSS, and native OPA (`opa bench`) on the same policy, data and inputs, with the ratio.
 *
 *   npm run bench:authorize                 # scale S on a temporary SQLite file
 *   npm run bench:authorize -- --scale 0.1  # a tenth of it
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/bench npm run bench:authorize
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildOrgDocument } from '../../src/authz/document.ts';
import type { AuthzEngine } from '../../src/authz/engine.ts';
import type { AuthzInput, Subject } from '../../src/authz/types.ts';
import { addAssignment, createRole } from '../../src/accesscontrol/policy-writer.ts';
import { SYSTEM_ACTOR } from '../../src/audit/writer.ts';
import { findAncestors, findFolder, updateFolder } from '../../src/folders/store.ts';
import { FOLDER_GRANTS } from '../../src/permissions/levels.ts';
import { replaceGrants, resolveGrantItems } from '../../src/permissions/resource-grants.ts';
import { inProcessServices } from './in-process.ts';
import { fillOrg, questionPool, scaled } from './scale-org.ts';

const ORG = 'org_main';
const SAMPLES = 200_000;
/** How many grant changes are timed until authorize() sees each. */
const GRANT_CHANGES = 11;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

async function measure(label: string, engine: AuthzEngine, stream: AuthzInput[]): Promise<void> {
  for (let i = 0; i < 20_000; i++) await engine.authorize(stream[i]!);
  const timings = new Float64Array(stream.length);
  // what each call was: kept (answered from the kept answers), or evaluated and allowed or denied
  const kinds = new Uint8Array(stream.length);
  let allowed = 0;
  for (let i = 0; i < stream.length; i++) {
    const hitsBefore = keptHits(engine);
    const t0 = process.hrtime.bigint();
    const decision = await engine.authorize(stream[i]!);
    timings[i] = Number(process.hrtime.bigint() - t0);
    if (decision.allow) allowed++;
    kinds[i] = keptHits(engine) > hitsBefore ? KEPT : decision.allow ? EVALUATED_ALLOW : EVALUATED_DENY;
  }
  const sorted = timings.slice().sort();
  const mean = timings.reduce((a, b) => a + b, 0) / stream.length;
  console.log(`${label}:`);
  console.log(
    `  p50 ${us(percentile(sorted, 50))} (target ≤ 10 µs), p99 ${us(percentile(sorted, 99))} (target ≤ 50 µs), mean ${us(mean)}; ${stream.length} calls, ${((allowed / stream.length) * 100).toFixed(1)}% allowed`,
  );
  const p99 = percentile(sorted, 99);
  const medians = new Float64Array(KIND_NAMES.length);
  for (const [kind, name] of KIND_NAMES) {
    const own = sortedOfKind(timings, kinds, kind);
    if (own.length === 0) continue;
    medians[kind] = percentile(own, 50);
    const slowest = kinds.filter((k, i) => k === kind && timings[i]! >= p99).length;
    console.log(
      `  ${name.padEnd(18)} ${((own.length / stream.length) * 100).toFixed(1).padStart(5)}% of the calls: p50 ${us(percentile(own, 50))}, p99 ${us(percentile(own, 99))}; ${((slowest / Math.ceil(stream.length / 100)) * 100).toFixed(0)}% of the slowest 1%`,
    );
  }
  const floor = machineFloor(kinds, medians).sort();
  console.log(
    `  the machine alone: the same calls, each a fixed computation as long as its kind's p50: p50 ${us(percentile(floor, 50))}, p99 ${us(percentile(floor, 99))}`,
  );
}

/**
 * The tail this machine gives calls whose cost never varies: each call of the stream replaced by
 * a loop of pure arithmetic that takes its kind's median, in the same order. What it measures
 * above those medians is the machine's (another tenant's steal of the shared cores, interrupts,
 * the timer), the same for any code: on a quiet machine its p99 is close to the longest median.
 * A first pass finds how many rounds of the loop make each median, the second is the one shown.
 */
function machineFloor(kinds: Uint8Array, medians: Float64Array): Float64Array {
  const rounds = Array.from(medians, (median) => Math.max(1, Math.round(median / 10)));
  let timings = new Float64Array(0);
  for (let pass = 0; pass < 2; pass++) {
    timings = new Float64Array(kinds.length);
    for (let i = 0; i < kinds.length; i++) {
      const t0 = process.hrtime.bigint();
      spin(rounds[kinds[i]!]!);
      timings[i] = Number(process.hrtime.bigint() - t0);
    }
    for (const [kind] of KIND_NAMES) {
      const own = sortedOfKind(timings, kinds, kind);
      if (own.length > 0) rounds[kind] = Math.max(1, Math.round((rounds[kind]! * medians[kind]!) / percentile(own, 50)));
    }
  }
  return timings;
}

/** The timings of the calls of one kind, sorted. */
function sortedOfKind(timings: Float64Array, kinds: Uint8Array, kind: number): Float64Array {
  return timings.filter((_, i) => kinds[i] === kind).sort();
}

let spinSink = 0;
function spin(rounds: number): void {
  let x = spinSink;
  for (let i = 0; i < rounds; i++) x = (Math.imul(x, 31) + i) | 0;
  spinSink = x;
}

/** The engine's count of kept answers given, read from its counter: stats() would build an object and walk the loaded orgs twice per call measured. */
const keptHits = (engine: AuthzEngine) => (engine as unknown as { counters: { keptDecisionHits: number } }).counters.keptDecisionHits;

const KEPT = 0;
const EVALUATED_ALLOW = 1;
const EVALUATED_DENY = 2;
const KIND_NAMES = [
  [KEPT, 'kept answers'],
  [EVALUATED_ALLOW, 'evaluated, allowed'],
  [EVALUATED_DENY, 'evaluated, denied'],
] as const;

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const us = (ns: number) => `${(ns / 1000).toFixed(2)} µs`;
const ms = (value: number) => `${value.toFixed(1)} ms`;

async function main(): Promise<void> {
  const factor = Number(arg('scale', '1'));
  const scale = scaled(factor);
  const { services, dir } = await inProcessServices('gatehouse-bench-', process.env.DATABASE_URL);
  console.log(`scale ${factor}: ${JSON.stringify(scale)} on ${services.db.client.config.client}`);

  let started = performance.now();
  const org = await fillOrg(services.db, ORG, scale);
  console.log(`fill:                   ${ms(performance.now() - started)}`);

  started = performance.now();
  const document = await buildOrgDocument(services.db, ORG, { legacyAclEnabled: true });
  const buildMs = performance.now() - started;
  const json = JSON.stringify(document);
  console.log(`data document build:    ${ms(buildMs)} (SQL + indexing)`);
  console.log(`data document size:     ${(json.length / 1024 / 1024).toFixed(1)} MiB JSON`);

  started = performance.now();
  await services.engine.authorize({
    subject: { id: org.users[0]!, kind: 'user', server_admin: false, disabled: false },
    org_id: ORG,
    action: 'dashboards:read',
  });
  console.log(`first authorize (load): ${ms(performance.now() - started)} (document build + wasm setData)`);

  const { pool, subjects, skewed } = questionPool(ORG, org, 100_000);
  const stream = Array.from({ length: SAMPLES }, () => skewed(pool));

  await measure('authorize()', services.engine, stream);
  await measureTeamFilter(services.engine, subjects.slice(0, 20), org.teams);

  // Grant changes: commit, then ask until the decision flips; several, as one is at the mercy of a
  // single pause of the machine.
  const grantee = org.users.find((u) => document.members[u]?.role === 'None' && document.members[u]!.teams.length === 0) ?? org.users[1]!;
  const changeInput: AuthzInput = {
    subject: { id: grantee, kind: 'user', server_admin: false, disabled: false },
    org_id: ORG,
    action: 'dashboards:delete',
    resource: { kind: 'dashboards', uid: org.dashboards[org.dashboards.length - 1]! },
  };
  const changes: Array<{ commit: number; visible: number; flipped: boolean }> = [];
  for (let change = 0; change < GRANT_CHANGES; change++) {
    const target = org.dashboards[org.dashboards.length - 1 - change]!;
    const input: AuthzInput = { ...changeInput, resource: { kind: 'dashboards', uid: target } };
    const before = await services.engine.authorize(input);
    const written = performance.now();
    await services.transact(async (tx) => {
      const uid = `custom:bench-grant-${change}`;
      const permissions = [{ action: 'dashboards:delete', scope: `dashboards:uid:${target}` }];
      const roleId = await createRole(tx, ORG, { uid, name: uid, displayName: 'bench', description: '', groupName: '', permissions }, Date.now());
      await addAssignment(tx, { kind: 'user', userId: grantee, orgId: ORG }, roleId, Date.now());
    });
    const committed = performance.now();
    const after = await services.engine.authorize(input);
    changes.push({ commit: committed - written, visible: performance.now() - written, flipped: !before.allow && after.allow });
  }
  const visibleTimes = Float64Array.from(changes, (change) => change.visible).sort();
  const commitTimes = Float64Array.from(changes, (change) => change.commit).sort();
  console.log(
    `grant change visible:   median ${ms(percentile(visibleTimes, 50))}, slowest ${ms(percentile(visibleTimes, 100))} of ${GRANT_CHANGES} from the write (commit: median ${ms(percentile(commitTimes, 50))}); every one flipped deny to allow: ${changes.every((change) => change.flipped)}   (target ≤ 20 ms)`,
  );

  // A folder move: the whole tree's ancestor chains are re-read, then a dashboard in the moved
  // folder answers to the grants of its new parent (an action nobody else holds, so it flips).
  const [moved] = await services
    .db('folders as f')
    .where('f.org_id', ORG)
    .whereNotNull('f.parent_uid')
    .whereNotExists((q) => q.select('*').from('folders as c').where('c.org_id', ORG).whereRaw('c.parent_uid = f.uid'))
    .whereExists((q) => q.select('*').from('dashboards as d').where('d.org_id', ORG).whereRaw('d.folder_uid = f.uid'))
    .limit(1)
    .select('f.uid');
  const movedDashboard: string = (await services.db('dashboards').where({ org_id: ORG, folder_uid: moved.uid }).first('uid')).uid;
  const movedRow = (await findFolder(services.db, ORG, moved.uid))!;
  const oldChain = (await findAncestors(services.db, ORG, movedRow)).map((folder) => folder.uid);
  const newParent: string = (await services.db('folders').where('org_id', ORG).whereNull('parent_uid').whereNotIn('uid', oldChain).first('uid')).uid;
  await services.transact(async (tx) => {
    const roleId = await createRole(
      tx,
      ORG,
      {
        uid: 'custom:bench-folder',
        name: 'custom:bench-folder',
        displayName: 'bench',
        description: '',
        groupName: '',
        permissions: [{ action: 'dashboards:bench-move', scope: `folders:uid:${newParent}` }],
      },
      Date.now(),
    );
    await addAssignment(tx, { kind: 'user', userId: grantee, orgId: ORG }, roleId, Date.now());
  });
  const moveInput: AuthzInput = { ...changeInput, action: 'dashboards:bench-move', resource: { kind: 'dashboards', uid: movedDashboard } };
  const beforeMove = await services.engine.authorize(moveInput);
  started = performance.now();
  await services.transact(async (tx) => {
    await updateFolder(tx, movedRow, { parent_uid: newParent }, grantee, Date.now());
  });
  const moveCommitted = performance.now();
  const afterMove = await services.engine.authorize(moveInput);
  const moveVisible = performance.now();
  console.log(
    `folder move visible:    ${ms(moveVisible - started)} from the write (${ms(moveCommitted - started)} commit + ${ms(moveVisible - moveCommitted)} until authorize() sees it; before=${beforeMove.allow}, after=${afterMove.allow})`,
  );
  await measure('authorize() after the move', services.engine, stream);

  // A bulk replacement of a folder's grants, as POST /api/folders/:uid/permissions does it:
  // 500 principals at once (the grantee among them, with Edit), then a dashboard of the folder
  // answers to the new set.
  const bulkFolder = moved.uid as string;
  const bulkDashboard = movedDashboard;
  const bulkInput: AuthzInput = { ...changeInput, action: 'dashboards:delete', resource: { kind: 'dashboards', uid: bulkDashboard } };
  const beforeBulk = await services.engine.authorize(bulkInput);
  const principals = [grantee, ...org.users.filter((user) => user !== grantee).slice(0, 499)];
  const items = principals.map((userId, i) => ({ userId, permission: userId === grantee ? 2 : [1, 2, 4][i % 3]! }));
  started = performance.now();
  await services.transact(async (tx) => {
    const grants = await resolveGrantItems(tx.db, ORG, items);
    const folderRow = (await findFolder(tx.db, ORG, bulkFolder, true))!;
    await replaceGrants(tx, SYSTEM_ACTOR, ORG, FOLDER_GRANTS, { type: 'folder', id: folderRow.uid, name: folderRow.title }, grants, Date.now());
  });
  const bulkCommitted = performance.now();
  const afterBulk = await services.engine.authorize(bulkInput);
  const bulkVisible = performance.now();
  console.log(
    `bulk grants visible:    ${ms(bulkVisible - started)} from the write of ${items.length} grants (${ms(bulkCommitted - started)} commit + ${ms(bulkVisible - bulkCommitted)} until authorize() sees it; before=${beforeBulk.allow}, after=${afterBulk.allow})`,
  );
  await measure('authorize() after the bulk replacement', services.engine, stream);

  const memory = process.memoryUsage();
  console.log(
    `process RSS:            ${(memory.rss / 1024 / 1024).toFixed(0)} MiB (heap ${(memory.heapUsed / 1024 / 1024).toFixed(0)} MiB, wasm ${(services.engine.stats().wasmBytes / 1024 / 1024).toFixed(0)} MiB)`,
  );

  await nativeOpa(dir, json, pool.slice(0, 6), services.engine);
  services.engine.stopChangePoll();
  await services.db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * What `GET /api/teams/search` asks of the policy in an org at this scale: filter() over every
 * team of the org, for each of `askers` first (evaluated item by item) and then again (a kept
 * answer, until the org's document changes).
 */
async function measureTeamFilter(engine: AuthzEngine, askers: Subject[], teams: string[]): Promise<void> {
  const resources = teams.map((id) => ({ kind: 'teams', id }));
  const first: number[] = [];
  const again: number[] = [];
  for (const subject of askers) {
    for (const times of [first, again]) {
      const started = process.hrtime.bigint();
      await engine.filter({ subject, org_id: ORG, action: 'teams:read', resources });
      times.push(Number(process.hrtime.bigint() - started));
    }
  }
  console.log(
    `filter() of ${teams.length} teams:  first p50 ${ms(percentile(Float64Array.from(first).sort(), 50) / 1e6)}, asked again p50 ${ms(percentile(Float64Array.from(again).sort(), 50) / 1e6)} (${askers.length} members)`,
  );
}

/** `opa bench` on the same Rego sources, data and inputs, against this engine's mean for those inputs. */
async function nativeOpa(dir: string, json: string, inputs: AuthzInput[], engine: AuthzEngine): Promise<void> {
  let opa: string;
  try {
    opa = execFileSync('bash', [path.resolve('tools/opa.sh')], { encoding: 'utf8' }).trim();
  } catch {
    console.log('native OPA:             skipped (opa not available)');
    return;
  }
  const dataFile = path.join(dir, 'data.json');
  fs.writeFileSync(dataFile, json);
  let nativeTotal = 0;
  let wasmTotal = 0;
  for (const [i, input] of inputs.entries()) {
    const inputFile = path.join(dir, `input${i}.json`);
    fs.writeFileSync(inputFile, JSON.stringify(input));
    const out = execFileSync(
      opa,
      ['bench', '--format', 'json', '--count', '1', '-d', 'policies/authz', '-d', dataFile, '--input', inputFile, 'data.authz.decision'],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const nsPerOp = JSON.parse(out).N ? JSON.parse(out).T / JSON.parse(out).N : NaN;
    const runs = 20_000;
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < runs; k++) await engine.authorize(input);
    const wasmNs = Number(process.hrtime.bigint() - t0) / runs;
    nativeTotal += nsPerOp;
    wasmTotal += wasmNs;
    console.log(`native OPA input ${i}:     ${us(nsPerOp)}/op (opa bench)  vs  wasm authorize() ${us(wasmNs)}/op  [${input.action}]`);
  }
  console.log(
    `native OPA / wasm:      ${(nativeTotal / wasmTotal).toFixed(1)}x (mean ${us(nativeTotal / inputs.length)} native vs ${us(wasmTotal / inputs.length)} wasm)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
