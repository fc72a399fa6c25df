import type { Knex } from 'knex';

/**
 * The label rules of a connector: which series each principal may read, as a PromQL label-matcher
 * set. A rule names one principal (`principal_kind` user, team or role and its id or org role);
 * `position` keeps the order they were saved in. The rules belong to their connector: deleting the
 * connector (or its org) deletes them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('connector_label_rules', (t) => {
    t.string('org_id', 40).notNullable();
    t.string('connector_uid', 40).notNullable();
    t.integer('position').notNullable();
    t.string('principal_kind', 20).notNullable();
    t.string('principal_id', 40).notNullable();
    t.string('selector', 2048).notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['org_id', 'connector_uid', 'position']);
    t.foreign(['org_id', 'connector_uid']).references(['org_id', 'uid']).inTable('connectors').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('connector_label_rules');
}
