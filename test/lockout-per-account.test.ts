import { expect } from 'chai';
import { createUser, DEFAULT_PASSWORD, passwordLogin } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

/**
 * The login lockout counts per account (with the client IP): the login, the email, and their case
 * and blank variants all take from one counter; a login naming no account is counted by its
 * normalised text; a wrong old password on a password change counts against the account too.
 */
describe('lockout per account', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  const changePassword = (cookie: string, oldPassword: string) =>
    app.request('PUT', '/api/user/password', { cookie, body: { oldPassword, newPassword: 'another long enough password' } });

  it('counts the login, the email and their case and blank variants as one account', async () => {
    await createUser(app, { login: 'alice', email: 'alice@example.test' });
    for (const typed of ['alice', 'alice@example.test', 'ALICE', ' Alice@Example.test ', 'alice ']) {
      expect((await passwordLogin(app, typed, 'wrong password!')).status, typed).to.equal(401);
    }
    for (const typed of ['alice', 'alice@example.test']) {
      const locked = await passwordLogin(app, typed, DEFAULT_PASSWORD);
      expect(locked.status, typed).to.equal(429);
      expect(locked.body.message).to.match(/too many login attempts/);
    }
  });

  it('counts a login naming no account by its normalised text', async () => {
    for (const typed of ['ghost', 'GHOST', ' ghost', 'Ghost ', 'gHoSt']) expect((await passwordLogin(app, typed, 'wrong password!')).status).to.equal(401);
    expect((await passwordLogin(app, 'ghost', 'wrong password!')).status).to.equal(429);
    expect((await passwordLogin(app, 'ghost2', 'wrong password!')).status).to.equal(401);
  });

  it('refuses a password change with 429 once wrong old passwords reached the limit, and locks the login form too', async () => {
    const user = await createUser(app, { login: 'bob' });
    const passwordHash = async () => (await app.db('users').where('id', user.id).first('password_hash')).password_hash as string;
    const before = await passwordHash();
    for (let i = 0; i < 5; i++) {
      const res = await changePassword(user.cookie, 'wrong password!');
      expect(res.status).to.equal(400);
    }
    const locked = await changePassword(user.cookie, DEFAULT_PASSWORD);
    expect(locked.status).to.equal(429);
    expect(locked.body.message).to.match(/too many/);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 300);
    expect((await passwordLogin(app, 'bob', DEFAULT_PASSWORD)).status).to.equal(429);
    expect(await passwordHash()).to.equal(before);

    app.clock.advance(5 * 60_000);
    expect((await changePassword(user.cookie, DEFAULT_PASSWORD)).status).to.equal(200);
  });

  it('shares one counter between failed logins and wrong old passwords', async () => {
    const user = await createUser(app, { login: 'carol' });
    for (let i = 0; i < 3; i++) expect((await passwordLogin(app, 'carol', 'wrong password!')).status).to.equal(401);
    for (let i = 0; i < 2; i++) expect((await changePassword(user.cookie, 'wrong password!')).status).to.equal(400);
    expect((await changePassword(user.cookie, DEFAULT_PASSWORD)).status).to.equal(429);
  });

  it('lets a right old password through and clears the counter', async () => {
    const user = await createUser(app, { login: 'dave' });
    for (let i = 0; i < 4; i++) await changePassword(user.cookie, 'wrong password!');
    expect((await changePassword(user.cookie, DEFAULT_PASSWORD)).status).to.equal(200);
    for (let i = 0; i < 4; i++) expect((await passwordLogin(app, 'dave', 'wrong password!')).status).to.equal(401);
    expect((await passwordLogin(app, 'dave', 'another long enough password')).status).to.equal(200);
  });
});
