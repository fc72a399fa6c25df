/** The readiness check's questions to the database. */
import type { Knex } from 'knex';

export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}
