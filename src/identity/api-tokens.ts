/**
 * API tokens: `<prefix><base64url of 32 random bytes>`, shown once at creation, stored as a
 * SHA-256. A token acts as its owner with the owner's current permissions, and stops working
 * when it is revoked or expired, or when its owner is disabled or deleted.
 */
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import type { TokenResolver } from '../http/authenticate.ts';
import type { Services } from '../services.ts';
import { findApiTokenByHash, markApiTokenUsed, type ApiTokenRow, type TokenKind } from './api-tokens.store.ts';
import type { Principal } from '../principal.ts';
import { findUserById, toPrincipalUser } from './users.store.ts';

export const TOKEN_PREFIX: Record<TokenKind, string> = { pat: 'svc_pat_', sa: 'svc_sa_' };
/** last_used_at is written at most this often. */
const MARK_USED_EVERY_MS = 60_000;

export function newTokenKey(kind: TokenKind): { key: string; hash: string } {
  const key = `${TOKEN_PREFIX[kind]}${randomToken(32)}`;
  return { key, hash: sha256Hex(key) };
}

export function isTokenLive(row: ApiTokenRow, now: number): boolean {
  return row.revoked_at === null && (row.expires_at === null || Number(row.expires_at) > now);
}

/** Token metadata for listings: never the key or its hash. */
export function presentTokenMetadata(row: ApiTokenRow, now: number) {
  const iso = (value: number | string | null) => (value === null ? null : new Date(Number(value)).toISOString());
  const expiresAt = row.expires_at === null ? null : Number(row.expires_at);
  return {
    id: row.id,
    name: row.name,
    created: iso(row.created_at),
    expiration: iso(row.expires_at),
    lastUsedAt: iso(row.last_used_at),
    isRevoked: row.revoked_at !== null,
    hasExpired: expiresAt !== null && expiresAt <= now,
    secondsUntilExpiration: expiresAt === null ? null : Math.max(0, Math.floor((expiresAt - now) / 1000)),
  };
}

/**
 * The principal of a live token of `kind` whose owner may still act, else null. A PAT belongs to
 * a person and an SA token to a service account; a token whose owner is of the other kind is
 * refused. An SA token is pinned to its account's org.
 */
export async function principalFromToken(services: Services, kind: TokenKind, key: string): Promise<Principal | null> {
  const now = services.clock.now();
  // the token itself is kept nowhere: the caches know it by its SHA-256, as the database does
  const hash = sha256Hex(key);
  const found = await services.caches.tokens.get(hash, now, async () => {
    const token = await findApiTokenByHash(services.db, kind, hash);
    const owner = token && (await findUserById(services.db, token.user_id));
    return owner ? { token, owner } : null;
  });
  // A cached token is checked again: it may have expired since it was read.
  if (!found || found.token.kind !== kind || !isTokenLive(found.token, now)) return null;
  const { token, owner } = found;
  if (owner.is_disabled || !!owner.is_service_account !== (kind === 'sa')) return null;
  if (token.last_used_at === null || now - Number(token.last_used_at) >= MARK_USED_EVERY_MS) {
    await markApiTokenUsed(services.db, token.id, now);
    // the cached row too, or every request would mark it again
    token.last_used_at = now;
  }
  return { user: toPrincipalUser(owner), via: 'token', sessionId: null, pinnedOrgId: kind === 'sa' ? token.org_id : null };
}

/** Resolver for `Authorization: Bearer svc_pat_…` and `X-Api-Key: svc_pat_…`. */
export const resolvePersonalAccessToken: TokenResolver = (services, key) => principalFromToken(services, 'pat', key);
