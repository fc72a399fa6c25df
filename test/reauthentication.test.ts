import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, createUser } from './helpers/factories.ts';

/**
 * Changing what signs in to an account (its email or login) through PUT /api/user needs the
 * account's current password: a stolen session alone cannot take the account over. A wrong
 * password counts against the account's login lockout.
 */
describe('PUT /api/user: the current password to change email or login', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  const stored = async (userId: string) => app.db('users').where('id', userId).first();

  it('refuses an email or login change without the current password (400), and changes nothing', async () => {
    const user = await createUser(app);
    for (const body of [{ email: 'thief@evil.example' }, { login: 'thief' }, { name: 'Renamed', email: 'thief@evil.example' }]) {
      const res = await app.request('PUT', '/api/user', { cookie: user.cookie, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message).to.equal('give your current password (currentPassword) to change your email or login');
    }
    const row = await stored(user.id);
    expect(row).to.include({ email: user.email, login: user.login });
    expect(await auditEntries(app, { action: 'user.updated', target_id: user.id })).to.have.length(0);
  });

  it('refuses a wrong current password (400) and counts it against the login lockout (429 after 5)', async () => {
    const user = await createUser(app);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const res = await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: 'thief@evil.example', currentPassword: 'not the password' } });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal('the current password is not correct');
    }
    const locked = await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: 'thief@evil.example', currentPassword: user.password } });
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 300);
    expect((await stored(user.id)).email).to.equal(user.email);
  });

  it('changes email and login with the right current password', async () => {
    const user = await createUser(app);
    const res = await app.request('PUT', '/api/user', {
      cookie: user.cookie,
      body: { email: 'new@example.test', login: 'renamed', currentPassword: user.password },
    });
    expect(res.status).to.equal(200);
    expect(await stored(user.id)).to.include({ email: 'new@example.test', login: 'renamed' });
  });

  it('needs no password for a name change, or for an email equal to the current one in another case', async () => {
    const user = await createUser(app);
    expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Only The Name' } })).status).to.equal(200);
    expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: user.email.toUpperCase() } })).status).to.equal(200);
    expect((await stored(user.id)).name).to.equal('Only The Name');
  });

  it('asks nothing of an account without a local password', async () => {
    const user = await createUser(app);
    // Accounts without a local password sign in through an identity provider this service does not run
    // (they arrive imported), so no endpoint makes one: the test removes the password itself.
    await app.db('users').where('id', user.id).update({ password_hash: null });
    const res = await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: 'sso@example.test' } });
    expect(res.status).to.equal(200);
    expect((await stored(user.id)).email).to.equal('sso@example.test');
  });
});
