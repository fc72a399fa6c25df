import { expect } from 'chai';
import { createDb } from '../src/db/knex.ts';
import { migrateToLatest, rollbackAll } from '../src/db/migrate.ts';
import { createTestDatabase } from './helpers/app.ts';

describe('migrations', () => {
  it('go up, all the way down, and up again', async () => {
    const database = await createTestDatabase();
    const db = createDb({ databaseUrl: database.url, sqliteFile: '' });
    try {
      await migrateToLatest(db);
      expect(await db.schema.hasTable('users')).to.equal(true);
      expect(await db.schema.hasTable('folders')).to.equal(true);
      await rollbackAll(db);
      for (const table of ['users', 'orgs', 'roles', 'sessions', 'audit_log', 'folders', 'dashboards']) {
        expect(await db.schema.hasTable(table), table).to.equal(false);
      }
      await migrateToLatest(db);
      expect(await db.schema.hasTable('audit_log')).to.equal(true);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});
