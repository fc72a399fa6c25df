import type { Knex } from 'knex';

/** Login lockout counters, API tokens (PATs and SA tokens), external login links, preferences. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('login_attempts', (t) => {
    // SHA-256 of "<ip>|account:<user id>" or "<ip>|login:<login>", so the table holds neither addresses nor logins in clear
    t.string('key', 64).primary();
    t.bigInteger('window_start').notNullable();
    t.integer('failures').notNullable().defaultTo(0);
  });

  await knex.schema.createTable('api_tokens', (t) => {
    t.string('id', 40).primary();
    t.string('kind', 10).notNullable(); // pat | sa
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    // the org an SA token is pinned to; null for a PAT (it follows its owner)
    t.string('org_id', 40).nullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').nullable();
    t.bigInteger('last_used_at').nullable();
    t.bigInteger('revoked_at').nullable();
    t.unique(['user_id', 'kind', 'name']);
  });

  await knex.schema.createTable('user_auth_links', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('auth_module', 40).notNullable(); // oauth_codehost, oauth_workspace, oauth_generic, saml, ldap
    t.string('auth_id', 190).notNullable();
    t.string('label', 190).notNullable().defaultTo('');
    t.text('tokens_sealed').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['auth_module', 'auth_id']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('preferences', (t) => {
    t.string('owner_kind', 10).notNullable(); // user | org | team
    t.string('owner_id', 40).notNullable();
    t.string('home_dashboard_uid', 40).notNullable().defaultTo('');
    t.string('timezone', 64).notNullable().defaultTo('');
    t.string('theme', 10).notNullable().defaultTo('');
    t.bigInteger('updated_at').notNullable();
    t.primary(['owner_kind', 'owner_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['preferences', 'user_auth_links', 'api_tokens', 'login_attempts']) {
    await knex.schema.dropTableIfExists(table);
  }
}
