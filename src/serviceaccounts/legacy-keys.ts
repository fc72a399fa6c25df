/**
 * Legacy API keys, kept working on top of service accounts (Grafana's API-key migration): each
 * key is the token of a hidden account `legacy-<name>`. The keys of the deprecated API_KEYS
 * variable become such accounts in org_main through `POST /api/serviceaccounts/migrate`, storing
 * the hash of the very key string, so clients keep sending it; the `/api/auth/keys` shim creates
 * them in the active org with a `svc_sa_` key, and removes the account with its last live key.
 */
import { recordAudit, type Actor } from '../audit/writer.ts';
import type { Config, LegacyApiKey } from '../config.ts';
import { sha256Hex } from '../crypto/tokens.ts';
import type { Tx } from '../db/transaction.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { countLiveTokensOfOne, findApiTokenByHash, findApiTokensOfUser, insertApiToken, revokeApiToken } from '../identity/api-tokens.store.ts';
import { DEFAULT_ORG_ID } from '../orgs/store.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import { lockQuotaOwner } from '../quotas/store.ts';
import {
  deleteServiceAccount,
  findLegacyKey,
  findServiceAccount,
  findServiceAccountByName,
  insertServiceAccount,
  type ServiceAccountRole,
  type ServiceAccountRow,
} from './store.ts';
import { issueServiceAccountToken } from './tokens.ts';

export const legacyAccountName = (keyName: string) => `legacy-${keyName}`;

const apiKeyAuditTarget = (token: { id: string; name: string }) => ({ type: 'api_key', id: token.id, name: token.name });

/** The hidden account behind key `keyName` in the org, if any; a visible account of that name is a conflict. */
async function findLegacyAccount(tx: Tx, orgId: string, keyName: string): Promise<ServiceAccountRow | undefined> {
  const account = await findServiceAccountByName(tx.db, orgId, legacyAccountName(keyName));
  if (account && !account.is_hidden) throw new ConflictError(`service account ${account.name} exists and is not the account of a legacy API key`);
  return account;
}

async function insertLegacyAccount(tx: Tx, orgId: string, keyName: string, role: ServiceAccountRole, now: number): Promise<ServiceAccountRow> {
  return insertServiceAccount(tx, { orgId, name: legacyAccountName(keyName), role, isDisabled: false, isHidden: true }, now);
}

async function removeLegacyAccount(tx: Tx, account: ServiceAccountRow): Promise<void> {
  await deleteServiceAccount(tx, account);
}

export interface MigratedKey {
  name: string;
  serviceAccountId: string;
  tokenId: string;
  created: boolean;
}

/**
 * Turns each API_KEYS entry into a hidden account of org_main holding the key; an entry already
 * migrated is reported with `created: false` and left as it is (revoked or disabled included).
 */
export async function migrateLegacyKeys(tx: Tx, actor: Actor, keys: LegacyApiKey[], now: number): Promise<MigratedKey[]> {
  // Two migrations at once would both find nothing and then collide; the org row serialises them.
  await lockQuotaOwner(tx.db, 'orgs', DEFAULT_ORG_ID);
  const migrated: MigratedKey[] = [];
  for (const entry of keys) migrated.push(await migrateLegacyKey(tx, actor, entry, now));
  return migrated;
}

async function migrateLegacyKey(tx: Tx, actor: Actor, entry: LegacyApiKey, now: number): Promise<MigratedKey> {
  const conflict = (why: string) => new ConflictError(`API_KEYS entry "${entry.name}": ${why}`);
  const tokenHash = sha256Hex(entry.key);
  const existing = await findLegacyAccount(tx, DEFAULT_ORG_ID, entry.name);
  const token = await findApiTokenByHash(tx.db, 'sa', tokenHash);
  if (token) {
    if (token.user_id !== existing?.id) throw conflict('its key is already the token of another service account');
    return { name: entry.name, serviceAccountId: existing.id, tokenId: token.id, created: false };
  }
  if (existing && (await findApiTokensOfUser(tx.db, 'sa', existing.id)).length > 0) {
    throw conflict(`${existing.name} already holds a different key; delete it (DELETE /api/auth/keys/<id>) before migrating the new one`);
  }
  const account = existing ?? (await insertLegacyAccount(tx, DEFAULT_ORG_ID, entry.name, entry.role, now));
  const tokenId = await insertApiToken(tx.db, { kind: 'sa', userId: account.id, orgId: DEFAULT_ORG_ID, name: entry.name, tokenHash, expiresAt: null }, now);
  await recordAudit(
    tx.db,
    actor,
    {
      action: 'api_key.migrated',
      orgId: DEFAULT_ORG_ID,
      target: apiKeyAuditTarget({ id: tokenId, name: entry.name }),
      metadata: { serviceAccountId: account.id, role: account.role, source: 'API_KEYS' },
    },
    now,
  );
  return { name: entry.name, serviceAccountId: account.id, tokenId, created: true };
}

/**
 * A new key named `keyName` in the org: a hidden account with the role plus its token, within
 * the org's quotas. A leftover account of that name whose keys are all dead is replaced.
 */
export async function createLegacyKey(
  tx: Tx,
  config: Config,
  actor: Actor,
  orgId: string,
  request: { name: string; role: ServiceAccountRole; secondsToLive?: number },
  now: number,
): Promise<{ id: string; name: string; key: string }> {
  await lockQuotaOwner(tx.db, 'orgs', orgId);
  const leftover = await findLegacyAccount(tx, orgId, request.name);
  if (leftover) {
    if ((await countLiveTokensOfOne(tx.db, 'sa', leftover.id, now)) > 0) throw new ConflictError(`an API key named "${request.name}" already exists`);
    await removeLegacyAccount(tx, leftover);
  }
  await enforceOrgQuota(tx, config, orgId, 'service_accounts', now);
  const account = await insertLegacyAccount(tx, orgId, request.name, request.role, now);
  const token = await issueServiceAccountToken(tx, config, account, { name: request.name, secondsToLive: request.secondsToLive }, now);
  await recordAudit(
    tx.db,
    actor,
    {
      action: 'api_key.created',
      orgId,
      target: apiKeyAuditTarget({ id: token.id, name: request.name }),
      metadata: { serviceAccountId: account.id, role: request.role, secondsToLive: request.secondsToLive ?? null },
    },
    now,
  );
  return { id: token.id, name: request.name, key: token.key };
}

/** Revokes the key; its hidden account goes too once it holds no live key. */
export async function deleteLegacyKey(tx: Tx, actor: Actor, orgId: string, tokenId: string, now: number): Promise<void> {
  const key = await findLegacyKey(tx.db, orgId, tokenId);
  if (!key) throw new NotFoundError(`API key ${tokenId} not found`);
  await revokeApiToken(tx.db, key.id, now);
  const account = await findServiceAccount(tx.db, orgId, key.service_account_id);
  const accountRemoved = !!account && (await countLiveTokensOfOne(tx.db, 'sa', account.id, now)) === 0;
  if (account && accountRemoved) await removeLegacyAccount(tx, account);
  await recordAudit(
    tx.db,
    actor,
    {
      action: 'api_key.deleted',
      orgId,
      target: apiKeyAuditTarget(key),
      metadata: { serviceAccountId: key.service_account_id, serviceAccountDeleted: accountRemoved },
    },
    now,
  );
}
