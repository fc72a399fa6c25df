/**
 * What the resource-permission endpoints share: a grant item names exactly one principal (a
 * member of the org, a team of the org, or an org role) and a level; a POST replaces the
 * resource's whole set of direct grants in that family through accesscontrol/policy-writer.ts, and each
 * principal whose level changed is audited (`permission.granted` / `permission.revoked`).
 */
import type { Knex } from 'knex';
import { recordAudits, type Actor, type AuditEvent } from '../audit/writer.ts';
import type { Permission } from '../accesscontrol/builtin-roles.ts';
import { grantManaged, grantManagedToEach, managedRoleUid, replaceManagedGrants, type GrantHolder } from '../accesscontrol/policy-writer.ts';
import { findManagedPermissionsOnScopes } from '../accesscontrol/store.ts';
import type { Tx } from '../db/transaction.ts';
import { BadRequestError } from '../errors.ts';
import { findMembersByIds } from '../orgs/store.ts';
import { findTeamsByIds } from '../teams/store.ts';
import {
  CONNECTOR_GRANTS,
  DEFAULT_CONNECTOR_GRANTS,
  familyActions,
  LEVEL_NAMES,
  levelGives,
  levelOf,
  type GrantFamily,
  type PermissionLevel,
} from './levels.ts';

const ORG_ROLES = ['Viewer', 'Editor', 'Admin'] as const;
type GrantRole = (typeof ORG_ROLES)[number];

/** The body of a POST: `{items: [{userId | teamId | role, permission}]}`. */
export const grantItemsSchema = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      maxItems: 500,
      items: {
        type: 'object',
        properties: {
          userId: { type: 'string', minLength: 1, maxLength: 40 },
          teamId: { type: 'string', minLength: 1, maxLength: 40 },
          role: { type: 'string', enum: [...ORG_ROLES] },
          permission: { type: 'integer', enum: [1, 2, 4] },
        },
        required: ['permission'],
        additionalProperties: false,
      },
    },
  },
  required: ['items'],
  additionalProperties: false,
} as const;

export interface GrantItemInput {
  userId?: string;
  teamId?: string;
  role?: GrantRole;
  permission: number;
}

/** A grant whose principal is known: the holder, its names for display, and the level. */
export interface ResolvedGrant {
  holder: GrantHolder;
  userLogin?: string;
  team?: string;
  permission: PermissionLevel;
}

const holderKey = (holder: GrantHolder) => managedRoleUid(holder);

/** The holder a managed role uid names, if it is one of the three kinds. */
function holderOfRole(uid: string): GrantHolder | undefined {
  const match = /^managed:(users|teams|builtins):(.+):permissions$/.exec(uid);
  if (!match) return undefined;
  if (match[1] === 'users') return { kind: 'user', userId: match[2]! };
  if (match[1] === 'teams') return { kind: 'team', teamId: match[2]! };
  const role = ORG_ROLES.find((name) => name.toLowerCase() === match[2]);
  return role && { kind: 'builtin', role };
}

/**
 * The permissions a set of grants gives on the resource, what they carry included: what the
 * caller must hold to give them (delegation).
 */
export function grantedPermissions(family: GrantFamily, uid: string, items: ReadonlyArray<{ permission: number }>): Permission[] {
  const actions = new Set(items.flatMap((item) => levelGives(family, item.permission as PermissionLevel)));
  return [...actions].map((action) => ({ action, scope: family.scopeOf(uid) }));
}

/**
 * Checks each item names exactly one principal, once, and that the principal belongs to the
 * org; a principal of another org is as unknown as a missing one.
 */
export async function resolveGrantItems(db: Knex, orgId: string, items: readonly GrantItemInput[]): Promise<ResolvedGrant[]> {
  items.forEach((item, i) => {
    const named = [item.userId, item.teamId, item.role].filter((value) => value !== undefined).length;
    if (named !== 1) throw new BadRequestError(`items[${i}] must name exactly one of userId, teamId or role`);
  });
  const userIds = items.flatMap((item) => (item.userId ? [item.userId] : []));
  const teamIds = items.flatMap((item) => (item.teamId ? [item.teamId] : []));
  const [members, teams] = await Promise.all([findMembersByIds(db, orgId, userIds), findTeamsByIds(db, teamIds)]);
  const logins = new Map(members.map((member) => [member.id, member.login]));
  const teamNames = new Map(teams.filter((team) => team.org_id === orgId).map((team) => [team.id, team.name]));
  const seen = new Set<string>();
  return items.map((item, i) => {
    const permission = item.permission as PermissionLevel;
    let grant: ResolvedGrant;
    if (item.userId !== undefined) {
      const login = logins.get(item.userId);
      if (!login) throw new BadRequestError(`items[${i}].userId: user ${item.userId} is not a member of this org`);
      grant = { holder: { kind: 'user', userId: item.userId }, userLogin: login, permission };
    } else if (item.teamId !== undefined) {
      const name = teamNames.get(item.teamId);
      if (!name) throw new BadRequestError(`items[${i}].teamId: team ${item.teamId} not found in this org`);
      grant = { holder: { kind: 'team', teamId: item.teamId }, team: name, permission };
    } else {
      grant = { holder: { kind: 'builtin', role: item.role! }, permission };
    }
    const key = holderKey(grant.holder);
    if (seen.has(key)) throw new BadRequestError(`items[${i}] names a principal an earlier item already names: one item per principal`);
    seen.add(key);
    return grant;
  });
}

/** The direct grants of the family on each scope, by scope. */
async function readGrants(db: Knex, orgId: string, family: GrantFamily, scopes: string[]): Promise<Map<string, ResolvedGrant[]>> {
  const rows = await findManagedPermissionsOnScopes(db, orgId, scopes, familyActions(family));
  const held = new Map<string, Map<string, Set<string>>>();
  for (const row of rows) {
    const byRole = held.get(row.scope) ?? new Map<string, Set<string>>();
    held.set(row.scope, byRole);
    const actions = byRole.get(row.uid) ?? new Set<string>();
    byRole.set(row.uid, actions);
    actions.add(row.action);
  }
  const grants = new Map<string, ResolvedGrant[]>();
  for (const [scope, byRole] of held) {
    const list: ResolvedGrant[] = [];
    for (const [uid, actions] of byRole) {
      const holder = holderOfRole(uid);
      const permission = levelOf(family, actions);
      if (holder && permission) list.push({ holder, permission });
    }
    grants.set(scope, list);
  }
  await nameHolders(db, orgId, [...grants.values()].flat());
  return grants;
}

async function nameHolders(db: Knex, orgId: string, grants: ResolvedGrant[]): Promise<void> {
  const userIds = grants.flatMap((grant) => (grant.holder.kind === 'user' ? [grant.holder.userId] : []));
  const teamIds = grants.flatMap((grant) => (grant.holder.kind === 'team' ? [grant.holder.teamId] : []));
  const [members, teams] = await Promise.all([findMembersByIds(db, orgId, userIds), findTeamsByIds(db, teamIds)]);
  const logins = new Map(members.map((member) => [member.id, member.login]));
  const names = new Map(teams.map((team) => [team.id, team.name]));
  for (const grant of grants) {
    if (grant.holder.kind === 'user') grant.userLogin = logins.get(grant.holder.userId) ?? '';
    if (grant.holder.kind === 'team') grant.team = names.get(grant.holder.teamId) ?? '';
  }
}

const ROLE_ORDER: Record<GrantRole, number> = { Admin: 0, Editor: 1, Viewer: 2 };

/** Roles first (Admin down), then teams by name, then users by login. */
function byPrincipal(a: ResolvedGrant, b: ResolvedGrant): number {
  const rank = (grant: ResolvedGrant) => (grant.holder.kind === 'builtin' ? 0 : grant.holder.kind === 'team' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a.holder.kind === 'builtin' && b.holder.kind === 'builtin') return ROLE_ORDER[a.holder.role] - ROLE_ORDER[b.holder.role];
  return (a.team ?? a.userLogin ?? '').localeCompare(b.team ?? b.userLogin ?? '');
}

export function presentGrant(grant: ResolvedGrant, inheritedFrom?: string) {
  const { holder } = grant;
  return {
    userId: holder.kind === 'user' ? holder.userId : null,
    userLogin: holder.kind === 'user' ? (grant.userLogin ?? '') : null,
    teamId: holder.kind === 'team' ? holder.teamId : null,
    team: holder.kind === 'team' ? (grant.team ?? '') : null,
    role: holder.kind === 'builtin' ? holder.role : null,
    permission: grant.permission,
    permissionName: LEVEL_NAMES[grant.permission],
    inherited: inheritedFrom !== undefined,
    ...(inheritedFrom !== undefined && { folderUid: inheritedFrom }),
  };
}

const nullableText = { type: ['string', 'null'] } as const;

/** What presentGrant sends: one holder (the others null), its level, and for an inherited grant the folder it comes from. */
export const GRANT_SCHEMA = {
  type: 'object',
  properties: {
    userId: nullableText,
    userLogin: nullableText,
    teamId: nullableText,
    team: nullableText,
    role: { enum: [...ORG_ROLES, null] },
    permission: { enum: [1, 2, 4] },
    permissionName: { enum: ['View', 'Edit', 'Admin'] },
    inherited: { type: 'boolean' },
    folderUid: { type: 'string' },
  },
  required: ['userId', 'userLogin', 'teamId', 'team', 'role', 'permission', 'permissionName', 'inherited'],
} as const;

/** Where grants that reach a resource come from: these families' grants on each folder, nearest first. */
export interface InheritedGrants {
  families: readonly GrantFamily[];
  folderUids: string[];
}

/**
 * The resource's direct grants, then those that reach it from folders (`inherited`), each marked
 * inherited with the folder it comes from: for each folder, nearest first, the grants of each
 * family but the resource's own set (the direct ones).
 */
export async function listGrants(
  db: Knex,
  orgId: string,
  family: GrantFamily,
  uid: string,
  inherited?: InheritedGrants,
): Promise<Array<ReturnType<typeof presentGrant>>> {
  const ownScope = family.scopeOf(uid);
  const direct = (await readGrants(db, orgId, family, [ownScope])).get(ownScope) ?? [];
  const result = direct.sort(byPrincipal).map((grant) => presentGrant(grant));
  if (!inherited) return result;
  const sources = inherited.folderUids.flatMap((folderUid) =>
    inherited.families.filter((source) => source !== family || source.scopeOf(folderUid) !== ownScope).map((source) => ({ source, folderUid })),
  );
  const byFamily = await Promise.all(
    inherited.families.map(async (source) => {
      const scopes = sources.filter((entry) => entry.source === source).map((entry) => source.scopeOf(entry.folderUid));
      return [source, await readGrants(db, orgId, source, scopes)] as const;
    }),
  );
  const grantsOf = new Map(byFamily);
  for (const { source, folderUid } of sources) {
    const grants = grantsOf.get(source)!.get(source.scopeOf(folderUid)) ?? [];
    result.push(...grants.sort(byPrincipal).map((grant) => presentGrant(grant, folderUid)));
  }
  return result;
}

/**
 * Makes `grants` the resource's direct grants in the family, and audits every principal whose
 * level changed: `permission.revoked` for a level it lost, `permission.granted` for the new one.
 */
export async function replaceGrants(
  tx: Tx,
  actor: Actor,
  orgId: string,
  family: GrantFamily,
  target: { type: string; id: string; name: string },
  grants: ResolvedGrant[],
  now: number,
): Promise<void> {
  const scope = family.scopeOf(target.id);
  const before = new Map(((await readGrants(tx.db, orgId, family, [scope])).get(scope) ?? []).map((grant) => [holderKey(grant.holder), grant]));
  await replaceManagedGrants(
    tx,
    orgId,
    scope,
    familyActions(family),
    grants.map((grant) => ({ holder: grant.holder, actions: family.levels[grant.permission] })),
    now,
  );
  const after = new Map(grants.map((grant) => [holderKey(grant.holder), grant]));
  const principal = (grant: ResolvedGrant) => presentGrant(grant);
  const events: AuditEvent[] = [];
  for (const [key, previous] of before) {
    if (after.get(key)?.permission === previous.permission) continue;
    const { userId, teamId, role } = principal(previous);
    events.push({ action: 'permission.revoked', orgId, target, metadata: { resource: family.noun, userId, teamId, role, permission: previous.permission } });
  }
  for (const [key, grant] of after) {
    const previous = before.get(key);
    if (previous?.permission === grant.permission) continue;
    const { userId, teamId, role } = principal(grant);
    events.push({
      action: 'permission.granted',
      orgId,
      target,
      metadata: { resource: family.noun, userId, teamId, role, permission: grant.permission, previousPermission: previous?.permission ?? null },
    });
  }
  await recordAudits(tx.db, actor, events, now);
}

/** A new connector's grants: the role entries DEFAULT_CONNECTOR_GRANTS, listed by its permissions like any other grant. */
export async function grantDefaultConnectorAccess(tx: Tx, orgId: string, uid: string, now: number): Promise<void> {
  const scope = CONNECTOR_GRANTS.scopeOf(uid);
  await grantManagedToEach(
    tx,
    orgId,
    DEFAULT_CONNECTOR_GRANTS.map((grant) => ({
      holder: { kind: 'builtin', role: grant.role },
      permissions: CONNECTOR_GRANTS.levels[grant.permission].map((action) => ({ action, scope })),
    })),
    now,
  );
}

/** As in Grafana, whoever creates a folder or dashboard administers it (a service account too). */
export async function grantCreatorAdmin(tx: Tx, orgId: string, family: GrantFamily, uid: string, creatorId: string, now: number): Promise<void> {
  await grantManaged(
    tx,
    orgId,
    { kind: 'user', userId: creatorId },
    family.levels[4].map((action) => ({ action, scope: family.scopeOf(uid) })),
    now,
  );
}
