import type { Knex } from 'knex';

/**
 * Ops plans: changes to a cluster proposed on a `kubernetes` connector and executed once another
 * user approves them. A plan belongs to its connector: deleting the connector (or its org)
 * deletes its plans. `steps` is a JSON array (each step with its dry run and outcome); times are
 * ms since the epoch. The state index serves the lazy expiry of pending plans.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ops_plans', (t) => {
    t.string('org_id', 40).notNullable();
    t.string('id', 40).notNullable();
    t.string('connector_uid', 40).notNullable();
    t.string('title', 200).notNullable();
    t.string('reason', 2000).notNullable();
    t.string('state', 20).notNullable();
    t.text('steps', 'mediumtext').notNullable();
    t.string('created_by', 40).notNullable();
    t.string('created_by_kind', 20).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.string('decided_by', 40).nullable();
    t.bigInteger('decided_at').nullable();
    t.string('rejection_reason', 2000).nullable();
    t.bigInteger('finished_at').nullable();
    t.integer('failed_step').nullable();
    t.primary(['org_id', 'id']);
    t.index(['org_id', 'state', 'expires_at']);
    t.index(['org_id', 'connector_uid', 'created_at']);
    t.foreign(['org_id', 'connector_uid']).references(['org_id', 'uid']).inTable('connectors').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ops_plans');
}
