import type { Knex } from 'knex';

/**
 * What the connector API keeps beyond the policy's index: the signal type, the backend URL, its
 * settings (`json_data`) and its credentials sealed as one AES-256-GCM value (`secure_json_data`,
 * never readable without SECRET_KEY), the version for optimistic locking, and who made and last
 * changed it. `default_for` holds the signal type while the connector is its org's default for
 * it, else null: the unique index leaves at most one default per org and signal type.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connectors', (t) => {
    t.string('signal_type', 20).notNullable().defaultTo('metrics');
    t.string('url', 2048).notNullable().defaultTo('');
    t.string('access', 20).notNullable().defaultTo('proxy');
    t.string('default_for', 20).nullable();
    t.text('json_data', 'mediumtext').nullable();
    t.text('secure_json_data', 'mediumtext').nullable();
    t.integer('version').notNullable().defaultTo(1);
    t.string('created_by', 40).nullable();
    t.string('updated_by', 40).nullable();
    t.unique(['org_id', 'default_for']);
    t.index(['org_id', 'signal_type']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connectors', (t) => {
    t.dropUnique(['org_id', 'default_for']);
    t.dropIndex(['org_id', 'signal_type']);
    t.dropColumns('signal_type', 'url', 'access', 'default_for', 'json_data', 'secure_json_data', 'version', 'created_by', 'updated_by');
  });
}
