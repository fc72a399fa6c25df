import type { Knex } from 'knex';

/**
 * The account a login-lockout counter counts against, when it names one: the counter's key hashes
 * the client address with it, and an operator clearing a locked-out admin's lockout
 * (`npm run cli -- reset-password`) must find the counters of every address.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('login_attempts', (t) => {
    t.string('user_id', 40).nullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('login_attempts', (t) => {
    t.dropIndex(['user_id']);
    t.dropColumn('user_id');
  });
}
