/** X-Content-Type-Options: nosniff on every answer; Cache-Control: no-store on one that hands out a token key. */
import { expect } from 'chai';
import { api, buildServiceAccount, createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('security headers', () => {
  let app: TestApp;
  let admin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  it('sends nosniff on successes and failures alike', async () => {
    const answers = [
      await api(app, admin).get('/api/user'),
      await app.request('GET', '/api/user'),
      await app.request('GET', '/api/no/such/thing'),
      await api(app, admin).post('/api/teams', { name: 7 }),
      await app.request('GET', '/api/health'),
    ];
    for (const res of answers) expect(res.headers.get('x-content-type-options'), String(res.status)).to.equal('nosniff');
  });

  it('marks answers carrying a token key no-store, and only those', async () => {
    const pat = await api(app, admin).post('/api/user/access-tokens', { name: 'ci' });
    expect(pat.status).to.be.oneOf([200, 201]);
    expect(pat.body.key).to.be.a('string');
    expect(pat.headers.get('cache-control')).to.equal('no-store');

    const account = await buildServiceAccount(app);
    const saToken = await api(app, admin).post(`/api/serviceaccounts/${account.id}/tokens`, { name: 'deploy' });
    expect(saToken.body.key).to.be.a('string');
    expect(saToken.headers.get('cache-control')).to.equal('no-store');

    const listed = await api(app, admin).get('/api/user/access-tokens');
    expect(listed.status).to.equal(200);
    expect(listed.headers.get('cache-control')).to.equal(null);
  });
});
