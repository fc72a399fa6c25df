/**
 * Seeding of the basic and fixed roles: per org (at org creation and on demand) and the global
 * basic:server_admin. Idempotent: a missing role is created, a drifted one is put back to its
 * definition, and nothing changes when all is in place.
 */
import type { Tx } from '../db/transaction.ts';
import { BASIC_ROLES, FIXED_ROLES, type RoleDefinition } from './builtin-roles.ts';
import { createRole, permissionKey, redefineRole } from './policy-writer.ts';
import { findPermissionsByRoleIds, rolesInScope, type RoleRow } from './store.ts';

export interface SeedResult {
  created: number;
  updated: number;
  unchanged: number;
}

async function seedRoles(tx: Tx, orgId: string | null, definitions: RoleDefinition[], now: number): Promise<SeedResult> {
  const result: SeedResult = { created: 0, updated: 0, unchanged: 0 };
  const existing: RoleRow[] = await rolesInScope(tx.db, orgId)
    .whereIn(
      'uid',
      definitions.map((d) => d.uid),
    )
    .select('*');
  const byUid = new Map(existing.map((row) => [row.uid, row]));
  const permissions = await findPermissionsByRoleIds(
    tx.db,
    existing.map((row) => row.id),
  );

  for (const definition of definitions) {
    const row = byUid.get(definition.uid);
    if (!row) {
      await createRole(tx, orgId, definition, now);
      result.created++;
      continue;
    }
    const drifted =
      row.display_name !== definition.displayName ||
      row.description !== definition.description ||
      row.group_name !== definition.groupName ||
      permissionKey(permissions.get(row.id) ?? []) !== permissionKey(definition.permissions);
    if (!drifted) {
      result.unchanged++;
      continue;
    }
    await redefineRole(tx, row, definition, now);
    result.updated++;
  }
  return result;
}

export function seedOrgRoles(tx: Tx, orgId: string, now: number): Promise<SeedResult> {
  return seedRoles(tx, orgId, [...BASIC_ROLES, ...FIXED_ROLES], now);
}

/** basic:server_admin also exists globally: server-level decisions (org_id null) read it. */
export function seedGlobalRoles(tx: Tx, now: number): Promise<SeedResult> {
  return seedRoles(
    tx,
    null,
    BASIC_ROLES.filter((role) => role.uid === 'basic:server_admin'),
    now,
  );
}
