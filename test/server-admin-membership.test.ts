import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, refusalEntries, createUser, DENIED, type TestUser } from './helpers/factories.ts';

/**
 * An org Admin administers the org's people, but not the server's administrators: only a server
 * admin changes a server admin's org role or removes one from an org (the policy decides, from
 * the target's flag in the input).
 */
describe("a server admin's org membership: changed only by a server admin", () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let otherServerAdmin: TestUser;
  let orgAdmin: TestUser;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    otherServerAdmin = await createUser(app, { svcAdmin: true, role: 'Editor' });
    orgAdmin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  const roleIn = async (userId: string) => (await app.services.db('org_members').where({ org_id: 'org_main', user_id: userId }).first())?.role;

  for (const path of [(id: string) => `/api/org/users/${id}`, (id: string) => `/api/orgs/org_main/users/${id}`]) {
    it(`an org Admin may neither demote nor remove a server admin (${path(':userId')})`, async () => {
      const demote = await api(app, orgAdmin).patch(path(otherServerAdmin.id), { role: 'Viewer' });
      expect(demote.status).to.equal(403);
      expect(demote.body.message).to.match(DENIED);
      const remove = await api(app, orgAdmin).delete(path(otherServerAdmin.id));
      expect(remove.status).to.equal(403);
      expect(await roleIn(otherServerAdmin.id), 'the membership is unchanged').to.equal('Editor');
      const refusals = await refusalEntries(app, 'org.users:remove', { actor_id: orgAdmin.id });
      expect(refusals.length, 'the refused removal is audited').to.be.greaterThan(0);
    });
  }

  it('an org Admin still changes and removes ordinary members', async () => {
    const member = await createUser(app, { role: 'Viewer' });
    expect((await api(app, orgAdmin).patch(`/api/org/users/${member.id}`, { role: 'Editor' })).status).to.equal(200);
    expect(await roleIn(member.id)).to.equal('Editor');
    expect((await api(app, orgAdmin).delete(`/api/org/users/${member.id}`)).status).to.equal(200);
    expect(await roleIn(member.id)).to.equal(undefined);
  });

  it("a server admin changes another server admin's role and membership", async () => {
    expect((await api(app, serverAdmin).patch(`/api/org/users/${otherServerAdmin.id}`, { role: 'Viewer' })).status).to.equal(200);
    expect(await roleIn(otherServerAdmin.id)).to.equal('Viewer');
    expect((await api(app, serverAdmin).delete(`/api/orgs/org_main/users/${otherServerAdmin.id}`)).status).to.equal(200);
    expect(await roleIn(otherServerAdmin.id)).to.equal(undefined);
  });
});
