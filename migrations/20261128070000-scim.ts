import type { Knex } from 'knex';

/**
 * The accounts and teams SCIM provisioned, each tied to the org whose token created it. A SCIM
 * client names its resources by its own `externalId`, unique within the org and only ever looked
 * up here: never against an internal id, a login or an email.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('scim_users', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('user_id', 40).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('external_id', 190).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['org_id', 'user_id']);
    // one provisioning org per account: another org's token never claims it
    t.unique(['user_id']);
    t.unique(['org_id', 'external_id']);
  });

  await knex.schema.createTable('scim_groups', (t) => {
    t.string('org_id', 40).notNullable().references('id').inTable('orgs').onDelete('CASCADE');
    t.string('team_id', 40).notNullable().references('id').inTable('teams').onDelete('CASCADE');
    t.string('external_id', 190).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['org_id', 'team_id']);
    t.unique(['team_id']);
    t.unique(['org_id', 'external_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('scim_groups');
  await knex.schema.dropTable('scim_users');
}
