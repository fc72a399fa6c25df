import type { Knex } from 'knex';

/** Per-org and per-user quota overrides; a target without a row takes its default. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('quotas', (t) => {
    t.string('scope_kind', 10).notNullable(); // org | user
    t.string('scope_id', 40).notNullable();
    t.string('target', 40).notNullable();
    t.integer('limit').notNullable(); // -1 = unlimited
    t.bigInteger('updated_at').notNullable();
    t.primary(['scope_kind', 'scope_id', 'target']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('quotas');
}
