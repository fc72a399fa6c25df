/** The reads of the policy tooling (who-can): the org's members as the policy's subjects. */
import type { Knex } from 'knex';
import type { UserRow } from '../identity/users.store.ts';

/** Every user and service account of the org, as stored, by login. */
export async function findOrgMemberUsers(db: Knex, orgId: string): Promise<UserRow[]> {
  return db('users as u').join('org_members as m', 'm.user_id', 'u.id').where('m.org_id', orgId).orderBy('u.login').select('u.*');
}
