/** SQL of API tokens: personal access tokens (kind `pat`) and service-account tokens (kind `sa`). */
import type { Knex } from 'knex';
import { newId } from '../db/ids.ts';
import { findPage } from '../db/search.ts';

export type TokenKind = 'pat' | 'sa';

export interface ApiTokenRow {
  id: string;
  kind: TokenKind;
  user_id: string;
  org_id: string | null;
  name: string;
  token_hash: string;
  created_at: number | string;
  expires_at: number | string | null;
  last_used_at: number | string | null;
  revoked_at: number | string | null;
}

export async function insertApiToken(
  db: Knex,
  token: { kind: TokenKind; userId: string; orgId: string | null; name: string; tokenHash: string; expiresAt: number | null },
  now: number,
): Promise<string> {
  const id = newId('tok');
  await db('api_tokens').insert({
    id,
    kind: token.kind,
    user_id: token.userId,
    org_id: token.orgId,
    name: token.name,
    token_hash: token.tokenHash,
    created_at: now,
    expires_at: token.expiresAt,
    last_used_at: null,
    revoked_at: null,
  });
  return id;
}

export async function findApiTokenByHash(db: Knex, kind: TokenKind, tokenHash: string): Promise<ApiTokenRow | undefined> {
  return db('api_tokens').where({ kind, token_hash: tokenHash }).first();
}

export async function findApiTokensOfUser(db: Knex, kind: TokenKind, userId: string): Promise<ApiTokenRow[]> {
  return db('api_tokens').where({ kind, user_id: userId }).orderBy('created_at', 'desc');
}

/** One page of the user's tokens of `kind`, newest first. */
export async function findApiTokensOfUserPage(
  db: Knex,
  kind: TokenKind,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: ApiTokenRow[] }> {
  return findPage<ApiTokenRow>(
    () => db('api_tokens').where({ kind, user_id: userId }).select('*'),
    [
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ],
    page,
  );
}

export async function findApiTokenOfUser(db: Knex, kind: TokenKind, userId: string, tokenId: string): Promise<ApiTokenRow | undefined> {
  return db('api_tokens').where({ kind, user_id: userId, id: tokenId }).first();
}

export async function revokeApiToken(db: Knex, tokenId: string, now: number): Promise<boolean> {
  return (await db('api_tokens').where('id', tokenId).whereNull('revoked_at').update({ revoked_at: now })) === 1;
}

export async function markApiTokenUsed(db: Knex, tokenId: string, now: number): Promise<void> {
  await db('api_tokens').where('id', tokenId).update({ last_used_at: now });
}

/** The live (neither revoked nor expired) tokens of `kind` of each owner, by owner id. */
export async function countLiveTokens(db: Knex, kind: TokenKind, userIds: string[], now: number): Promise<Map<string, number>> {
  if (userIds.length === 0) return new Map();
  const rows: Array<{ user_id: string; total: number | string }> = await db('api_tokens')
    .where('kind', kind)
    .whereIn('user_id', userIds)
    .whereNull('revoked_at')
    .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .groupBy('user_id')
    .select('user_id')
    .count({ total: '*' });
  return new Map(rows.map((row) => [row.user_id, Number(row.total)]));
}

export async function countLiveTokensOfOne(db: Knex, kind: TokenKind, userId: string, now: number): Promise<number> {
  return (await countLiveTokens(db, kind, [userId], now)).get(userId) ?? 0;
}
