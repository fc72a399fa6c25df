import type { Knex } from 'knex';

/** Users, orgs, memberships, roles and their assignments, teams, sessions, settings, audit log. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('orgs', (t) => {
    t.string('id', 40).primary();
    t.string('name', 190).notNullable().unique();
    t.text('address').nullable();
    t.string('billing_email', 190).nullable();
    // Bumped in every transaction that changes the org's policy data; other instances poll it.
    t.bigInteger('policy_revision').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });

  await knex.schema.createTable('users', (t) => {
    t.string('id', 40).primary();
    t.string('login', 190).notNullable().unique();
    t.string('email', 190).nullable().unique();
    t.string('name', 190).notNullable();
    t.string('password_hash', 200).nullable();
    t.boolean('is_svc_admin').notNullable().defaultTo(false);
    t.boolean('is_disabled').notNullable().defaultTo(false);
    t.boolean('is_service_account').notNullable().defaultTo(false);
    t.string('default_org_id', 40).nullable().references('id').inTable('orgs').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('last_seen_at').nullable();
  });

  await knex.schema.createTable('org_members', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('role', 10).notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['org_id', 'user_id']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('roles', (t) => {
    t.increments('id').primary();
    t.string('uid', 190).notNullable();
    // null = a global role, visible in every org (basic:server_admin, global custom roles)
    t.string('org_id', 40).nullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.string('display_name', 190).notNullable().defaultTo('');
    t.string('description', 1000).notNullable().defaultTo('');
    t.string('group_name', 190).notNullable().defaultTo('');
    t.boolean('hidden').notNullable().defaultTo(false);
    t.integer('version').notNullable().defaultTo(1);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['org_id', 'uid']);
  });

  await knex.schema.createTable('role_permissions', (t) => {
    t.increments('id').primary();
    t.integer('role_id').unsigned().notNullable().references('id').inTable('roles').onDelete('CASCADE');
    t.string('action', 190).notNullable();
    t.string('scope', 190).notNullable();
    t.unique(['role_id', 'action', 'scope']);
    t.index(['scope']);
  });

  await knex.schema.createTable('user_roles', (t) => {
    t.increments('id').primary();
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('role_id').unsigned().notNullable().references('id').inTable('roles').onDelete('CASCADE');
    // null = a global assignment, applying in every org the user belongs to
    t.string('org_id', 40).nullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.unique(['user_id', 'role_id', 'org_id']);
    t.index(['org_id']);
  });

  await knex.schema.createTable('teams', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.string('email', 190).notNullable().defaultTo('');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['org_id', 'name']);
  });

  await knex.schema.createTable('team_members', (t) => {
    t.string('team_id', 40).notNullable().references('id').inTable('teams').onDelete('CASCADE');
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('permission').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.primary(['team_id', 'user_id']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('team_roles', (t) => {
    t.increments('id').primary();
    t.string('team_id', 40).notNullable().references('id').inTable('teams').onDelete('CASCADE');
    t.integer('role_id').unsigned().notNullable().references('id').inTable('roles').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.unique(['team_id', 'role_id']);
  });

  await knex.schema.createTable('sessions', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('token_hash', 64).notNullable().unique();
    // the token this one replaced at rotation, accepted until rotated_at + grace
    t.string('prev_token_hash', 64).nullable().index();
    t.bigInteger('rotated_at').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_seen_at').notNullable();
    t.bigInteger('revoked_at').nullable();
    t.string('ip', 64).nullable();
    t.string('user_agent', 300).nullable();
    t.index(['user_id']);
  });

  await knex.schema.createTable('settings', (t) => {
    t.string('key', 190).primary();
    t.text('value').notNullable();
    t.bigInteger('updated_at').notNullable();
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.string('id', 40).primary();
    t.bigInteger('timestamp').notNullable().index();
    t.string('action', 100).notNullable().index();
    t.string('actor_type', 20).notNullable();
    t.string('actor_id', 40).nullable().index();
    t.string('actor_name', 190).nullable();
    t.string('org_id', 40).nullable();
    t.string('target_type', 50).nullable();
    t.string('target_id', 190).nullable();
    t.string('target_name', 190).nullable();
    t.string('outcome', 10).notNullable();
    t.text('metadata').nullable();
    t.string('ip', 64).nullable();
    t.string('user_agent', 300).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'audit_log',
    'settings',
    'sessions',
    'team_roles',
    'team_members',
    'teams',
    'user_roles',
    'role_permissions',
    'roles',
    'org_members',
    'users',
    'orgs',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
