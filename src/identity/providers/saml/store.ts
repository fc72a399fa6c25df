/** SQL of SAML logins: open requests, used assertion ids, SAML sessions and `saml` login links. */
import type { Knex } from 'knex';
import { newId } from '../../../db/ids.ts';
import { isUniqueViolation } from '../../../db/errors.ts';

export const SAML_AUTH_MODULE = 'saml';

/**
 * `login` and `logout`: requests sent to the identity provider; `link`: a login request that
 * links the answer to the session that started it; `linked`: such an answer, waiting for that
 * session's browser to confirm it.
 */
export type SamlRequestKind = 'login' | 'logout' | 'link' | 'linked';

export interface SamlRequest {
  id: string;
  kind: SamlRequestKind;
  redirect: string;
  expiresAt: number;
  /** `link` and `linked`: the browser session that asked to link. */
  sessionId?: string | null;
  /** `linked`: the NameID the identity provider asserted. */
  nameId?: string | null;
}

export async function insertSamlRequest(db: Knex, request: SamlRequest): Promise<void> {
  await db('saml_requests').insert({
    id: request.id,
    kind: request.kind,
    redirect: request.redirect,
    expires_at: request.expiresAt,
    session_id: request.sessionId ?? null,
    name_id: request.nameId ?? null,
  });
}

/**
 * Closes an open request of ours of one of `kinds` and returns it; undefined when the id is not
 * ours, was answered already, or expired. Of two answers to one request one wins.
 */
export async function takeSamlRequest(db: Knex, id: string, kinds: readonly SamlRequestKind[], now: number): Promise<SamlRequest | undefined> {
  const row: { kind: SamlRequestKind; redirect: string; expires_at: number | string; session_id: string | null; name_id: string | null } | undefined = await db(
    'saml_requests',
  )
    .where('id', id)
    .whereIn('kind', kinds)
    .first('kind', 'redirect', 'expires_at', 'session_id', 'name_id');
  if (!row) return undefined;
  const deleted = await db('saml_requests').where({ id, kind: row.kind }).delete();
  if (deleted !== 1 || Number(row.expires_at) <= now) return undefined;
  return { id, kind: row.kind, redirect: row.redirect, expiresAt: Number(row.expires_at), sessionId: row.session_id, nameId: row.name_id };
}

/** Drops the requests and assertion ids whose time is over: neither can be answered or replayed any more. */
export async function forgetExpiredSamlState(db: Knex, now: number): Promise<void> {
  await db('saml_assertion_ids').where('expires_at', '<=', now).delete();
  await db('saml_requests').where('expires_at', '<=', now).delete();
}

/** Remembers an accepted message id until it expires; false when it was seen before (a replay). */
export async function rememberAssertionId(db: Knex, id: string, expiresAt: number): Promise<boolean> {
  try {
    await db('saml_assertion_ids').insert({ id, expires_at: expiresAt });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function findSamlLinkedUserId(db: Knex, nameId: string): Promise<string | undefined> {
  const row: { user_id: string } | undefined = await db('user_auth_links').where({ auth_module: SAML_AUTH_MODULE, auth_id: nameId }).first('user_id');
  return row?.user_id;
}

export async function insertSamlLink(db: Knex, userId: string, nameId: string, now: number): Promise<void> {
  await db('user_auth_links').insert({
    id: newId('aul'),
    user_id: userId,
    auth_module: SAML_AUTH_MODULE,
    auth_id: nameId,
    label: 'SAML',
    created_at: now,
    updated_at: now,
  });
}

export async function touchSamlLink(db: Knex, nameId: string, now: number): Promise<void> {
  await db('user_auth_links').where({ auth_module: SAML_AUTH_MODULE, auth_id: nameId }).update({ updated_at: now });
}

export interface SamlSessionRow {
  session_id: string;
  name_id: string;
  session_index: string | null;
}

export async function insertSamlSession(db: Knex, session: { sessionId: string; nameId: string; sessionIndex: string | null }): Promise<void> {
  await db('saml_sessions').insert({ session_id: session.sessionId, name_id: session.nameId, session_index: session.sessionIndex });
}

export async function findSamlSession(db: Knex, sessionId: string): Promise<SamlSessionRow | undefined> {
  return db('saml_sessions').where('session_id', sessionId).first();
}

/** The live sessions of a SAML subject: of one IdP session when `sessionIndex` is given, else all of them. */
export async function findSessionsOfSamlSubject(db: Knex, nameId: string, sessionIndex: string | null): Promise<Array<{ sessionId: string; userId: string }>> {
  const query = db('saml_sessions as ss').join('sessions as s', 's.id', 'ss.session_id').where('ss.name_id', nameId).whereNull('s.revoked_at');
  if (sessionIndex) query.where('ss.session_index', sessionIndex);
  const rows: Array<{ session_id: string; user_id: string }> = await query.select('ss.session_id', 's.user_id');
  return rows.map((row) => ({ sessionId: row.session_id, userId: row.user_id }));
}
