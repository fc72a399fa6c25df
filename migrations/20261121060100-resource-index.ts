import type { Knex } from 'knex';

/**
 * The org resources the policy reasons about: the folder tree, dashboards and alert rules in
 * it, connectors, and the legacy dashboard ACL read as a fallback. Their grants are permissions
 * of managed roles (role_permissions), so they need no table of their own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('folders', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('uid', 40).notNullable();
    t.string('title', 190).notNullable();
    t.string('description', 1000).notNullable().defaultTo('');
    t.string('parent_uid', 40).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['org_id', 'uid']);
    t.index(['org_id', 'parent_uid']);
  });

  await knex.schema.createTable('dashboards', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('uid', 40).notNullable();
    t.string('title', 190).notNullable();
    t.string('folder_uid', 40).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['org_id', 'uid']);
    t.index(['org_id', 'folder_uid']);
  });

  await knex.schema.createTable('alert_rules', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('uid', 40).notNullable();
    t.string('title', 190).notNullable();
    t.string('folder_uid', 40).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['org_id', 'uid']);
    t.index(['org_id', 'folder_uid']);
  });

  await knex.schema.createTable('connectors', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('uid', 40).notNullable();
    t.string('name', 190).notNullable();
    t.string('type', 40).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['org_id', 'uid']);
    t.unique(['org_id', 'name']);
  });

  await knex.schema.createTable('legacy_acl', (t) => {
    t.increments('id').primary();
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    // one of dashboard_uid / folder_uid
    t.string('dashboard_uid', 40).nullable();
    t.string('folder_uid', 40).nullable();
    // one of user_id / team_id / role
    t.string('user_id', 40).nullable();
    t.string('team_id', 40).nullable();
    t.string('role', 10).nullable();
    t.integer('permission').notNullable();
    t.index(['org_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['legacy_acl', 'connectors', 'alert_rules', 'dashboards', 'folders']) {
    await knex.schema.dropTableIfExists(table);
  }
}
