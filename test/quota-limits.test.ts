import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser, type TestUser } from './helpers/factories.ts';

/** A quota limit the column cannot hold is bad input (400), on both databases, and nothing is written. */
describe('quota limits out of range', () => {
  let app: TestApp;
  let admin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  for (const limit of [2147483648, 1e308, 2 ** 53]) {
    it(`refuses ${limit} for an org and a user quota (400), writing nothing`, async () => {
      const org = await app.request('PUT', '/api/orgs/org_main/quotas/dashboards', { cookie: admin.cookie, body: { limit } });
      expect(org.status).to.equal(400);
      expect(org.body.message).to.match(/limit/);
      const user = await app.request('POST', `/api/admin/users/${admin.id}/quotas`, { cookie: admin.cookie, body: { target: 'api_keys', limit } });
      expect(user.status).to.equal(400);
      expect(await app.count('quotas')).to.equal(0);
    });
  }

  it('accepts the largest limit the column holds', async () => {
    const res = await app.request('PUT', '/api/orgs/org_main/quotas/dashboards', { cookie: admin.cookie, body: { limit: 2147483647 } });
    expect(res.status).to.equal(200);
  });
});
