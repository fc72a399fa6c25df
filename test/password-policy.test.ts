import { expect } from 'chai';
import { createUser, DEFAULT_PASSWORD } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const COMMON = ['123456789012', 'password1234', 'PASSWORD1234', '1qaz2wsx3edc'];
const TOO_COMMON = /too common/;
const SAME_AS_IDENTITY = 'the password must not be your login or email';

describe('password policy: common passwords and the login or email are refused', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('refuses them in the setup wizard and creates no user', async () => {
    for (const password of COMMON) {
      const res = await app.request('POST', '/api/setup/admin', { body: { name: 'Ada', login: 'ada', email: 'ada@example.test', password } });
      expect(res.status, password).to.equal(400);
      expect(res.body.message, password).to.match(TOO_COMMON);
    }
    const same = await app.request('POST', '/api/setup/admin', {
      body: { name: 'Ada', login: 'ada-lovelace-1815', email: 'ada@example.test', password: 'Ada-Lovelace-1815' },
    });
    expect(same.status).to.equal(400);
    expect(same.body.message).to.equal(SAME_AS_IDENTITY);
    expect(await app.count('users')).to.equal(0);
  });

  it('refuses them when a server admin creates a user or resets a password', async () => {
    const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    const target = await createUser(app, { login: 'grace-hopper-1906', email: 'grace.hopper@example.test' });
    const before = (await app.db('users').where('id', target.id).first()).password_hash;
    const body = { name: 'New', login: 'newcomer', email: 'newcomer.person@example.test' };
    expect((await app.request('POST', '/api/admin/users', { cookie: admin.cookie, body: { ...body, password: 'password1234' } })).body.message).to.match(
      TOO_COMMON,
    );
    const sameEmail = await app.request('POST', '/api/admin/users', { cookie: admin.cookie, body: { ...body, password: 'NewComer.Person@example.test' } });
    expect(sameEmail.status).to.equal(400);
    expect(sameEmail.body.message).to.equal(SAME_AS_IDENTITY);
    expect(await app.count('users', { login: 'newcomer' })).to.equal(0);

    const common = await app.request('POST', `/api/admin/users/${target.id}/password`, { cookie: admin.cookie, body: { password: '123456789012' } });
    expect(common.status).to.equal(400);
    expect(common.body.message).to.match(TOO_COMMON);
    const sameLogin = await app.request('POST', `/api/admin/users/${target.id}/password`, { cookie: admin.cookie, body: { password: 'GRACE-HOPPER-1906' } });
    expect(sameLogin.body.message).to.equal(SAME_AS_IDENTITY);
    expect((await app.db('users').where('id', target.id).first()).password_hash).to.equal(before);
  });

  it('refuses them in PUT /api/user/password and keeps the old password', async () => {
    const user = await createUser(app, { login: 'alan-turing-1912', email: 'alan@example.test' });
    for (const [newPassword, message] of [
      ['password1234', TOO_COMMON],
      ['Alan-Turing-1912', SAME_AS_IDENTITY],
    ] as const) {
      const res = await app.request('PUT', '/api/user/password', { cookie: user.cookie, body: { oldPassword: DEFAULT_PASSWORD, newPassword } });
      expect(res.status, newPassword).to.equal(400);
      expect(res.body.message).to.match(typeof message === 'string' ? new RegExp(`^${message}$`) : message);
    }
    expect((await app.request('POST', '/api/login', { body: { user: user.login, password: DEFAULT_PASSWORD } })).status).to.equal(200);
  });

  it('accepts an uncommon password', async () => {
    const user = await createUser(app, { password: DEFAULT_PASSWORD });
    const res = await app.request('PUT', '/api/user/password', {
      cookie: user.cookie,
      body: { oldPassword: DEFAULT_PASSWORD, newPassword: 'violet kestrel under granite' },
    });
    expect(res.status).to.equal(200);
  });
});
