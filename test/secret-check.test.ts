import { expect } from 'chai';
import pino from 'pino';
import { ConfigError } from '../src/config.ts';
import { secretCheckKey } from '../src/settings/secret-check.ts';
import { startServices } from '../src/startup.ts';
import { createUser, sessionCookie } from './helpers/factories.ts';
import { createTestDatabase, startTestApp, testConfig, type Database, type TestApp } from './helpers/app.ts';

const OTHER_SECRET = 'another-instance-own-secret-0123456789abcdef';

describe('instances on one database agree on JWT_SECRET and SECRET_KEY', () => {
  let database: Database;
  let first: TestApp;
  before(async () => {
    database = await createTestDatabase();
    first = await startTestApp({ database });
  });
  after(async () => {
    await first.close();
    await database.drop();
  });

  it('stores a check value of each secret, never the secret itself', async () => {
    const rows: Array<{ key: string; value: string }> = await first.db('settings').where('key', 'like', 'secret_check:%').select('key', 'value');
    expect(rows.map((row) => row.key).sort()).to.deep.equal([secretCheckKey('JWT_SECRET'), secretCheckKey('SECRET_KEY')]);
    for (const row of rows) {
      expect(row.value).to.match(/^"[0-9a-f]{64}"$/);
      expect(row.value).to.not.include(first.services.config.jwtSecret);
      expect(row.value).to.not.include(first.services.config.secretKey);
    }
  });

  it('a second instance with the same secrets starts and accepts the first one’s sessions', async () => {
    const second = await startTestApp({ database });
    try {
      const user = await createUser(first);
      const cookie = await sessionCookie(first, user.id);
      const res = await second.request('GET', '/api/user', { cookie });
      expect(res.status).to.equal(200);
      expect(res.body.login).to.equal(user.login);
    } finally {
      await second.close();
    }
  });

  for (const name of ['JWT_SECRET', 'SECRET_KEY'] as const) {
    it(`an instance with its own ${name} refuses to start, naming the variable`, async () => {
      const config = testConfig(database.url, { [name]: OTHER_SECRET });
      let refusal: unknown;
      await startServices(config, pino({ level: 'silent' })).catch((err: unknown) => (refusal = err));
      expect(refusal).to.be.instanceOf(ConfigError);
      expect((refusal as Error).message).to.match(new RegExp(`^${name} differs from the one this database was first used with`));
      expect((refusal as Error).message).to.not.include(OTHER_SECRET);
    });
  }

  it('ROTATE_SECRETS adopts a new secret, which the old one then no longer matches', async () => {
    const rotated = await startTestApp({ database, env: { JWT_SECRET: OTHER_SECRET, ROTATE_SECRETS: 'JWT_SECRET' } });
    await rotated.close();
    const again = await startTestApp({ database, env: { JWT_SECRET: OTHER_SECRET } });
    await again.close();
    const old = await startServices(testConfig(database.url), pino({ level: 'silent' })).catch((err: Error) => err);
    expect(old).to.be.instanceOf(ConfigError);
    expect((old as Error).message).to.match(/^JWT_SECRET differs/);
  });
});
