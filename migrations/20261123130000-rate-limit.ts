import type { Knex } from 'knex';

/** The general rate limit's counters (src/ratelimit/store.ts): one row per caller, shared by every instance. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rate_limit_counters', (t) => {
    // SHA-256 of "token:<token>", "user:<user id>" or "ip:<address>": neither tokens nor addresses in clear
    t.string('key', 64).primary();
    t.bigInteger('window_start').notNullable().index();
    t.integer('hits').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('rate_limit_counters');
}
