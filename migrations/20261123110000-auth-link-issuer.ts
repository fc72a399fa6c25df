import type { Knex } from 'knex';

/**
 * An external login is one subject of one issuer: the same `sub` from two OpenID issuers (a
 * provider moved to another tenant, say) is two identities, so the issuer joins the key. Rows
 * from before (and SAML or LDAP links, which have no issuer) keep an empty one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_auth_links', (t) => {
    t.string('issuer', 190).notNullable().defaultTo('');
  });
  await knex.schema.alterTable('user_auth_links', (t) => {
    t.dropUnique(['auth_module', 'auth_id']);
    t.unique(['auth_module', 'issuer', 'auth_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_auth_links', (t) => {
    t.dropUnique(['auth_module', 'issuer', 'auth_id']);
    t.unique(['auth_module', 'auth_id']);
  });
  await knex.schema.alterTable('user_auth_links', (t) => {
    t.dropColumn('issuer');
  });
}
