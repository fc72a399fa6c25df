import type { Knex } from 'knex';

/**
 * The entries of `changes` connectors: deploys, config and infrastructure changes recorded
 * through the API (by hand or by CI) and read back by time range. An entry belongs to its
 * connector: deleting the connector (or its org) deletes its entries. `labels` is a JSON object
 * of strings; `time` is when the change happened, `created_at` when it was recorded (ms).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('connector_changes', (t) => {
    t.string('org_id', 40).notNullable();
    t.string('connector_uid', 40).notNullable();
    t.string('id', 40).notNullable();
    t.bigInteger('time').notNullable();
    t.string('kind', 20).notNullable();
    t.string('title', 500).notNullable();
    t.string('service', 190).nullable();
    t.string('environment', 190).nullable();
    t.text('labels').notNullable();
    t.string('url', 2048).nullable();
    t.string('created_by', 40).nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['org_id', 'connector_uid', 'id']);
    t.index(['org_id', 'connector_uid', 'time']);
    t.foreign(['org_id', 'connector_uid']).references(['org_id', 'uid']).inTable('connectors').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('connector_changes');
}
