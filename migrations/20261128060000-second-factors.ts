import type { Knex } from 'knex';

/**
 * Second factors of local and LDAP accounts: a TOTP secret (sealed, with the last time step a
 * code was accepted for, so a code is used once), ten hashed one-time recovery codes, WebAuthn
 * credentials (passkeys) and the challenge of a pending registration; the login challenges that
 * stand between a correct password and a session; and the mark of a session that must enrol a
 * second factor before it may do anything else.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_totp', (t) => {
    t.string('user_id', 40).primary().references('id').inTable('users').onDelete('CASCADE');
    t.text('secret_sealed').notNullable();
    t.bigInteger('confirmed_at').nullable();
    t.bigInteger('last_used_step').nullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('user_recovery_codes', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('code_hash', 64).notNullable();
    t.bigInteger('used_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['user_id', 'code_hash']);
  });
  await knex.schema.createTable('user_webauthn_credentials', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE').index();
    // looked up by the SHA-256 of its id: an id may be up to 1023 bytes, too long for an index
    t.string('credential_hash', 64).notNullable().unique();
    t.text('credential_id').notNullable();
    t.text('public_key').notNullable();
    t.bigInteger('counter').notNullable();
    t.string('transports', 200).nullable();
    t.string('name', 100).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
  });
  await knex.schema.createTable('webauthn_registrations', (t) => {
    t.string('user_id', 40).primary().references('id').inTable('users').onDelete('CASCADE');
    t.string('challenge', 100).notNullable();
    t.bigInteger('expires_at').notNullable();
  });
  await knex.schema.createTable('mfa_login_challenges', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE').index();
    t.string('method', 20).notNullable();
    t.string('webauthn_challenge', 100).nullable();
    t.integer('failures').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable().index();
    t.bigInteger('used_at').nullable();
  });
  await knex.schema.alterTable('sessions', (t) => {
    t.boolean('mfa_enrolment_pending').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('mfa_enrolment_pending');
  });
  await knex.schema.dropTable('mfa_login_challenges');
  await knex.schema.dropTable('webauthn_registrations');
  await knex.schema.dropTable('user_webauthn_credentials');
  await knex.schema.dropTable('user_recovery_codes');
  await knex.schema.dropTable('user_totp');
}
