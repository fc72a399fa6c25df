/**
 * Lists at scale: `GET /api/search` (its first page of 50) and `GET /api/folders` in an org of
 * 100,000 dashboards in 5,000 folders nested 8 deep, 2,000 users and 200 teams, against their
 * targets (p50 ≤ 20 ms, p99 ≤ 60 ms). The org is filled through the stores' and the policy
 * writer's bulk paths in a process of its own, then the service runs as production runs it (a
 * process of its own, NODE_ENV=production) on that database and answers requests one at a time.
 * Two readers: members with no org role who read about 1,000 dashboards through grants on
 * folders (their own and their team's) and on dashboards directly, and a Viewer, whose basic
 * role reads every dashboard. It prints each reader's p50 and p99 beside the targets, the first
 * answer of each reader apart (its visible sets not yet kept), and the load average.
 *
 *   npm run bench:lists                      # SQLite
 *   BENCH_DB=mysql npm run bench:lists       # MariaDB on TEST_MYSQL_URL (127.0.0.1:3306, root)
 *   npm run bench:lists -- --requests 500
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { addOrgMembersInBulk, grantManagedToEach, insertTeamsInBulk } from '../../src/accesscontrol/policy-writer.ts';
import type { OrgRole } from '../../src/authz/types.ts';
import { hashPassword } from '../../src/crypto/password.ts';
import { insertDashboardsInBulk } from '../../src/dashboards/store.ts';
import { insertFoldersInBulk } from '../../src/folders/store.ts';
import type { Services } from '../../src/services.ts';
import { prng } from '../../test/helpers/generated-org.ts';
import { inProcessServices } from './in-process.ts';
import { arg, createMysqlBenchDatabase, login, ms, PASSWORD, percentile, SEEDED_SERVICE_ENV, startService } from './service-process.ts';

const ORG = 'org_main';
const SCALE = { dashboards: 100_000, folders: 5_000, depth: 8, users: 2_000, teams: 200, membersPerTeam: 10 };
/** About how many dashboards each restricted reader may read. */
const READABLE = 1_000;
const RESTRICTED_READERS = 10;
const TARGET = { p50: 20, p99: 60 };
const REQUESTS = Number(arg('requests', '300'));

/** The secret key inProcessServices starts with, which the service on the same database must share. */
const FILL_SECRET_KEY = 'bench-secret-key-0123456789abcdef0123';

const userId = (i: number) => `usr_list${String(i).padStart(5, '0')}`;

interface Readers {
  restricted: string[];
  viewer: string;
  /** How many dashboards each restricted reader may read, as the fill counted them. */
  readable: number[];
}

/** Fills the org; returns the logins of the readers to measure. */
async function fill(services: Services): Promise<Readers> {
  const rnd = prng(29);
  const now = Date.now();
  const users = Array.from({ length: SCALE.users }, (_, i) => userId(i));
  const restricted = users.slice(0, RESTRICTED_READERS);
  const viewer = users[RESTRICTED_READERS]!;

  // the tree: a folder's parent is an earlier folder less than 8 deep, or the root
  const folders = Array.from({ length: SCALE.folders }, (_, i) => `lfld${i}`);
  const parentOf = new Map<string, string | null>();
  const depthOf = new Map<string, number>();
  const children = new Map<string, string[]>();
  folders.forEach((uid, i) => {
    const candidate = i >= 50 ? folders[Math.floor(i * rnd.next())]! : null;
    const parent = candidate && depthOf.get(candidate)! < SCALE.depth ? candidate : null;
    parentOf.set(uid, parent);
    depthOf.set(uid, parent ? depthOf.get(parent)! + 1 : 1);
    if (parent) children.set(parent, [...(children.get(parent) ?? []), uid]);
  });
  const dashboards = Array.from({ length: SCALE.dashboards }, (_, i) => ({
    uid: `ldash${i}`,
    title: `Dashboard ${i}`,
    folderUid: rnd.chance(0.03) ? null : rnd.pick(folders),
  }));
  const inFolder = new Map<string, string[]>();
  for (const dashboard of dashboards) if (dashboard.folderUid) inFolder.set(dashboard.folderUid, [...(inFolder.get(dashboard.folderUid) ?? []), dashboard.uid]);
  const subtree = (uid: string): string[] => [uid, ...(children.get(uid) ?? []).flatMap(subtree)];
  const dashboardsUnder = (uid: string) => subtree(uid).flatMap((folder) => inFolder.get(folder) ?? []);
  const smallFolders = folders.filter((uid) => dashboardsUnder(uid).length <= 150);

  const teams = Array.from({ length: SCALE.teams }, (_, i) => ({ id: `team_list${i}`, name: `List team ${i}`, memberIds: [] as string[] }));
  teams.forEach((team, i) => {
    if (i < restricted.length) team.memberIds.push(restricted[i]!);
    while (team.memberIds.length < SCALE.membersPerTeam) team.memberIds.push(rnd.pick(users.slice(RESTRICTED_READERS + 1)));
  });

  const read = (scope: string) => [
    { action: 'folders:read', scope },
    { action: 'dashboards:read', scope },
  ];
  const direct = (uid: string) => ({ action: 'dashboards:read', scope: `dashboards:uid:${uid}` });
  type Grant = Parameters<typeof grantManagedToEach>[2][number];
  const grants: Grant[] = [];
  const teamVisible = new Map<string, Set<string>>();
  for (const team of teams) {
    const held = Array.from({ length: 2 }, () => rnd.pick(smallFolders));
    const directs = Array.from({ length: 5 }, () => rnd.pick(dashboards).uid);
    grants.push({ holder: { kind: 'team', teamId: team.id }, permissions: [...held.flatMap((uid) => read(`folders:uid:${uid}`)), ...directs.map(direct)] });
    teamVisible.set(team.id, new Set([...held.flatMap(dashboardsUnder), ...directs]));
  }
  // each restricted reader: their team's, then folders of their own and direct dashboards until about READABLE
  const readable: number[] = [];
  restricted.forEach((user, i) => {
    const visible = new Set(teamVisible.get(teams[i]!.id));
    const permissions = [];
    for (let k = 0; k < 20; k++) {
      const uid = rnd.pick(dashboards).uid;
      permissions.push(direct(uid));
      visible.add(uid);
    }
    while (visible.size < READABLE) {
      const folder = rnd.pick(smallFolders);
      permissions.push(...read(`folders:uid:${folder}`));
      for (const uid of dashboardsUnder(folder)) visible.add(uid);
    }
    grants.push({ holder: { kind: 'user', userId: user }, permissions });
    readable.push(visible.size);
  });
  // everyone else holds a few grants of their own
  for (const user of users.slice(RESTRICTED_READERS)) {
    grants.push({ holder: { kind: 'user', userId: user }, permissions: [...read(`folders:uid:${rnd.pick(folders)}`), direct(rnd.pick(dashboards).uid)] });
  }

  const measured = new Set([...restricted, viewer]);
  const passwordHash = await hashPassword(PASSWORD);
  const roles: OrgRole[] = ['Viewer', 'Viewer', 'Editor', 'None'];
  await services.transact(async (tx) => {
    const rows = users.map((id, i) => ({
      id,
      login: id,
      email: `${id}@example.test`,
      name: `List user ${i}`,
      password_hash: measured.has(id) ? passwordHash : null,
      is_svc_admin: false,
      is_disabled: false,
      is_service_account: false,
      default_org_id: ORG,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await tx.db('users').insert(rows.slice(i, i + 500));
    const members = users.map((id) => ({
      userId: id,
      role: restricted.includes(id) ? ('None' as const) : id === viewer ? ('Viewer' as const) : rnd.pick(roles),
    }));
    await addOrgMembersInBulk(tx, ORG, members, now);
    await insertTeamsInBulk(tx, ORG, teams, now);
    await insertFoldersInBulk(
      tx,
      ORG,
      folders.map((uid, i) => ({ uid, title: `Folder ${i}`, parentUid: parentOf.get(uid)! })),
      users[0]!,
      now,
    );
    await insertDashboardsInBulk(tx, ORG, dashboards, users[0]!, now);
    await grantManagedToEach(tx, ORG, grants, now);
  });
  return { restricted, viewer, readable };
}

/**
 * Brings MariaDB's index statistics to the filled tables (ANALYZE TABLE), as its background
 * recalculation does within seconds to minutes of a large change: until then, the planner sizes
 * the indexes by the nearly empty tables the fill began with, and measures plans no org that grew
 * over time is given.
 */
async function settleStatistics(services: Services): Promise<void> {
  const [rows] = (await services.db.raw('SHOW TABLES')) as [Array<Record<string, string>>];
  const tables = rows.map((row) => Object.values(row)[0]!);
  await services.db.raw(`ANALYZE TABLE ${tables.map(() => '??').join(', ')}`, tables);
}

/** `count` requests of `path`, one at a time, cycling through the readers' cookies: each one's time. */
async function measure(url: string, cookies: readonly string[], requestPath: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await fetch(`${url}${requestPath}`, { headers: { cookie: cookies[i % cookies.length]! } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${requestPath}: ${res.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

async function totalCount(url: string, cookie: string, requestPath: string): Promise<number> {
  const res = await fetch(`${url}${requestPath}`, { headers: { cookie } });
  return ((await res.json()) as { totalCount: number }).totalCount;
}

async function main(): Promise<void> {
  const database = process.env.BENCH_DB === 'mysql' ? 'mysql' : 'sqlite';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-lists-'));
  let databaseUrl = `sqlite:${path.join(dir, 'lists.sqlite')}`;
  let dropDatabase = async () => {};
  if (database === 'mysql') {
    ({ url: databaseUrl, drop: dropDatabase } = await createMysqlBenchDatabase(`gatehouse_bench_lists_${randomBytes(4).toString('hex')}`));
  }
  try {
    let started = performance.now();
    // the filling process and the service share the database, and so its secrets
    process.env.JWT_SECRET = SEEDED_SERVICE_ENV.JWT_SECRET;
    const filler = await inProcessServices('gatehouse-bench-lists-fill-', databaseUrl);
    const readers = await fill(filler.services);
    if (database === 'mysql') await settleStatistics(filler.services);
    filler.services.engine.stopChangePoll();
    await filler.services.db.destroy();
    fs.rmSync(filler.dir, { recursive: true, force: true });
    console.log(
      `org filled in ${((performance.now() - started) / 1000).toFixed(1)} s on ${database}: ${SCALE.dashboards} dashboards, ${SCALE.folders} folders (${SCALE.depth} deep), ${SCALE.users} users, ${SCALE.teams} teams`,
    );

    const service = await startService({ SECRET_KEY: FILL_SECRET_KEY }, database, { databaseUrl });
    try {
      const restricted = await Promise.all(readers.restricted.map(async (user) => (await login(service.url, user)).cookie));
      const viewer = (await login(service.url, readers.viewer)).cookie;
      const counted = await totalCount(service.url, restricted[0]!, '/api/search?type=dash-db&perpage=1');
      console.log(
        `restricted readers: ${RESTRICTED_READERS}, each reading ${Math.min(...readers.readable)}–${Math.max(...readers.readable)} dashboards (the first: ${counted} by search)`,
      );
      const endpoints = [
        { label: 'GET /api/search (page 1 of 50)', path: '/api/search?perpage=50&page=1' },
        { label: 'GET /api/folders', path: '/api/folders' },
      ];
      const rows: string[] = [];
      for (const endpoint of endpoints) {
        for (const [who, cookies] of [
          ['restricted', restricted],
          ['viewer', [viewer]],
        ] as const) {
          started = performance.now();
          const first = await measure(service.url, cookies, endpoint.path, cookies.length);
          const times = await measure(service.url, cookies, endpoint.path, REQUESTS);
          const p50 = percentile(times, 50);
          const p99 = percentile(times, 99);
          const met = p50 <= TARGET.p50 && p99 <= TARGET.p99 ? 'met' : 'MISSED';
          rows.push(
            `${endpoint.label.padEnd(32)} ${who.padEnd(10)} p50 ${ms(p50).padStart(9)}  p99 ${ms(p99).padStart(9)}  (target ≤ ${TARGET.p50} / ≤ ${TARGET.p99} ms: ${met})  first answers: max ${ms(Math.max(...first))}`,
          );
        }
      }
      console.log(rows.join('\n'));
      console.log(
        `load average: ${os
          .loadavg()
          .map((load) => load.toFixed(2))
          .join(' ')} on ${os.availableParallelism()} cores; ${REQUESTS} requests each, one at a time`,
      );
    } finally {
      await service.stop();
    }
  } finally {
    await dropDatabase();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
