/**
 * Org quotas: seven targets, defaults from the QUOTA_* variables (unlimited when unset), per-org
 * overrides in the quotas table. `enforceOrgQuota` runs inside the create's transaction after
 * locking the org row, so concurrent creates cannot overshoot the limit.
 */
import type { Knex } from 'knex';
import { QUOTA_TARGETS, type Config, type QuotaTarget } from '../config.ts';
import type { Tx } from '../db/transaction.ts';
import { countLiveTokensOfOne } from '../identity/api-tokens.store.ts';
import { assertWithinQuota, findQuotaOverrides, lockQuotaOwner, UNLIMITED } from './store.ts';

export { QUOTA_TARGETS, type QuotaTarget };

async function count(query: Knex.QueryBuilder): Promise<number> {
  const [row] = await query.count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
}

/**
 * What counts against a target in an org. `api_keys` is per service account (QUOTA_API_KEYS_PER_SA):
 * the live tokens of `serviceAccountId`.
 */
export async function orgQuotaUsage(db: Knex, orgId: string, target: QuotaTarget, now: number, serviceAccountId?: string): Promise<number> {
  switch (target) {
    case 'users':
      return count(db('org_members as m').join('users as u', 'u.id', 'm.user_id').where('m.org_id', orgId).where('u.is_service_account', false));
    case 'service_accounts':
      return count(db('org_members as m').join('users as u', 'u.id', 'm.user_id').where('m.org_id', orgId).where('u.is_service_account', true));
    case 'api_keys':
      return serviceAccountId ? countLiveTokensOfOne(db, 'sa', serviceAccountId, now) : 0;
    case 'dashboards':
      return count(db('dashboards').where('org_id', orgId));
    case 'folders':
      return count(db('folders').where('org_id', orgId));
    case 'alert_rules':
      return count(db('alert_rules').where('org_id', orgId));
    case 'connectors':
      return count(db('connectors').where('org_id', orgId));
  }
}

export async function orgQuotaLimits(db: Knex, config: Config, orgId: string): Promise<Record<QuotaTarget, number>> {
  const overrides = await findQuotaOverrides(db, 'org', orgId);
  return Object.fromEntries(QUOTA_TARGETS.map((target) => [target, overrides.get(target) ?? config.quotaDefaults[target]])) as Record<QuotaTarget, number>;
}

/** One quota of an org as the API shows it (-1: unlimited). */
export const ORG_QUOTA_SCHEMA = {
  type: 'object',
  properties: {
    orgId: { type: 'string' },
    target: { enum: QUOTA_TARGETS },
    limit: { type: 'integer', minimum: UNLIMITED },
    used: { type: 'integer', minimum: 0 },
  },
  required: ['orgId', 'target', 'limit', 'used'],
} as const;

/** The org's quotas as the API shows them: `[{orgId, target, limit, used}]` (api_keys: the limit per service account). */
export async function presentOrgQuotas(db: Knex, config: Config, orgId: string, now: number) {
  const limits = await orgQuotaLimits(db, config, orgId);
  return Promise.all(QUOTA_TARGETS.map(async (target) => ({ orgId, target, limit: limits[target], used: await orgQuotaUsage(db, orgId, target, now) })));
}

/** Throws 403 "quota exceeded for <target>" when one more would pass the org's limit. */
export async function enforceOrgQuota(tx: Tx, config: Config, orgId: string, target: QuotaTarget, now: number, serviceAccountId?: string): Promise<void> {
  await lockQuotaOwner(tx.db, 'orgs', orgId);
  const limit = (await orgQuotaLimits(tx.db, config, orgId))[target];
  assertWithinQuota(target, limit, await orgQuotaUsage(tx.db, orgId, target, now, serviceAccountId));
}
