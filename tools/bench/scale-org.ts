/**
 * Fills an org at a given scale straight through SQL: users and memberships, teams and their
 * members, a folder forest nested up to 8 deep, dashboards in it, and grants stored as
 * permissions of managed roles. Deterministic for a given seed.
 */
import type { Knex } from 'knex';
import { managedRoleRow } from '../../src/accesscontrol/policy-writer.ts';
import type { AuthzInput, Subject } from '../../src/authz/types.ts';
import { siblingKeys } from '../../src/folders/store.ts';
import { prng } from '../../test/helpers/generated-org.ts';

export interface Scale {
  users: number;
  teams: number;
  folders: number;
  dashboards: number;
  grants: number;
}

export const SCALE_S: Scale = { users: 10_000, teams: 1_000, folders: 5_000, dashboards: 50_000, grants: 100_000 };

export function scaled(factor: number): Scale {
  const n = (x: number) => Math.max(1, Math.round(x * factor));
  return { users: n(SCALE_S.users), teams: n(SCALE_S.teams), folders: n(SCALE_S.folders), dashboards: n(SCALE_S.dashboards), grants: n(SCALE_S.grants) };
}

export interface ScaleOrg {
  users: string[];
  teams: string[];
  folders: string[];
  dashboards: string[];
  depthOf: Map<string, number>;
}

async function insertAll(db: Knex, table: string, rows: object[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 400) await db(table).insert(rows.slice(i, i + 400));
}

export async function fillOrg(db: Knex, orgId: string, scale: Scale, seed = 7): Promise<ScaleOrg> {
  const rnd = prng(seed);
  const now = Date.now();
  const users = Array.from({ length: scale.users }, (_, i) => `usr_b${i.toString(16).padStart(8, '0')}`);
  const teams = Array.from({ length: scale.teams }, (_, i) => `team_b${i}`);
  const folders = Array.from({ length: scale.folders }, (_, i) => `fld${i}`);
  const dashboards = Array.from({ length: scale.dashboards }, (_, i) => `dash${i}`);
  const depthOf = new Map<string, number>();

  await db.transaction(async (trx) => {
    await insertAll(
      trx,
      'users',
      users.map((id, i) => ({
        id,
        login: `bench${i}`,
        email: `bench${i}@example.test`,
        name: `Bench ${i}`,
        password_hash: null,
        is_svc_admin: false,
        is_disabled: false,
        is_service_account: false,
        default_org_id: orgId,
        created_at: now,
        updated_at: now,
      })),
    );
    const roles = ['Viewer', 'Viewer', 'Viewer', 'Editor', 'Editor', 'Admin', 'None'];
    await insertAll(
      trx,
      'org_members',
      users.map((user_id) => ({ org_id: orgId, user_id, role: rnd.pick(roles), created_at: now })),
    );
    await insertAll(
      trx,
      'teams',
      teams.map((id, i) => ({ id, org_id: orgId, name: `team ${i}`, email: '', created_at: now, updated_at: now })),
    );
    const teamMembers = new Map<string, { team_id: string; user_id: string; permission: number; created_at: number }>();
    for (const team_id of teams)
      for (let k = 0; k < 10; k++) {
        const user_id = rnd.pick(users);
        teamMembers.set(`${team_id}/${user_id}`, { team_id, user_id, permission: 0, created_at: now });
      }
    await insertAll(trx, 'team_members', [...teamMembers.values()]);

    const folderRows = folders.map((uid, i) => {
      let parent: string | null = null;
      if (i > 0 && rnd.chance(0.8)) {
        const candidate = folders[rnd.int(i)]!;
        if ((depthOf.get(candidate) ?? 1) < 8) parent = candidate;
      }
      depthOf.set(uid, parent ? depthOf.get(parent)! + 1 : 1);
      return { org_id: orgId, uid, title: `Folder ${i}`, parent_uid: parent, ...siblingKeys(parent, `Folder ${i}`), created_at: now, updated_at: now };
    });
    await insertAll(trx, 'folders', folderRows);
    await insertAll(
      trx,
      'dashboards',
      dashboards.map((uid, i) => ({ org_id: orgId, uid, title: `Dashboard ${i}`, folder_uid: rnd.pick(folders), created_at: now, updated_at: now })),
    );

    const managed = [
      ...users.map((u) => ({ uid: `managed:users:${u}:permissions`, user: u, team: null as string | null })),
      ...teams.map((t) => ({ uid: `managed:teams:${t}:permissions`, user: null as string | null, team: t })),
    ];
    // the role entries a connector is made with, Viewer and Editor View, for the connector the questions query
    const connectorEntries = ['managed:builtins:viewer:permissions', 'managed:builtins:editor:permissions'];
    await insertAll(
      trx,
      'roles',
      [...managed.map((m) => m.uid), ...connectorEntries].map((uid) => managedRoleRow(uid, orgId, now)),
    );
    const roleIds = new Map<string, number>(
      (await trx('roles').where('org_id', orgId).where('uid', 'like', 'managed:%').select('id', 'uid')).map((r: { id: number; uid: string }) => [r.uid, r.id]),
    );
    await insertAll(
      trx,
      'user_roles',
      managed.filter((m) => m.user).map((m) => ({ user_id: m.user, role_id: roleIds.get(m.uid), org_id: orgId, created_at: now })),
    );
    await insertAll(
      trx,
      'team_roles',
      managed.filter((m) => m.team).map((m) => ({ team_id: m.team, role_id: roleIds.get(m.uid), created_at: now })),
    );

    const grants = new Map<string, { role_id: number; action: string; scope: string }>();
    const levels = [['dashboards:read'], ['dashboards:read', 'dashboards:write'], ['dashboards:read', 'dashboards:write', 'dashboards.permissions:write']];
    while (grants.size < scale.grants) {
      const holder = rnd.pick(managed);
      const scope = rnd.chance(0.6) ? `dashboards:uid:${rnd.pick(dashboards)}` : `folders:uid:${rnd.pick(folders)}`;
      for (const action of rnd.pick(levels)) {
        const role_id = roleIds.get(holder.uid)!;
        grants.set(`${role_id}/${action}/${scope}`, { role_id, action, scope });
      }
    }
    await insertAll(trx, 'role_permissions', [...grants.values()].slice(0, scale.grants));
    await insertAll(
      trx,
      'role_permissions',
      connectorEntries.flatMap((uid) =>
        ['connectors:read', 'connectors:query'].map((action) => ({ role_id: roleIds.get(uid)!, action, scope: 'connectors:uid:prom' })),
      ),
    );
  });
  return { users, teams, folders, dashboards, depthOf };
}

/**
 * The realistic mix of questions asked of an org at this scale: mostly dashboard reads and writes
 * by members, folder reads, connector queries, team reads; a few non-members and server admins.
 * Traffic is skewed the way real traffic is (a few users and dashboards are hot): `size` distinct
 * questions drawn with a cubic skew, so repeats happen but most of the pool is cold. `subjects`
 * are the askers (users, then a non-member server admin); `skewed` draws from a list with the same
 * skew, for a stream over the pool.
 */
export function questionPool(
  orgId: string,
  org: ScaleOrg,
  size: number,
  seed = 11,
): { pool: AuthzInput[]; subjects: Subject[]; skewed: <T>(items: readonly T[]) => T } {
  const rnd = prng(seed);
  const subjects: Subject[] = org.users.map((id) => ({ id, kind: 'user', server_admin: rnd.chance(0.01), disabled: false }));
  subjects.push({ id: 'usr_nonmember', kind: 'user', server_admin: true, disabled: false });
  const skewed = <T>(items: readonly T[]) => items[Math.floor(items.length * rnd.next() ** 3)]!;
  const pool: AuthzInput[] = Array.from({ length: size }, () => {
    const subject = skewed(subjects);
    const roll = rnd.int(100);
    if (roll < 45) return { subject, org_id: orgId, action: 'dashboards:read', resource: { kind: 'dashboards', uid: skewed(org.dashboards) } };
    if (roll < 65) return { subject, org_id: orgId, action: 'dashboards:write', resource: { kind: 'dashboards', uid: skewed(org.dashboards) } };
    if (roll < 80) return { subject, org_id: orgId, action: 'folders:read', resource: { kind: 'folders', uid: skewed(org.folders) } };
    if (roll < 90) return { subject, org_id: orgId, action: 'connectors:query', resource: { kind: 'connectors', uid: 'prom' } };
    if (roll < 97) return { subject, org_id: orgId, action: 'teams:read', resource: { kind: 'teams', id: skewed(org.teams) } };
    return { subject, org_id: orgId, action: 'dashboards.permissions:write', resource: { kind: 'dashboards', uid: skewed(org.dashboards) } };
  });
  return { pool, subjects, skewed };
}
