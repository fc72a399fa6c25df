/** Who holds a role (`GET /api/access-control/roles/:roleUid/assignments`): users, teams and service accounts of the active org. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, api, buildOrgWithPeople, buildRole, buildServiceAccount, buildTeam, createUser, DENIED, type TestUser } from './helpers/factories.ts';

const path = (uid: string) => `/api/access-control/roles/${encodeURIComponent(uid)}/assignments`;

describe('role holders (GET /api/access-control/roles/:roleUid/assignments)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app.close();
  });

  /** A custom role of org_main (or a global one, made by the server admin); returns its uid. */
  async function customRole(global = false): Promise<string> {
    const body = buildRole(global ? { global: true } : {});
    const res = await api(app, global ? serverAdmin : orgAdmin).post('/api/access-control/roles', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return body.uid;
  }

  const holders = (uid: string, as: TestUser = orgAdmin, orgId?: string) => api(app, as, orgId).get(path(uid));
  const sortedById = <T>(items: T[], id: (item: T) => string) => [...items].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));

  it('is 401 without a session', async () => {
    const uid = await customRole();
    const res = await app.request('GET', path(uid));
    expect(res.status).to.equal(401);
    expect(res.body).to.have.property('message').that.is.a('string');
  });

  it('is 403 for an Editor and a Viewer, who may not read role assignments', async () => {
    const uid = await customRole();
    for (const user of [editor, viewer]) {
      const res = await holders(uid, user);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(DENIED);
    }
  });

  it('answers a custom role held by a user (in the org and globally), a team and a service account, each sorted by id', async () => {
    const uid = await customRole(true);
    const [a, b] = [await createUser(app, { role: 'Viewer', name: 'Ann Holder' }), await createUser(app, { role: 'Editor' })];
    const team = await buildTeam(app, { name: 'Role Holders' });
    const account = await buildServiceAccount(app, { name: 'holder robot' });
    expect((await api(app, orgAdmin).post(`/api/access-control/users/${a.id}/roles`, { roleUid: uid })).status).to.equal(200);
    expect((await api(app, serverAdmin).post(`/api/access-control/users/${b.id}/roles`, { roleUid: uid, global: true })).status).to.equal(200);
    expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team.id}/roles`, { roleUid: uid })).status).to.equal(200);
    expect((await api(app, orgAdmin).post(`/api/access-control/users/${account.id}/roles`, { roleUid: uid })).status).to.equal(200);

    const res = await holders(uid);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      roleUid: uid,
      users: sortedById(
        [
          { userId: a.id, login: a.login, name: 'Ann Holder', global: false },
          { userId: b.id, login: b.login, name: b.login, global: true },
        ],
        (u) => u.userId,
      ),
      teams: [{ teamId: team.id, name: 'Role Holders' }],
      serviceAccounts: [{ serviceAccountId: account.id, name: 'holder robot', global: false }],
    });
  });

  it('lists a user with an org and a global assignment of the role twice, the org one first', async () => {
    const uid = await customRole(true);
    const user = await createUser(app, { role: 'Viewer' });
    expect((await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: uid })).status).to.equal(200);
    expect((await api(app, serverAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: uid, global: true })).status).to.equal(200);
    const res = await holders(uid);
    expect(res.status).to.equal(200);
    expect(res.body.users).to.deep.equal([
      { userId: user.id, login: user.login, name: user.login, global: false },
      { userId: user.id, login: user.login, name: user.login, global: true },
    ]);
  });

  it('no longer lists a holder once the role is unassigned', async () => {
    const uid = await customRole(true);
    const user = await createUser(app, { role: 'Viewer' });
    const globalHolder = await createUser(app, { role: 'Viewer' });
    const team = await buildTeam(app);
    const account = await buildServiceAccount(app);
    await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: uid });
    await api(app, serverAdmin).post(`/api/access-control/users/${globalHolder.id}/roles`, { roleUid: uid, global: true });
    await api(app, orgAdmin).post(`/api/access-control/teams/${team.id}/roles`, { roleUid: uid });
    await api(app, orgAdmin).post(`/api/access-control/users/${account.id}/roles`, { roleUid: uid });
    const before = (await holders(uid)).body;
    expect([before.users.length, before.teams.length, before.serviceAccounts.length]).to.deep.equal([2, 1, 1]);

    const unassign = (url: string, as = orgAdmin) => api(app, as).delete(url);
    expect((await unassign(`/api/access-control/users/${user.id}/roles/${encodeURIComponent(uid)}`)).status).to.equal(200);
    expect((await unassign(`/api/access-control/users/${globalHolder.id}/roles/${encodeURIComponent(uid)}?global=true`, serverAdmin)).status).to.equal(200);
    expect((await unassign(`/api/access-control/teams/${team.id}/roles/${encodeURIComponent(uid)}`)).status).to.equal(200);
    expect((await unassign(`/api/access-control/users/${account.id}/roles/${encodeURIComponent(uid)}`)).status).to.equal(200);
    const res = await holders(uid);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ roleUid: uid, users: [], teams: [], serviceAccounts: [] });
  });

  it('answers the holders of a fixed role; a holder of fixed:roles:reader alone may read them', async () => {
    const reader = await createUser(app, { role: 'Viewer' });
    const res0 = await holders('fixed:roles:reader', reader);
    expect(res0.status).to.equal(403);
    expect((await api(app, orgAdmin).post(`/api/access-control/users/${reader.id}/roles`, { roleUid: 'fixed:roles:reader' })).status).to.equal(200);

    const res = await holders('fixed:roles:reader', reader);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      roleUid: 'fixed:roles:reader',
      users: [{ userId: reader.id, login: reader.login, name: reader.login, global: false }],
      teams: [],
      serviceAccounts: [],
    });
  });

  it('answers no holders for a basic role, which comes with the org role rather than by assignment', async () => {
    const res = await holders('basic:viewer');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ roleUid: 'basic:viewer', users: [], teams: [], serviceAccounts: [] });
  });

  it('keeps to the active org: holders elsewhere are left out, and another org’s custom role is 404', async () => {
    const other = await buildOrgWithPeople(app);
    const globalUid = await customRole(true);
    const otherTeam = await buildTeam(app, { orgId: other.orgId });
    const inMain = await createUser(app, { role: 'Viewer' });
    await api(app, other.admin, other.orgId).post(`/api/access-control/users/${other.viewer.id}/roles`, { roleUid: globalUid });
    await api(app, other.admin, other.orgId).post(`/api/access-control/teams/${otherTeam.id}/roles`, { roleUid: globalUid });
    // a global assignment holds in the orgs its user is a member of
    await api(app, serverAdmin).post(`/api/access-control/users/${other.editor.id}/roles`, { roleUid: globalUid, global: true });
    await api(app, orgAdmin).post(`/api/access-control/users/${inMain.id}/roles`, { roleUid: globalUid });

    const main = await holders(globalUid);
    expect(main.status).to.equal(200);
    expect(main.body).to.deep.equal({
      roleUid: globalUid,
      users: [{ userId: inMain.id, login: inMain.login, name: inMain.login, global: false }],
      teams: [],
      serviceAccounts: [],
    });
    const there = await holders(globalUid, other.admin, other.orgId);
    expect(there.status).to.equal(200);
    expect(there.body.users).to.deep.equal(
      sortedById(
        [
          { userId: other.viewer.id, login: other.viewer.login, name: other.viewer.login, global: false },
          { userId: other.editor.id, login: other.editor.login, name: other.editor.login, global: true },
        ],
        (u) => u.userId,
      ),
    );
    expect(there.body.teams).to.deep.equal([{ teamId: otherTeam.id, name: otherTeam.name }]);

    // once the editor joins org_main, its global assignment holds there too
    await addMember(app, 'org_main', other.editor.id, 'Viewer');
    expect((await holders(globalUid)).body.users).to.deep.include({
      userId: other.editor.id,
      login: other.editor.login,
      name: other.editor.login,
      global: true,
    });

    const theirs = buildRole();
    expect((await api(app, other.admin, other.orgId).post('/api/access-control/roles', theirs)).status).to.equal(201);
    const res = await holders(theirs.uid);
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ message: `role ${theirs.uid} not found` });
  });

  it('answers 404 {message} on an unknown role', async () => {
    const res = await holders('custom:nobody-has-this');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ message: 'role custom:nobody-has-this not found' });
  });

  it('answers bad input with a clear 4xx {message}, never a 500', async () => {
    const long = await holders(`custom:${'x'.repeat(300)}`);
    expect(long.status).to.equal(400);
    expect(long.body.message)
      .to.be.a('string')
      .and.match(/roleUid/);
    for (const uid of ['custom:%', 'custom:a b', "custom:'; drop table roles; --", 'fixed:', 'ünïcode:role']) {
      const res = await holders(uid);
      expect(res.status, uid).to.equal(404);
      expect(res.body, uid).to.deep.equal({ message: `role ${uid} not found` });
    }
  });
});
