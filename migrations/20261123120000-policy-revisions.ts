import type { Knex } from 'knex';

/**
 * Each org's policy revision moves out of the `orgs` row into a table of its own. Every write to
 * an org's policy data bumps it at the end of its transaction, and on MySQL every insert of a
 * child row (a team, a role, a membership…) has already taken a shared lock on the parent `orgs`
 * row for its foreign key: two such transactions then each wait to upgrade their shared lock to
 * the exclusive one the bump needs, and InnoDB kills one as a deadlock — dozens of times under 50
 * parallel writes. No foreign key points at `policy_revisions`, so bumping it only queues the
 * writers, each for the instant before its commit. `orgs.policy_revision` stays, unread:
 * dropping a column of the table every other table references rebuilds it on SQLite.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('policy_revisions', (t) => {
    t.string('org_id', 40).primary().references('id').inTable('orgs').onDelete('CASCADE');
    t.bigInteger('revision').notNullable().defaultTo(0);
  });
  await knex('policy_revisions').insert(knex('orgs').select('id as org_id', 'policy_revision as revision'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('policy_revisions');
}
