import type { Knex } from 'knex';

/**
 * The rate limit's keys are 64 hex digits: on MySQL/MariaDB stored as ASCII rather than utf8mb4,
 * a MEMORY table's fixed-length row is 4 times smaller in its key, so the table holds about 3
 * times as many callers within `max_heap_table_size` (16 MiB by default). SQLite stores text as
 * it comes: nothing to change there.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'mysql2') return;
  await knex.raw('ALTER TABLE rate_limit_counters MODIFY `key` CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'mysql2') return;
  await knex.raw('ALTER TABLE rate_limit_counters MODIFY `key` VARCHAR(64) NOT NULL');
}
