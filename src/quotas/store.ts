/**
 * Quotas: a limit per target for an org or a user (-1 = unlimited). A row overrides the
 * default; the defaults of org targets come from the QUOTA_* variables.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';
import { ForbiddenError } from '../errors.ts';

export const UNLIMITED = -1;
/** The largest limit the quotas.limit column holds (INT on MariaDB). */
export const MAX_QUOTA_LIMIT = 2_147_483_647;
export type QuotaScope = 'org' | 'user';

export async function findQuotaOverrides(db: Knex, scope: QuotaScope, scopeId: string): Promise<Map<string, number>> {
  const rows: Array<{ target: string; limit: number }> = await db('quotas').where({ scope_kind: scope, scope_id: scopeId }).select('target', 'limit');
  return new Map(rows.map((row) => [row.target, Number(row.limit)]));
}

export async function writeQuota(db: Knex, scope: QuotaScope, scopeId: string, target: string, limit: number, now: number): Promise<void> {
  await db('quotas')
    .insert({ scope_kind: scope, scope_id: scopeId, target, limit, updated_at: now })
    .onConflict(['scope_kind', 'scope_id', 'target'])
    .merge(['limit', 'updated_at']);
}

/**
 * Serialises creates counted against one quota: the owner's row is locked until the transaction
 * ends, so "count, then insert" is exact under concurrent creates. SQLite's single connection
 * already runs transactions one at a time.
 */
export async function lockQuotaOwner(trx: Knex.Transaction, table: 'users' | 'orgs', id: string): Promise<void> {
  if (dialectOf(trx) === 'mysql') await trx(table).where('id', id).forUpdate().first('id');
}

export function assertWithinQuota(target: string, limit: number, used: number): void {
  if (limit !== UNLIMITED && used >= limit) throw new ForbiddenError(`quota exceeded for ${target}: the limit is ${limit}`);
}
