import type { Knex } from 'knex';

/**
 * A SAML request can start an explicit link as well as a login: it remembers the browser session
 * that asked (`session_id`), and once the identity provider answered, the asserted NameID waits
 * (`name_id`, kind `linked`) until that same session confirms it with a same-site navigation.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('saml_requests', (t) => {
    t.string('session_id', 40).nullable();
    t.string('name_id', 190).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('saml_requests').whereIn('kind', ['link', 'linked']).delete();
  await knex.schema.alterTable('saml_requests', (t) => {
    t.dropColumn('name_id');
    t.dropColumn('session_id');
  });
}
