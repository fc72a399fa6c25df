import type { Knex } from 'knex';

/**
 * The policy change log replaces the per-org revision counter: `policy_heads` holds each stream's
 * newest seq (an org's id, or `*` for changes that concern every org) and `policy_changes` what
 * each commit touched. Like the counter, neither table has a foreign key, so appending locks no
 * row another writer holds and queues writers only for the instant before their commit. An org's
 * head starts at its revision, so an instance that has read the revision has a seq to start from.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('policy_heads', (t) => {
    t.string('stream', 40).primary();
    t.bigInteger('seq').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('policy_changes', (t) => {
    t.string('stream', 40).notNullable();
    t.bigInteger('seq').notNullable();
    t.text('fragments', 'mediumtext').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['stream', 'seq']);
    t.index(['created_at']);
  });
  await knex('policy_heads').insert(knex('policy_revisions').select('org_id as stream', 'revision as seq'));
  await knex.schema.dropTable('policy_revisions');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.createTable('policy_revisions', (t) => {
    t.string('org_id', 40).primary().references('id').inTable('orgs').onDelete('CASCADE');
    t.bigInteger('revision').notNullable().defaultTo(0);
  });
  await knex('policy_revisions').insert(
    knex('policy_heads').join('orgs', 'orgs.id', 'policy_heads.stream').select('policy_heads.stream as org_id', 'policy_heads.seq as revision'),
  );
  await knex.schema.dropTable('policy_changes');
  await knex.schema.dropTable('policy_heads');
}
