/**
 * Builds an org's policy data document from SQL (policies/README.md has its shape).
 * Everything is indexed for direct lookups, and folder ancestry is precomputed here, because
 * compiled Rego has no rule indexing: the policy must never scan.
 */
import type { Knex } from 'knex';
import type { OrgDocument, OrgRole } from './types.ts';
import { DEFAULT_CHAT_AGENTS } from './chat-agents.ts';

/** What each org role carries; a higher role carries everything of the lower ones. */
const ROLE_LADDER: readonly OrgRole[] = ['Viewer', 'Editor', 'Admin'];

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

function groupInto<K extends string>(target: Record<string, { [P in K]: string[] }>, key: string, field: K, value: string) {
  target[key]?.[field].push(value);
}

function ancestorsOf(folders: Map<string, string | null>): Record<string, { ancestors: string[] }> {
  const memo = new Map<string, string[]>();
  const resolve = (uid: string, seen: Set<string>): string[] => {
    const known = memo.get(uid);
    if (known) return known;
    const parent = folders.get(uid);
    // A parent that does not exist or a cycle (which moves reject) ends the chain.
    const chain = parent && folders.has(parent) && !seen.has(parent) ? [parent, ...resolve(parent, seen.add(uid))] : [];
    memo.set(uid, chain);
    return chain;
  };
  const result: Record<string, { ancestors: string[] }> = {};
  for (const uid of folders.keys()) result[uid] = { ancestors: resolve(uid, new Set()) };
  return result;
}

const LEGACY_ROLES = new Set(['Viewer', 'Editor', 'Admin']);

export async function buildOrgDocument(db: Knex, orgId: string | null, settings: DocumentSettings): Promise<OrgDocument> {
  const document: OrgDocument = {
    org_id: orgId,
    settings: { legacy_acl_enabled: settings.legacyAclEnabled },
    members: {},
    teams: {},
    builtin_roles: builtinRoleUids(),
    roles: {},
    folders: {},
    dashboards: {},
    alert_rules: {},
    restricted_connectors: {},
    legacy_acl: {},
    chat_agents: DEFAULT_CHAT_AGENTS,
  };

  const permissionRows: Array<{ uid: string; action: string; scope: string }> = await db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .where((q) => (orgId ? q.where('r.org_id', orgId).orWhereNull('r.org_id') : q.whereNull('r.org_id')))
    .select('r.uid', 'p.action', 'p.scope');
  for (const { uid, action, scope } of permissionRows) {
    const actions = (document.roles[uid] ??= {});
    (actions[action] ??= {})[scope] = true;
    if (uid.startsWith('managed:') && scope.startsWith('connectors:uid:')) {
      document.restricted_connectors[scope.slice('connectors:uid:'.length)] = true;
    }
  }
  if (!orgId) return document;

  const [members, teams, teamMembers, userRoles, teamRoles, folders, dashboards, alertRules, acl] = await Promise.all([
    db('org_members').where('org_id', orgId).select('user_id', 'role'),
    db('teams').where('org_id', orgId).select('id'),
    db('team_members as tm').join('teams as t', 't.id', 'tm.team_id').where('t.org_id', orgId).select('tm.team_id', 'tm.user_id'),
    db('user_roles as ur')
      .join('roles as r', 'r.id', 'ur.role_id')
      .where((q) => q.where('ur.org_id', orgId).orWhereNull('ur.org_id'))
      .select('ur.user_id', 'r.uid'),
    db('team_roles as tr').join('teams as t', 't.id', 'tr.team_id').join('roles as r', 'r.id', 'tr.role_id').where('t.org_id', orgId).select('tr.team_id', 'r.uid'),
    db('folders').where('org_id', orgId).select('uid', 'parent_uid'),
    db('dashboards').where('org_id', orgId).select('uid', 'folder_uid'),
    db('alert_rules').where('org_id', orgId).select('uid', 'folder_uid'),
    db('legacy_acl').where('org_id', orgId).select('dashboard_uid', 'folder_uid', 'user_id', 'team_id', 'role', 'permission'),
  ]);

  for (const { user_id, role } of members) document.members[user_id] = { role, teams: [], roles: [] };
  for (const { id } of teams) document.teams[id] = { roles: [] };
  for (const { team_id, user_id } of teamMembers) groupInto(document.members, user_id, 'teams', team_id);
  for (const { user_id, uid } of userRoles) groupInto(document.members, user_id, 'roles', uid);
  for (const { team_id, uid } of teamRoles) groupInto(document.teams, team_id, 'roles', uid);

  document.folders = ancestorsOf(new Map(folders.map((f: { uid: string; parent_uid: string | null }) => [f.uid, f.parent_uid])));
  for (const { uid, folder_uid } of dashboards) document.dashboards[uid] = { folder: folder_uid ?? '' };
  for (const { uid, folder_uid } of alertRules) document.alert_rules[uid] = { folder: folder_uid };

  for (const row of acl) {
    const scope = row.dashboard_uid ? `dashboards:uid:${row.dashboard_uid}` : row.folder_uid ? `folders:uid:${row.folder_uid}` : null;
    const principal = row.user_id ? `user:${row.user_id}` : row.team_id ? `team:${row.team_id}` : LEGACY_ROLES.has(row.role) ? `role:${row.role}` : null;
    if (!scope || !principal) continue;
    const entries = (document.legacy_acl[scope] ??= {});
    entries[principal] = Math.max(entries[principal] ?? 0, row.permission);
  }
  return document;
}
