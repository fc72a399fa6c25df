/**
 * Attacks on SCIM provisioning: each proves that no account the org did not provision through
 * SCIM is found, linked, changed or taken over, whatever a token sends (CVE-2025-41115: a numeric
 * externalId taken for an internal user id).
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createOrg, createUser, DEFAULT_PASSWORD, passwordLogin, type TestUser } from './helpers/factories.ts';
import { buildScimClient, patchOf, scimUserBody, type ScimClient } from './helpers/scim.ts';

describe('SCIM attacks', () => {
  let app: TestApp;
  let scim: ScimClient;
  let admin: TestUser;
  let serverAdmin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    serverAdmin = await createUser(app, { role: 'Admin', svcAdmin: true });
    scim = await buildScimClient(app);
  });
  after(async () => {
    await app.close();
  });

  /** What must not change of an account SCIM did not provision. */
  const snapshot = async (userId: string) => {
    const row = await app.db('users').where('id', userId).first('login', 'email', 'name', 'password_hash', 'is_svc_admin', 'is_disabled');
    const membership = await app.db('org_members').where('user_id', userId).orderBy('org_id').select('org_id', 'role');
    const links = await app.count('scim_users', { user_id: userId });
    return { row: { ...row, is_svc_admin: !!row.is_svc_admin, is_disabled: !!row.is_disabled }, membership, links };
  };

  const listIds = async (client: ScimClient, filter: string) => {
    const res = await client.get(`/Users?filter=${encodeURIComponent(filter)}`);
    return { status: res.status, ids: res.status === 200 ? (res.body.Resources as Array<{ id: string }>).map((r) => r.id) : [], body: res.body };
  };

  it('a numeric externalId equal to an admin id (or the id itself) never reaches the admin', async () => {
    const before = await snapshot(serverAdmin.id);
    const numericId = serverAdmin.id.replace(/\D/g, '') || '1';
    for (const externalId of [serverAdmin.id, numericId, '1', admin.id]) {
      const created = await scim.post('/Users', scimUserBody({ externalId }));
      if (externalId === admin.id && created.status === 409) continue;
      expect(created.status, externalId).to.equal(201);
      expect(created.body.id).not.to.equal(serverAdmin.id).and.not.to.equal(admin.id);
      const found = await listIds(scim, `externalId eq "${externalId}"`);
      expect(found.ids).to.deep.equal([created.body.id]);
    }
    expect((await scim.post('/Users', scimUserBody({ externalId: 1 }))).status).to.equal(400);
    expect((await listIds(scim, `externalId eq ${numericId || 1}`)).status).to.equal(400);
    // the internal id as the SCIM id: not a user of this org's SCIM
    for (const target of [serverAdmin.id, admin.id]) {
      expect((await scim.get(`/Users/${target}`)).status).to.equal(404);
      expect((await scim.patch(`/Users/${target}`, patchOf({ op: 'replace', path: 'active', value: false }))).status).to.equal(404);
      expect((await scim.patch(`/Users/${target}`, patchOf({ op: 'replace', value: { emails: [{ value: 'attacker@evil.example' }] } }))).status).to.equal(404);
      expect((await scim.put(`/Users/${target}`, scimUserBody({ userName: 'taken-over' }))).status).to.equal(404);
      expect((await scim.delete(`/Users/${target}`)).status).to.equal(404);
    }
    expect(await snapshot(serverAdmin.id)).to.deep.equal(before);
    expect((await passwordLogin(app, serverAdmin.login, DEFAULT_PASSWORD)).status).to.equal(200);
  });

  it('a colliding externalId is refused with 409 uniqueness and never moves to another user', async () => {
    const first = await scim.post('/Users', scimUserBody({ externalId: 'ext-collide' }));
    const second = await scim.post('/Users', scimUserBody({ externalId: 'ext-other' }));
    const again = await scim.post('/Users', scimUserBody({ externalId: 'ext-collide' }));
    expect(again.status).to.equal(409);
    expect(again.body).to.include({ status: '409', scimType: 'uniqueness' });
    const moved = await scim.patch(`/Users/${second.body.id}`, patchOf({ op: 'replace', path: 'externalId', value: 'ext-collide' }));
    expect(moved.status).to.equal(409);
    const put = await scim.put(`/Users/${second.body.id}`, scimUserBody({ userName: second.body.userName, externalId: 'ext-collide' }));
    expect(put.status).to.equal(409);
    expect((await listIds(scim, 'externalId eq "ext-collide"')).ids).to.deep.equal([first.body.id]);
    expect(await app.db('scim_users').where('user_id', second.body.id).first('external_id')).to.deep.equal({ external_id: 'ext-other' });
  });

  it('a userName or email of an existing local admin is 409 uniqueness, never a link to the account', async () => {
    const before = await snapshot(serverAdmin.id);
    for (const overrides of [
      { userName: serverAdmin.login },
      { userName: serverAdmin.login.toUpperCase() },
      { userName: serverAdmin.email },
      { emails: [{ value: serverAdmin.email, primary: true }] },
      { emails: [{ value: serverAdmin.email.toUpperCase() }] },
      { userName: admin.login, externalId: serverAdmin.id },
    ]) {
      const res = await scim.post('/Users', scimUserBody(overrides));
      expect(res.status, JSON.stringify(overrides)).to.equal(409);
      expect(res.body).to.include({ scimType: 'uniqueness' });
    }
    // nor can a SCIM user be renamed onto the admin
    const own = await scim.post('/Users', scimUserBody());
    for (const op of [
      { op: 'replace', path: 'userName', value: serverAdmin.login },
      { op: 'replace', path: 'emails[type eq "work"].value', value: serverAdmin.email },
      { op: 'replace', value: { userName: serverAdmin.email } },
    ]) {
      const res = await scim.patch(`/Users/${own.body.id}`, patchOf(op));
      expect(res.status, JSON.stringify(op)).to.equal(409);
    }
    expect(await snapshot(serverAdmin.id)).to.deep.equal(before);
    expect(await app.count('scim_users', { user_id: admin.id })).to.equal(0);
  });

  it('a SCIM user cannot be made server admin, neither through SCIM nor by the admin API', async () => {
    const created = await scim.post(
      '/Users',
      scimUserBody({
        roles: [{ value: 'Admin', primary: true }],
        isSvcAdmin: true,
        isGrafanaAdmin: true,
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: '1', manager: { value: serverAdmin.id } },
      }),
    );
    expect(created.status).to.equal(201);
    const id = created.body.id as string;
    await scim.patch(`/Users/${id}`, patchOf({ op: 'add', value: { roles: [{ value: 'ServerAdmin' }], is_svc_admin: true } }));
    const row = await app.db('users').where('id', id).first('is_svc_admin');
    expect(!!row.is_svc_admin).to.equal(false);
    expect(await app.db('org_members').where('user_id', id).select('org_id', 'role')).to.deep.equal([{ org_id: 'org_main', role: 'Viewer' }]);
    const promote = await api(app, serverAdmin).post(`/api/admin/users/${id}/permissions`, { isSvcAdmin: true });
    expect(promote.status).to.equal(400);
    expect(promote.body.message).to.equal('a user provisioned through SCIM cannot be a server admin');
    expect(!!(await app.db('users').where('id', id).first('is_svc_admin')).is_svc_admin).to.equal(false);
  });

  it('a token of another org sees and changes nothing of this org', async () => {
    const ours = await scim.post('/Users', scimUserBody({ externalId: 'shared-ext' }));
    const group = await scim.post('/Groups', { displayName: `Ours ${Date.now()}`, members: [{ value: ours.body.id }] });
    const otherOrg = await createOrg(app);
    const theirs = await buildScimClient(app, otherOrg);
    const before = await snapshot(ours.body.id);
    expect((await theirs.get('/Users')).body).to.include({ totalResults: 0 });
    expect((await theirs.get('/Groups')).body).to.include({ totalResults: 0 });
    expect((await listIds(theirs, 'externalId eq "shared-ext" or userName pr')).ids).to.deep.equal([]);
    expect((await theirs.get(`/Users/${ours.body.id}`)).status).to.equal(404);
    expect((await theirs.patch(`/Users/${ours.body.id}`, patchOf({ op: 'replace', path: 'active', value: false }))).status).to.equal(404);
    expect((await theirs.delete(`/Users/${ours.body.id}`)).status).to.equal(404);
    expect((await theirs.get(`/Groups/${group.body.id}`)).status).to.equal(404);
    expect((await theirs.patch(`/Groups/${group.body.id}`, patchOf({ op: 'remove', path: 'members' }))).status).to.equal(404);
    expect((await theirs.delete(`/Groups/${group.body.id}`)).status).to.equal(404);
    // its own group cannot take our user as a member, and its own user with our externalId is another account
    const theirGroup = await theirs.post('/Groups', { displayName: 'Theirs' });
    const add = await theirs.patch(`/Groups/${theirGroup.body.id}`, patchOf({ op: 'add', path: 'members', value: [{ value: ours.body.id }] }));
    expect(add.status).to.equal(400);
    const twin = await theirs.post('/Users', scimUserBody({ externalId: 'shared-ext' }));
    expect(twin.status).to.equal(201);
    expect(twin.body.id).not.to.equal(ours.body.id);
    // naming our org is refused before anything is read
    const crossed = await theirs.get('/Users', { 'x-svc-org-id': 'org_main' });
    expect(crossed.status).to.equal(403);
    expect(await snapshot(ours.body.id)).to.deep.equal(before);
    expect(await app.count('team_members', { team_id: group.body.id as string, user_id: ours.body.id as string })).to.equal(1);
  });

  it("filter injection: quotes, SQL metacharacters and or tricks match only what they say, among this org's SCIM users", async () => {
    const tag = `inj${Date.now().toString(36)}`;
    const plain = await scim.post('/Users', scimUserBody({ userName: `${tag}@corp.example`, externalId: `${tag}-x` }));
    const percent = await scim.post('/Users', scimUserBody({ userName: `${tag}_100@corp.example`, displayName: `100% ${tag}` }));
    const quoted = await scim.post('/Users', scimUserBody({ externalId: `${tag} "quoted" ' --` }));
    const stranger = await createUser(app, { role: 'Admin' });
    const people = [admin.id, serverAdmin.id, stranger.id];
    const cases: Array<[string, string[]]> = [
      [`userName eq "x\\" or \\"1\\"=\\"1"`, []],
      [`userName eq "' OR '1'='1"`, []],
      [`userName eq "${tag}@corp.example' --"`, []],
      [`userName eq "${tag}@corp.example\\"); DROP TABLE users; --"`, []],
      [`externalId eq "${tag} \\"quoted\\" ' --"`, [quoted.body.id]],
      [`displayName co "%"`, [percent.body.id]],
      [`userName sw "${tag}_"`, [percent.body.id]],
      [`userName co "${tag}!"`, []],
      [`userName eq "${admin.login}" or userName eq "${serverAdmin.login}"`, []],
      [`emails.value eq "${serverAdmin.email}"`, []],
      [`externalId eq "${stranger.id}"`, []],
      [`userName eq "${stranger.login}" or emails.value eq "${stranger.email}"`, []],
    ];
    for (const [filter, expected] of cases) {
      const found = await listIds(scim, filter);
      expect(found.status, `${filter}: ${JSON.stringify(found.body)}`).to.equal(200);
      expect(found.ids.sort(), filter).to.deep.equal([...expected].sort());
    }
    const everyone = await listIds(scim, `userName pr or userName eq "x" or externalId pr`);
    expect(everyone.ids).to.include(plain.body.id);
    expect(everyone.ids.filter((id) => people.includes(id) || id === scim.accountId)).to.deep.equal([]);
    for (const filter of [
      `userName eq "a" or 1 eq 1`,
      `userName eq "a"; DROP TABLE users`,
      `userName eq "a" or password pr`,
      `(userName eq "a"`,
      `u.login eq "x"`,
      `userName) or (1=1`,
    ]) {
      const res = await listIds(scim, filter);
      expect(res.status, filter).to.equal(400);
      expect(res.body.scimType, filter).to.equal('invalidFilter');
    }
    expect(await app.count('users', { id: admin.id })).to.equal(1);
  });
});
