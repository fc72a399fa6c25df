/**
 * Service-account tokens: `svc_sa_<base64url of 32 bytes>`, stored as a SHA-256 in api_tokens
 * (kind `sa`) and pinned to the account's org. A token acts with its account's current role and
 * stops working when it is revoked or expired, or while its account is disabled (it is kept,
 * frozen, and works again once the account is enabled). Legacy keys from API_KEYS, once migrated,
 * are tokens of the same kind whose hash is that of the legacy key string.
 */
import { LEGACY_KEY_MIN_LENGTH, type Config } from '../config.ts';
import type { Tx } from '../db/transaction.ts';
import type { TokenResolver } from '../http/authenticate.ts';
import { newTokenKey, principalFromToken } from '../identity/api-tokens.ts';
import { insertApiToken } from '../identity/api-tokens.store.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import type { ServiceAccountRow } from './store.ts';
import { nameSchema } from '../http/schemas.ts';

/** Longest accepted lifetime: ten years. */
export const MAX_SECONDS_TO_LIVE = 10 * 365 * 86_400;

export const newTokenSchema = {
  type: 'object',
  properties: {
    name: nameSchema,
    secondsToLive: { type: 'integer', minimum: 1, maximum: MAX_SECONDS_TO_LIVE },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

/**
 * Issues a token of `account` inside the caller's transaction, within the org's `api_keys` quota
 * (QUOTA_API_KEYS_PER_SA: the live tokens of this account). The key is returned once, here.
 * The transaction must have locked the org (lockQuotaOwner) before its first read: on MySQL a
 * plain read fixes the snapshot, and a count in it would miss tokens issued concurrently.
 */
export async function issueServiceAccountToken(
  tx: Tx,
  config: Config,
  account: ServiceAccountRow,
  token: { name: string; secondsToLive?: number },
  now: number,
): Promise<{ id: string; key: string }> {
  await enforceOrgQuota(tx, config, account.org_id, 'api_keys', now, account.id);
  const { key, hash } = newTokenKey('sa');
  const expiresAt = token.secondsToLive ? now + token.secondsToLive * 1000 : null;
  const id = await insertApiToken(tx.db, { kind: 'sa', userId: account.id, orgId: account.org_id, name: token.name, tokenHash: hash, expiresAt }, now);
  return { id, key };
}

/** Resolver for `Authorization: Bearer svc_sa_…` and `X-Api-Key: svc_sa_…`. */
export const resolveServiceAccountToken: TokenResolver = (services, key) => principalFromToken(services, 'sa', key);

/**
 * Resolver for migrated legacy keys, which carry no prefix: registered under the empty prefix,
 * after every other, so it sees only what no other resolver claimed.
 */
export const resolveLegacyApiKey: TokenResolver = async (services, key) => {
  // API_KEYS refuses shorter keys and the svc_ prefix, so those need no lookup.
  if (key.length < LEGACY_KEY_MIN_LENGTH || key.startsWith('svc_')) return null;
  return principalFromToken(services, 'sa', key);
};
