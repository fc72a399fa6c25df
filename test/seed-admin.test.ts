import { expect } from 'chai';
import { createTestDatabase, startTestApp } from './helpers/app.ts';

describe('headless first administrator (SEED_ADMIN_*)', () => {
  const env = { SEED_ADMIN_EMAIL: 'root@example.test', SEED_ADMIN_PASSWORD: 'seeded-admin-password' };

  it('creates the admin at boot with the default login, once', async () => {
    const database = await createTestDatabase();
    try {
      const first = await startTestApp({ env, database });
      const users = await first.db('users').select('login', 'email', 'is_svc_admin');
      expect(users).to.have.length(1);
      expect(users[0]).to.include({ login: 'admin', email: 'root@example.test' });
      expect(!!users[0].is_svc_admin).to.equal(true);
      expect(await first.db('org_members').where({ org_id: 'org_main', role: 'Admin' }).first()).to.exist;
      await first.close();

      const second = await startTestApp({ env: { ...env, SEED_ADMIN_EMAIL: 'other@example.test', SEED_ADMIN_LOGIN: 'other' }, database });
      expect(await second.db('users').select('login')).to.deep.equal([{ login: 'admin' }]);
      await second.close();
    } finally {
      await database.drop();
    }
  });

  it('uses SEED_ADMIN_LOGIN and SEED_ADMIN_NAME when given', async () => {
    const app = await startTestApp({ env: { ...env, SEED_ADMIN_LOGIN: 'boss', SEED_ADMIN_NAME: 'The Boss' } });
    expect(await app.db('users').first('login', 'name')).to.deep.equal({ login: 'boss', name: 'The Boss' });
    await app.close();
  });

  it('does nothing when the password is shorter than 12 characters or a variable is missing', async () => {
    const short = await startTestApp({ env: { ...env, SEED_ADMIN_PASSWORD: 'too-short' } });
    expect(await short.db('users').select('id')).to.have.length(0);
    await short.close();
    const missing = await startTestApp({ env: { SEED_ADMIN_EMAIL: 'root@example.test' } });
    expect(await missing.db('users').select('id')).to.have.length(0);
    await missing.close();
  });
});
