/** SQL of orgs. */
import type { Knex } from 'knex';

export const DEFAULT_ORG_ID = 'org_main';
export const DEFAULT_ORG_NAME = 'Main Org.';

export interface OrgRow {
  id: string;
  name: string;
}

export async function findOrgById(db: Knex, id: string): Promise<OrgRow | undefined> {
  return db('orgs').where('id', id).first('id', 'name');
}

export async function insertOrg(db: Knex, org: { id: string; name: string }, now: number): Promise<void> {
  await db('orgs').insert({ id: org.id, name: org.name, policy_revision: 0, created_at: now, updated_at: now });
}
