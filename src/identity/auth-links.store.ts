/** SQL of external login links (OAuth, SAML, LDAP identities tied to a user). */
import type { Knex } from 'knex';
import { newId } from '../db/ids.ts';
import { findPage } from '../db/search.ts';

export interface AuthLinkRow {
  id: string;
  user_id: string;
  auth_module: string;
  auth_id: string;
  issuer: string;
  label: string;
  created_at: number | string;
  updated_at: number | string;
}

/** The link of one external identity: the subject `authId` of `issuer` in `authModule`. */
export async function findAuthLink(db: Knex, authModule: string, issuer: string, authId: string): Promise<AuthLinkRow | undefined> {
  return db('user_auth_links').where({ auth_module: authModule, issuer, auth_id: authId }).first();
}

export interface NewAuthLink {
  userId: string;
  authModule: string;
  issuer: string;
  authId: string;
  label: string;
  /** The provider's tokens, sealed (AES-256-GCM) by the caller. */
  tokensSealed: string | null;
}

export async function insertAuthLink(db: Knex, link: NewAuthLink, now: number): Promise<string> {
  const id = newId('aul');
  await db('user_auth_links').insert({
    id,
    user_id: link.userId,
    auth_module: link.authModule,
    issuer: link.issuer,
    auth_id: link.authId,
    label: link.label,
    tokens_sealed: link.tokensSealed,
    created_at: now,
    updated_at: now,
  });
  return id;
}

/** Each login brings fresh provider tokens; the old ones are replaced. */
export async function updateAuthLinkTokens(db: Knex, linkId: string, tokensSealed: string | null, now: number): Promise<void> {
  await db('user_auth_links').where('id', linkId).update({ tokens_sealed: tokensSealed, updated_at: now });
}

export async function countAuthLinksOfUser(db: Knex, userId: string): Promise<number> {
  const [row] = await db('user_auth_links').where('user_id', userId).count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
}

/** One page of the user's external login links, oldest first. */
export async function findAuthLinksOfUserPage(
  db: Knex,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: AuthLinkRow[] }> {
  return findPage<AuthLinkRow>(
    () => db('user_auth_links').where('user_id', userId).select('id', 'user_id', 'auth_module', 'auth_id', 'label', 'created_at', 'updated_at'),
    ['created_at', 'id'],
    page,
  );
}

export async function findAuthLinkOfUser(db: Knex, userId: string, linkId: string): Promise<AuthLinkRow | undefined> {
  return db('user_auth_links').where({ id: linkId, user_id: userId }).first();
}

export async function deleteAuthLinkOfUser(db: Knex, userId: string, linkId: string): Promise<AuthLinkRow | undefined> {
  const link: AuthLinkRow | undefined = await db('user_auth_links').where({ id: linkId, user_id: userId }).first();
  if (link) await db('user_auth_links').where('id', linkId).delete();
  return link;
}

export function presentAuthLink(link: AuthLinkRow) {
  return {
    id: link.id,
    authModule: link.auth_module,
    label: link.label,
    createdAt: new Date(Number(link.created_at)).toISOString(),
    updatedAt: new Date(Number(link.updated_at)).toISOString(),
  };
}

/** The link of an external identity (`authId` in `authModule`), whoever it belongs to. */
export async function findLinkOfIdentity(db: Knex, authModule: string, authId: string): Promise<AuthLinkRow | undefined> {
  return db('user_auth_links').where({ auth_module: authModule, auth_id: authId }).first();
}

/** The user's link in `authModule`, if any (LDAP: at most one). */
export async function findLinkOfUser(db: Knex, userId: string, authModule: string): Promise<AuthLinkRow | undefined> {
  return db('user_auth_links').where({ user_id: userId, auth_module: authModule }).orderBy('created_at').first();
}

/** Ties an external identity to a user (no provider tokens: a directory login keeps none). */
export async function linkIdentity(db: Knex, link: { userId: string; authModule: string; authId: string; label: string }, now: number): Promise<void> {
  await db('user_auth_links').insert({
    id: newId('aul'),
    user_id: link.userId,
    auth_module: link.authModule,
    auth_id: link.authId,
    label: link.label,
    tokens_sealed: null,
    created_at: now,
    updated_at: now,
  });
}

export async function touchAuthLink(db: Knex, linkId: string, now: number): Promise<void> {
  await db('user_auth_links').where('id', linkId).update({ updated_at: now });
}
