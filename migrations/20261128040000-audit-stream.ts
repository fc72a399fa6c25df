import type { Knex } from 'knex';

/**
 * The audit stream's outbox. `audit_stream_heads` holds each org's newest sequence number (`-`
 * for entries of no org); the audit writer takes the next one and writes the entry to
 * `audit_outbox` in the transaction of the entry, so an org's sequence order is its commit order.
 * Delivered rows are deleted. `audit_stream_status` is one row: the deliverers' lock and lease,
 * and what GET /api/admin/audit-stream shows. `audit_stream_dead_letters` keeps the newest
 * entries given up on. No foreign keys: appending locks no row another writer holds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_stream_heads', (t) => {
    t.string('stream', 40).primary();
    t.bigInteger('seq').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('audit_outbox', (t) => {
    t.string('stream', 40).notNullable();
    t.bigInteger('seq').notNullable();
    t.string('audit_id', 40).notNullable();
    t.text('entry', 'mediumtext').notNullable();
    t.bigInteger('created_at').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.primary(['stream', 'seq']);
    t.index(['created_at']);
  });
  await knex.schema.createTable('audit_stream_status', (t) => {
    t.integer('id').primary();
    t.string('lease_holder', 64).nullable();
    t.bigInteger('lease_until').nullable();
    t.bigInteger('last_delivery_at').nullable();
    t.bigInteger('delivered').notNullable().defaultTo(0);
    t.text('last_error').nullable();
    t.bigInteger('last_error_at').nullable();
    t.bigInteger('dead_letters').notNullable().defaultTo(0);
  });
  await knex('audit_stream_status').insert({ id: 1 });
  await knex.schema.createTable('audit_stream_dead_letters', (t) => {
    t.string('stream', 40).notNullable();
    t.bigInteger('seq').notNullable();
    t.string('audit_id', 40).notNullable();
    t.text('entry', 'mediumtext').notNullable();
    t.text('error').notNullable();
    t.bigInteger('failed_at').notNullable();
    t.primary(['stream', 'seq']);
    t.index(['failed_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_stream_dead_letters');
  await knex.schema.dropTable('audit_stream_status');
  await knex.schema.dropTable('audit_outbox');
  await knex.schema.dropTable('audit_stream_heads');
}
