import type { Knex } from 'knex';

/**
 * SAML state shared by every instance: the requests this service sent (an answer must name one,
 * and uses it once), the ids of the assertions it accepted (kept until they expire, so a replay is
 * refused), and which IdP subject and session each SAML login session stands for (single logout).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('saml_requests', (t) => {
    t.string('id', 190).primary();
    t.string('kind', 10).notNullable(); // login | logout
    // where the browser goes once the answer is in: a local path
    t.string('redirect', 2048).notNullable();
    t.bigInteger('expires_at').notNullable().index();
  });
  await knex.schema.createTable('saml_assertion_ids', (t) => {
    t.string('id', 190).primary();
    t.bigInteger('expires_at').notNullable().index();
  });
  await knex.schema.createTable('saml_sessions', (t) => {
    t.string('session_id', 40).primary().references('id').inTable('sessions').onDelete('CASCADE');
    t.string('name_id', 190).notNullable().index();
    t.string('session_index', 190).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['saml_sessions', 'saml_assertion_ids', 'saml_requests']) {
    await knex.schema.dropTableIfExists(table);
  }
}
