/** SQL of external login links (OAuth, SAML, LDAP identities tied to a user). */
import type { Knex } from 'knex';
import { findPage } from '../db/search.ts';

export interface AuthLinkRow {
  id: string;
  user_id: string;
  auth_module: string;
  auth_id: string;
  label: string;
  created_at: number | string;
  updated_at: number | string;
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
