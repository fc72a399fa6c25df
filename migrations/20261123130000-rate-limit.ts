import type { Knex } from 'knex';

/**
 * The general rate limit's counters (src/ratelimit/store.ts): one row per caller, shared by every
 * instance. On MySQL/MariaDB the table is in memory (ENGINE=MEMORY): a count lives a minute and
 * every request writes one, which InnoDB would make durable on disk each time (about 3 ms against
 * 1 ms here); a restart of the database only starts the minute's counts over.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rate_limit_counters', (t) => {
    if (knex.client.config.client === 'mysql2') t.engine('MEMORY');
    // SHA-256 of "token:<token>", "user:<user id>" or "ip:<address>": neither tokens nor addresses in clear
    t.string('key', 64).primary();
    t.bigInteger('window_start').notNullable().index();
    t.integer('hits').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('rate_limit_counters');
}
