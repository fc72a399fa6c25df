/** SQL of external login links (OAuth, SAML, LDAP identities tied to a user). */
import type { Knex } from 'knex';

export interface AuthLinkRow {
  id: string;
  user_id: string;
  auth_module: string;
  auth_id: string;
  label: string;
  created_at: number | string;
  updated_at: number | string;
}

export async function findAuthLinksOfUser(db: Knex, userId: string): Promise<AuthLinkRow[]> {
  return db('user_auth_links').where('user_id', userId).orderBy('created_at').select('id', 'user_id', 'auth_module', 'auth_id', 'label', 'created_at', 'updated_at');
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
