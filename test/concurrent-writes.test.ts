import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser, DEFAULT_PASSWORD, type TestUser } from './helpers/factories.ts';

/**
 * Many creates at once (meaningful on MariaDB, where transactions really run in parallel and
 * InnoDB picks deadlock victims): every one succeeds, or is 409 for a real duplicate, never 500;
 * the database and the audit log hold exactly one row per success.
 */
describe('concurrent writes', function () {
  this.timeout(120_000);
  let app: TestApp;
  let admin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  async function inParallel(count: number, request: (i: number) => Promise<{ status: number; body: any }>) {
    const responses = await Promise.all(Array.from({ length: count }, (_, i) => request(i)));
    const failures = responses.filter((res) => res.status !== 201).map((res) => `${res.status} ${JSON.stringify(res.body)}`);
    expect(failures).to.deep.equal([]);
  }

  async function audited(action: string): Promise<number> {
    return app.count('audit_log', { action, outcome: 'success' });
  }

  for (const count of [20, 50]) {
    it(`creates ${count} orgs at once`, async () => {
      const orgsBefore = await app.count('orgs');
      const auditBefore = await audited('org.created');
      await inParallel(count, (i) => app.request('POST', '/api/orgs', { cookie: admin.cookie, body: { name: `Parallel ${count} org ${i}` } }));
      expect(await app.count('orgs')).to.equal(orgsBefore + count);
      expect(await audited('org.created')).to.equal(auditBefore + count);
    });

    it(`creates ${count} teams at once`, async () => {
      const teamsBefore = await app.count('teams');
      const auditBefore = await audited('team.created');
      await inParallel(count, (i) => app.request('POST', '/api/teams', { cookie: admin.cookie, body: { name: `parallel-${count}-team-${i}` } }));
      expect(await app.count('teams')).to.equal(teamsBefore + count);
      expect(await audited('team.created')).to.equal(auditBefore + count);
    });

    it(`creates ${count} service accounts at once`, async () => {
      const accountsBefore = await app.count('users', { is_service_account: true });
      const auditBefore = await audited('service_account.created');
      await inParallel(count, (i) =>
        app.request('POST', '/api/serviceaccounts', { cookie: admin.cookie, body: { name: `parallel-${count}-sa-${i}`, role: 'Viewer' } }),
      );
      expect(await app.count('users', { is_service_account: true })).to.equal(accountsBefore + count);
      expect(await audited('service_account.created')).to.equal(auditBefore + count);
    });

    it(`creates ${count} users at once`, async () => {
      const usersBefore = await app.count('users');
      const auditBefore = await audited('user.created');
      await inParallel(count, (i) =>
        app.request('POST', '/api/admin/users', {
          cookie: admin.cookie,
          body: { name: `Parallel ${i}`, login: `parallel-${count}-user-${i}`, email: `parallel-${count}-user-${i}@example.test`, password: DEFAULT_PASSWORD },
        }),
      );
      expect(await app.count('users')).to.equal(usersBefore + count);
      expect(await audited('user.created')).to.equal(auditBefore + count);
    });
  }

  it('answers 409 to all but one of 20 creates of the same org name, never 500', async () => {
    const orgsBefore = await app.count('orgs');
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => app.request('POST', '/api/orgs', { cookie: admin.cookie, body: { name: 'Same name at once' } })),
    );
    const statuses = responses.map((res) => res.status).sort();
    expect(statuses).to.deep.equal([201, ...Array<number>(19).fill(409)]);
    expect(await app.count('orgs')).to.equal(orgsBefore + 1);
  });
});
