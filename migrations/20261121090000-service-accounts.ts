import type { Knex } from 'knex';

/**
 * Service accounts are users rows (is_service_account) with one org membership. A hidden one
 * stands behind a legacy API key (`legacy-<name>`, from API_KEYS or `/api/auth/keys`): it works
 * like any service account but the service-account listing leaves it out.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('is_hidden').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('is_hidden');
  });
}
