import type { Knex } from 'knex';

/**
 * Lists read one page by title (search, the folder list): an index on (org_id, title, uid) gives
 * a reader who may see every folder or dashboard the first page without sorting the whole org.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboards', (t) => {
    t.index(['org_id', 'title', 'uid'], 'dashboards_org_title_index');
  });
  await knex.schema.alterTable('folders', (t) => {
    t.index(['org_id', 'title', 'uid'], 'folders_org_title_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('folders', (t) => {
    t.dropIndex(['org_id', 'title', 'uid'], 'folders_org_title_index');
  });
  await knex.schema.alterTable('dashboards', (t) => {
    t.dropIndex(['org_id', 'title', 'uid'], 'dashboards_org_title_index');
  });
}
