import { expect } from 'chai';
import { createUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

/** NUL, another C0 control, DEL and each bidirectional control the schemas refuse. */
const UNSAFE = ['\u0000', '\u0007', '\u001F', '\u007F', '\u061C', '\u200E', '\u200F', '\u202A', '\u202E', '\u2066', '\u2069'];
const PASSWORD = 'a-long-enough-password';

describe('names, logins and emails refuse NUL, control and bidirectional-override characters', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('refuses them in the setup wizard (400) and creates no user', async () => {
    for (const bad of UNSAFE) {
      for (const body of [
        { name: `Ada${bad}Admin`, login: 'ada', email: 'ada@example.test', password: PASSWORD },
        { name: 'Ada', login: `ada${bad}`, email: 'ada@example.test', password: PASSWORD },
        { name: 'Ada', login: 'ada', email: `ada${bad}@example.test`, password: PASSWORD },
      ]) {
        const res = await app.request('POST', '/api/setup/admin', { body });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
    }
    expect(await app.count('users')).to.equal(0);
  });

  it('refuses them when a server admin creates a user, and in PUT /api/user', async () => {
    const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    const user = await createUser(app, { name: 'Plain' });
    for (const bad of UNSAFE) {
      const created = await app.request('POST', '/api/admin/users', {
        cookie: admin.cookie,
        body: { name: `gnp${bad}exe`, login: 'mallory', email: `m${bad}@example.test`, password: PASSWORD },
      });
      expect(created.status).to.equal(400);
      const renamed = await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: `admin${bad}` } });
      expect(renamed.status).to.equal(400);
    }
    expect(await app.count('users', { login: 'mallory' })).to.equal(0);
    expect((await app.db('users').where('id', user.id).first()).name).to.equal('Plain');
  });

  it('refuses them in org, team and service account names and in an org invite', async () => {
    const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    for (const bad of ['\u0000', '\u202E', '\u2067']) {
      expect((await app.request('POST', '/api/orgs', { cookie: admin.cookie, body: { name: `Org${bad}` } })).status).to.equal(400);
      expect((await app.request('POST', '/api/teams', { cookie: admin.cookie, body: { name: `Team${bad}` } })).status).to.equal(400);
      expect((await app.request('POST', '/api/serviceaccounts', { cookie: admin.cookie, body: { name: `bot${bad}` } })).status).to.equal(400);
      expect(
        (await app.request('POST', '/api/org/users', { cookie: admin.cookie, body: { loginOrEmail: `x${bad}@example.test`, role: 'Viewer' } })).status,
      ).to.equal(400);
    }
    expect(await app.count('teams')).to.equal(0);
  });

  it('still accepts accented and non-Latin names', async () => {
    const user = await createUser(app);
    const res = await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Zoë Łukasz 李雷 عمر' } });
    expect(res.status).to.equal(200);
    expect(res.body.name).to.equal('Zoë Łukasz 李雷 عمر');
  });
});
