import type { Knex } from 'knex';

/**
 * What the folder, dashboard and alert-rule APIs keep beyond the policy's index: who made and
 * last changed each, the dashboard model and its version (optimistic locking on save), and the
 * alert rule's group and definition. Models are JSON text: the service stores them, it does not
 * query inside them; null (rows made before, or by the bench tools) reads as an empty model.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('folders', (t) => {
    t.string('created_by', 40).nullable();
    t.string('updated_by', 40).nullable();
  });
  await knex.schema.alterTable('dashboards', (t) => {
    t.text('data', 'mediumtext').nullable();
    t.integer('version').notNullable().defaultTo(1);
    t.string('created_by', 40).nullable();
    t.string('updated_by', 40).nullable();
    t.index(['org_id', 'folder_uid', 'title']);
  });
  await knex.schema.alterTable('alert_rules', (t) => {
    t.string('rule_group', 190).notNullable().defaultTo('');
    t.text('data', 'mediumtext').nullable();
    t.integer('version').notNullable().defaultTo(1);
    t.string('created_by', 40).nullable();
    t.string('updated_by', 40).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('alert_rules', (t) => {
    t.dropColumns('rule_group', 'data', 'version', 'created_by', 'updated_by');
  });
  await knex.schema.alterTable('dashboards', (t) => {
    t.dropIndex(['org_id', 'folder_uid', 'title']);
    t.dropColumns('data', 'version', 'created_by', 'updated_by');
  });
  await knex.schema.alterTable('folders', (t) => {
    t.dropColumns('created_by', 'updated_by');
  });
}
