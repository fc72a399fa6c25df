/**
 * Builds an org's policy data document from SQL (policies/README.md has its shape), whole or
 * one fragment at a time. Everything is indexed for direct lookups and folder ancestry is
 * precomputed here, because compiled Rego has no rule indexing: the policy must never scan.
 */
import type { Knex } from 'knex';
import { DEFAULT_CHAT_AGENTS } from './chat-agents.ts';
import type { PolicyFragment } from '../db/policy-changes.ts';
import type { Write } from '../db/write-watch.ts';
import { carryFolderGrants } from './grant-levels.ts';
import type { OrgDocument, OrgRole } from './types.ts';

/** What each org role carries; a higher role carries everything of the lower ones. */
const ROLE_LADDER: readonly OrgRole[] = ['Viewer', 'Editor', 'Admin'];
const LEGACY_ROLES = new Set(['Viewer', 'Editor', 'Admin']);

export function builtinRoleUids(): Record<OrgRole, string[]> {
  const result: Record<OrgRole, string[]> = { None: [], Viewer: [], Editor: [], Admin: [] };
  const carried: string[] = [];
  for (const role of ROLE_LADDER) {
    const name = role.toLowerCase();
    carried.push(`basic:${name}`, `managed:builtins:${name}:permissions`);
    result[role] = [...carried];
  }
  return result;
}

export interface DocumentSettings {
  legacyAclEnabled: boolean;
}

type Section<K extends keyof OrgDocument> = OrgDocument[K];

/**
 * Every table a document is read from: a write to no other table can change one, so test mode
 * checks the loaded documents only after a transaction that wrote one of these (src/services.ts;
 * test/policy-document-check.test.ts proves the list against the queries).
 */
export const POLICY_TABLES = [
  'roles',
  'role_permissions',
  'org_members',
  'team_members',
  'teams',
  'user_roles',
  'team_roles',
  'folders',
  'dashboards',
  'alert_rules',
  'legacy_acl',
  'connector_label_rules',
] as const;

/**
 * The columns of each of those tables a document reads: an update that sets none of them (a team
 * renamed, a dashboard's panels saved) changes no document and needs no policy change.
 */
const POLICY_COLUMNS: Readonly<Record<(typeof POLICY_TABLES)[number], readonly string[]>> = {
  roles: ['id', 'uid', 'org_id'],
  role_permissions: ['role_id', 'action', 'scope'],
  org_members: ['org_id', 'user_id', 'role'],
  team_members: ['team_id', 'user_id'],
  teams: ['id', 'org_id'],
  user_roles: ['user_id', 'role_id', 'org_id'],
  team_roles: ['team_id', 'role_id'],
  folders: ['uid', 'org_id', 'parent_uid'],
  dashboards: ['uid', 'org_id', 'folder_uid'],
  alert_rules: ['uid', 'org_id', 'folder_uid'],
  legacy_acl: ['org_id', 'dashboard_uid', 'folder_uid', 'user_id', 'team_id', 'role', 'permission'],
  connector_label_rules: ['org_id', 'connector_uid', 'position', 'principal_kind', 'principal_id', 'selector'],
};

/** Whether a write statement can change a policy document: an insert or delete of a policy table, or an update of a column one reads. */
export function writesPolicyData(write: Write): boolean {
  const columns = (POLICY_COLUMNS as Record<string, readonly string[] | undefined>)[write.table];
  if (!columns) return false;
  return write.setColumns === null || write.setColumns.length === 0 || write.setColumns.some((column) => columns.includes(column));
}

/**
 * Roles visible in the org (its own and the global ones), optionally only some uids. A managed
 * role's folder grants carry the alert-rule actions of their level (grant-levels.ts).
 */
async function loadRoles(db: Knex, orgId: string | null, uids?: string[]): Promise<Section<'roles'>> {
  const query = db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .where((q) => (orgId ? q.where('r.org_id', orgId).orWhereNull('r.org_id') : q.whereNull('r.org_id')))
    .select('r.uid', 'p.action', 'p.scope');
  if (uids) query.whereIn('r.uid', uids);
  const roles: Section<'roles'> = {};
  for (const { uid, action, scope } of (await query) as Array<{ uid: string; action: string; scope: string }>) {
    ((roles[uid] ??= {})[action] ??= {})[scope] = true;
  }
  for (const [uid, permissions] of Object.entries(roles)) if (uid.startsWith('managed:')) carryFolderGrants(permissions);
  return roles;
}

async function loadMembers(db: Knex, orgId: string, userIds?: string[]): Promise<Section<'members'>> {
  const only = <T extends Knex.QueryBuilder>(query: T, column: string): T => (userIds ? (query.whereIn(column, userIds) as T) : query);
  const [members, teamMembers, userRoles] = await Promise.all([
    only(db('org_members').where('org_id', orgId).select('user_id', 'role'), 'user_id'),
    // some members: from their own rows on (a cross join keeps that order, where SQLite would
    // probe every team of the org for each of them: 57 ms for 500 members at org scale S)
    only(
      db('team_members as tm')[userIds ? 'crossJoin' : 'join']('teams as t', 't.id', 'tm.team_id').where('t.org_id', orgId).select('tm.team_id', 'tm.user_id'),
      'tm.user_id',
    ),
    only(
      db('user_roles as ur')
        .join('roles as r', 'r.id', 'ur.role_id')
        .where((q) => q.where('ur.org_id', orgId).orWhereNull('ur.org_id'))
        .select('ur.user_id', 'r.uid'),
      'ur.user_id',
    ),
  ]);
  const result: Section<'members'> = {};
  for (const { user_id, role } of members) result[user_id] = { role, teams: [], roles: [] };
  for (const { team_id, user_id } of teamMembers) result[user_id]?.teams.push(team_id);
  for (const { user_id, uid } of userRoles) result[user_id]?.roles.push(uid);
  return result;
}

async function loadTeams(db: Knex, orgId: string, teamIds?: string[]): Promise<Section<'teams'>> {
  const teams = db('teams').where('org_id', orgId).select('id');
  const teamRoles = db('team_roles as tr')
    .join('teams as t', 't.id', 'tr.team_id')
    .join('roles as r', 'r.id', 'tr.role_id')
    .where('t.org_id', orgId)
    .select('tr.team_id', 'r.uid');
  if (teamIds) {
    teams.whereIn('id', teamIds);
    teamRoles.whereIn('tr.team_id', teamIds);
  }
  const result: Section<'teams'> = {};
  for (const { id } of await teams) result[id] = { roles: [] };
  for (const { team_id, uid } of await teamRoles) result[team_id]?.roles.push(uid);
  return result;
}

/** The folder index of the org, or only the entries of `only` (their chains still need every folder's parent). */
async function loadFolders(db: Knex, orgId: string, only?: string[]): Promise<Section<'folders'>> {
  const rows: Array<{ uid: string; parent_uid: string | null }> = await db('folders').where('org_id', orgId).select('uid', 'parent_uid');
  const parents = new Map(rows.map((f) => [f.uid, f.parent_uid]));
  const memo = new Map<string, string[]>();
  const chainOf = (uid: string, seen: Set<string>): string[] => {
    const known = memo.get(uid);
    if (known) return known;
    const parent = parents.get(uid);
    // A missing parent or a cycle (which moves reject) ends the chain.
    const chain = parent && parents.has(parent) && !seen.has(parent) ? [parent, ...chainOf(parent, seen.add(uid))] : [];
    memo.set(uid, chain);
    return chain;
  };
  const uids = only ? only.filter((uid) => parents.has(uid)) : rows.map((f) => f.uid);
  return Object.fromEntries(uids.map((uid) => [uid, { scopes: [uid, ...chainOf(uid, new Set())].map((scope) => `folders:uid:${scope}`) }]));
}

async function loadFoldered(db: Knex, table: 'dashboards' | 'alert_rules', orgId: string, uids?: string[]): Promise<Record<string, { folder: string }>> {
  const query = db(table).where('org_id', orgId).select('uid', 'folder_uid');
  if (uids) query.whereIn('uid', uids);
  const rows: Array<{ uid: string; folder_uid: string | null }> = await query;
  return Object.fromEntries(rows.map((row) => [row.uid, { folder: row.folder_uid ?? '' }]));
}

async function loadLegacyAcl(db: Knex, orgId: string): Promise<Section<'legacy_acl'>> {
  const rows = await db('legacy_acl').where('org_id', orgId).select('dashboard_uid', 'folder_uid', 'user_id', 'team_id', 'role', 'permission');
  const acl: Section<'legacy_acl'> = {};
  for (const row of rows) {
    const scope = row.dashboard_uid ? `dashboards:uid:${row.dashboard_uid}` : row.folder_uid ? `folders:uid:${row.folder_uid}` : null;
    const principal = row.user_id ? `user:${row.user_id}` : row.team_id ? `team:${row.team_id}` : LEGACY_ROLES.has(row.role) ? `role:${row.role}` : null;
    if (!scope || !principal) continue;
    const entries = (acl[scope] ??= {});
    entries[principal] = Math.max(entries[principal] ?? 0, row.permission);
  }
  return acl;
}

/**
 * The org's label rules, or only those of some connectors: connector -> principal key -> its
 * selectors, in the order they were saved (a connector with no rule is absent).
 */
async function loadLabelRules(db: Knex, orgId: string, connectorUids?: string[]): Promise<Section<'label_rules'>> {
  const query = db('connector_label_rules')
    .where('org_id', orgId)
    .orderBy(['connector_uid', 'position'])
    .select('connector_uid', 'principal_kind', 'principal_id', 'selector');
  if (connectorUids) query.whereIn('connector_uid', connectorUids);
  const rules: Section<'label_rules'> = {};
  for (const row of (await query) as Array<{ connector_uid: string; principal_kind: string; principal_id: string; selector: string }>) {
    // a service account is a member like a user: the policy names both `user:<id>`
    const kind = row.principal_kind === 'service_account' ? 'user' : row.principal_kind;
    ((rules[row.connector_uid] ??= {})[`${kind}:${row.principal_id}`] ??= []).push(row.selector);
  }
  return rules;
}

export async function buildOrgDocument(db: Knex, orgId: string | null, settings: DocumentSettings): Promise<OrgDocument> {
  const empty = { members: {}, teams: {}, folders: {}, dashboards: {}, alert_rules: {}, legacy_acl: {}, label_rules: {} };
  const [roles, sections] = await Promise.all([
    loadRoles(db, orgId),
    orgId
      ? Promise.all([
          loadMembers(db, orgId),
          loadTeams(db, orgId),
          loadFolders(db, orgId),
          loadFoldered(db, 'dashboards', orgId),
          loadFoldered(db, 'alert_rules', orgId),
          loadLegacyAcl(db, orgId),
          loadLabelRules(db, orgId),
        ]).then(([members, teams, folders, dashboards, alert_rules, legacy_acl, label_rules]) => ({
          members,
          teams,
          folders,
          dashboards,
          alert_rules,
          legacy_acl,
          label_rules,
        }))
      : empty,
  ]);
  return {
    org_id: orgId,
    settings: { legacy_acl_enabled: settings.legacyAclEnabled },
    builtin_roles: builtinRoleUids(),
    roles,
    chat_agents: DEFAULT_CHAT_AGENTS,
    ...sections,
  };
}

/** A change to one place of the document: the path and its new value (undefined = remove). */
export interface DocumentPatch {
  path: string[];
  value: unknown;
}

/**
 * Re-reads what a batch of fragments covers and returns the patches that bring a document up to
 * date: one read per kind of fragment whatever the batch's size (a bulk grant replacement names a
 * role and a member per principal), each place patched once. An entry the database no longer has
 * is a patch without a value, which removes it.
 */
export async function loadFragments(db: Knex, orgId: string | null, fragments: readonly PolicyFragment[]): Promise<DocumentPatch[]> {
  const uidsOf = <K extends PolicyFragment['kind']>(kind: K, field: (fragment: Extract<PolicyFragment, { kind: K }>) => string) => [
    ...new Set(fragments.filter((fragment): fragment is Extract<PolicyFragment, { kind: K }> => fragment.kind === kind).map(field)),
  ];
  const entries = (section: string, uids: string[], values: Record<string, unknown>) => uids.map((uid) => ({ path: [section, uid], value: values[uid] }));
  const roleUids = uidsOf('role', (fragment) => fragment.uid);
  const reads: Array<Promise<DocumentPatch[]>> = [];
  if (roleUids.length > 0) reads.push(loadRoles(db, orgId, roleUids).then((roles) => entries('roles', roleUids, roles)));
  if (orgId) {
    const userIds = uidsOf('member', (fragment) => fragment.userId);
    const teamIds = uidsOf('team', (fragment) => fragment.teamId);
    const dashboardUids = uidsOf('dashboard', (fragment) => fragment.uid);
    const alertRuleUids = uidsOf('alert_rule', (fragment) => fragment.uid);
    const folderFragments = fragments.filter((fragment) => fragment.kind === 'folders');
    if (userIds.length > 0) reads.push(loadMembers(db, orgId, userIds).then((members) => entries('members', userIds, members)));
    if (teamIds.length > 0) reads.push(loadTeams(db, orgId, teamIds).then((teams) => entries('teams', teamIds, teams)));
    if (folderFragments.some((fragment) => !fragment.uids)) {
      reads.push(loadFolders(db, orgId).then((folders) => [{ path: ['folders'], value: folders }]));
    } else if (folderFragments.length > 0) {
      // A move re-chains its subtree only: patching those entries keeps the cost off the org's size.
      const folderUids = [...new Set(folderFragments.flatMap((fragment) => fragment.uids ?? []))];
      reads.push(loadFolders(db, orgId, folderUids).then((folders) => entries('folders', folderUids, folders)));
    }
    if (dashboardUids.length > 0) reads.push(loadFoldered(db, 'dashboards', orgId, dashboardUids).then((found) => entries('dashboards', dashboardUids, found)));
    if (alertRuleUids.length > 0)
      reads.push(loadFoldered(db, 'alert_rules', orgId, alertRuleUids).then((found) => entries('alert_rules', alertRuleUids, found)));
    const ruledUids = uidsOf('label_rules', (fragment) => fragment.connectorUid);
    if (ruledUids.length > 0) reads.push(loadLabelRules(db, orgId, ruledUids).then((rules) => entries('label_rules', ruledUids, rules)));
    if (fragments.some((fragment) => fragment.kind === 'legacy_acl'))
      reads.push(loadLegacyAcl(db, orgId).then((acl) => [{ path: ['legacy_acl'], value: acl }]));
  }
  return (await Promise.all(reads)).flat();
}
