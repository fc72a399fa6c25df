import { expect } from 'chai';
import pino from 'pino';
import { createDb } from '../src/db/knex.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createTestDatabase } from './helpers/app.ts';

/** Two instances booting at once on an empty database both come up: the second waits for the first's migrations. */
describe('concurrent migrations', function () {
  this.timeout(120_000);

  it('two migrate runs at once on a fresh database both resolve, and each migration runs once', async () => {
    const database = await createTestDatabase();
    const first = createDb({ databaseUrl: database.url, sqliteFile: '' });
    const second = createDb({ databaseUrl: database.url, sqliteFile: '' });
    const logger = pino({ level: 'silent' });
    try {
      await Promise.all([migrateToLatest(first, logger), migrateToLatest(second, logger)]);
      expect(await first.schema.hasTable('audit_log')).to.equal(true);
      const applied: Array<{ name: string }> = await first('knex_migrations').select('name');
      const names = applied.map((row) => row.name);
      expect(names.length).to.be.greaterThan(0);
      expect(new Set(names).size).to.equal(names.length);
      const [lock] = await first('knex_migrations_lock').select('is_locked');
      expect(Number(lock?.is_locked)).to.equal(0);
    } finally {
      await first.destroy();
      await second.destroy();
      await database.drop();
    }
  });
});
