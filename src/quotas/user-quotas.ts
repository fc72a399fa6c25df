/**
 * User-level quotas. The target that applies to a user is `api_keys`: the live personal access
 * tokens the user holds. Unlimited unless a server admin sets a limit.
 */
import type { Knex } from 'knex';
import { countLiveTokensOfOne } from '../identity/api-tokens.store.ts';
import { findQuotaOverrides, UNLIMITED } from './store.ts';

export const USER_QUOTA_TARGETS = ['api_keys'] as const;
export type UserQuotaTarget = (typeof USER_QUOTA_TARGETS)[number];

export async function userQuotaLimit(db: Knex, userId: string, target: UserQuotaTarget): Promise<number> {
  return (await findQuotaOverrides(db, 'user', userId)).get(target) ?? UNLIMITED;
}

/** A user's quotas as the API shows them (-1: unlimited). */
export const USER_QUOTAS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      userId: { type: 'string' },
      target: { enum: USER_QUOTA_TARGETS },
      limit: { type: 'integer', minimum: UNLIMITED },
      used: { type: 'integer', minimum: 0 },
    },
    required: ['userId', 'target', 'limit', 'used'],
  },
} as const;

export async function userQuotas(db: Knex, userId: string, now: number) {
  const overrides = await findQuotaOverrides(db, 'user', userId);
  return [{ userId, target: 'api_keys', limit: overrides.get('api_keys') ?? UNLIMITED, used: await countLiveTokensOfOne(db, 'pat', userId, now) }];
}
