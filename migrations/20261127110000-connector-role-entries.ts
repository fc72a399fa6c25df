import type { Knex } from 'knex';

/**
 * Who may query a connector is said by the grants on it, listed by its permissions: the basic
 * roles stop holding `connectors:query` on `connectors:*`, and every connector that carried no
 * grant (which every member could query) gets the role entries a new connector gets, Viewer and
 * Editor View (`connectors:read` and `connectors:query` on it, in the org's
 * `managed:builtins:<role>:permissions`). A connector that carried grants was narrowed to its
 * grantees on purpose and keeps exactly them. Every org's policy revision moves, so running
 * instances rebuild their documents.
 */
const BASIC_ROLES = ['basic:viewer', 'basic:editor', 'basic:admin'];
const ENTRY_ROLES = ['managed:builtins:viewer:permissions', 'managed:builtins:editor:permissions'];
const VIEW_ACTIONS = ['connectors:read', 'connectors:query'];
const CHUNK = 500;

async function insertPermissions(knex: Knex, rows: Array<{ role_id: number; action: string; scope: string }>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await knex('role_permissions')
      .insert(rows.slice(i, i + CHUNK))
      .onConflict(['role_id', 'action', 'scope'])
      .ignore();
  }
}

/** The ids of the org's entry roles, created where missing (hidden, as the service makes them). */
async function entryRoleIds(knex: Knex, orgId: string, now: number): Promise<number[]> {
  const rows = ENTRY_ROLES.map((uid) => ({
    uid,
    org_id: orgId,
    name: uid,
    display_name: '',
    description: '',
    group_name: '',
    hidden: true,
    version: 1,
    created_at: now,
    updated_at: now,
  }));
  await knex('roles').insert(rows).onConflict(['org_id', 'uid']).ignore();
  return knex('roles').where('org_id', orgId).whereIn('uid', ENTRY_ROLES).pluck('id');
}

async function bumpPolicyRevisions(knex: Knex): Promise<void> {
  await knex('policy_revisions').update({ revision: knex.raw('revision + 1') });
}

export async function up(knex: Knex): Promise<void> {
  const connectors: Array<{ org_id: string; uid: string }> = await knex('connectors').select('org_id', 'uid');
  const granted: Array<{ org_id: string; scope: string }> = await knex('role_permissions as p')
    .join('roles as r', 'r.id', 'p.role_id')
    .where('p.scope', '>=', 'connectors:uid:')
    .where('p.scope', '<', 'connectors:uid;')
    .where('r.uid', 'like', 'managed:%')
    .distinct('r.org_id', 'p.scope');
  const narrowed = new Set(granted.map((row) => `${row.org_id} ${row.scope}`));
  const open = new Map<string, string[]>();
  for (const { org_id, uid } of connectors) {
    const scope = `connectors:uid:${uid}`;
    if (!narrowed.has(`${org_id} ${scope}`)) open.set(org_id, [...(open.get(org_id) ?? []), scope]);
  }
  const now = Date.now();
  for (const [orgId, scopes] of open) {
    const roleIds = await entryRoleIds(knex, orgId, now);
    const rows = roleIds.flatMap((role_id) => scopes.flatMap((scope) => VIEW_ACTIONS.map((action) => ({ role_id, action, scope }))));
    await insertPermissions(knex, rows);
  }
  await knex('role_permissions')
    .whereIn('role_id', knex('roles').whereIn('uid', BASIC_ROLES).select('id'))
    .where({ action: 'connectors:query', scope: 'connectors:*' })
    .delete();
  await bumpPolicyRevisions(knex);
}

/**
 * The basic roles query every connector again. The role entries stay: a connector carrying
 * grants is queried by its grantees only, and they are its Viewers and Editors.
 */
export async function down(knex: Knex): Promise<void> {
  const roleIds: number[] = await knex('roles').whereIn('uid', BASIC_ROLES).pluck('id');
  await insertPermissions(
    knex,
    roleIds.map((role_id) => ({ role_id, action: 'connectors:query', scope: 'connectors:*' })),
  );
  await bumpPolicyRevisions(knex);
}
