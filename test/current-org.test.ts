import { expect } from 'chai';
import { startTestApp, TEST_DB, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  assignRole,
  auditEntries,
  buildOrgWithPeople,
  buildServiceAccount,
  buildToken,
  createUser,
  DENIED,
  EMPTY_ADDRESS,
  liveSessions,
  MEMBER_FIELDS,
  ORG_FIELDS,
  sessionCookie,
  setUsersQuota,
  type TestUser,
} from './helpers/factories.ts';

describe('the active org (/api/org)', () => {
  let app: TestApp;
  let root: TestUser;

  before(async () => {
    app = await startTestApp();
    root = await createUser(app, { svcAdmin: true, role: 'Admin', login: 'root-admin' });
  });
  after(async () => {
    await app.close();
  });

  const membership = (orgId: string, userId: string) => app.db('org_members').where({ org_id: orgId, user_id: userId }).first('role');

  describe('access', () => {
    // deniedTo: the member refused for want of the permission; none: every member is allowed
    const endpoints: Array<{ method: string; path: (userId: string) => string; body?: unknown; deniedTo: 'editor' | 'none' }> = [
      { method: 'GET', path: () => '/api/org', deniedTo: 'none' },
      { method: 'PUT', path: () => '/api/org', body: { name: 'Hijacked' }, deniedTo: 'editor' },
      { method: 'GET', path: () => '/api/org/users', deniedTo: 'editor' },
      { method: 'POST', path: () => '/api/org/users', body: { loginOrEmail: 'root-admin', role: 'Admin' }, deniedTo: 'editor' },
      { method: 'PATCH', path: (u) => `/api/org/users/${u}`, body: { role: 'Admin' }, deniedTo: 'editor' },
      { method: 'DELETE', path: (u) => `/api/org/users/${u}`, deniedTo: 'editor' },
      { method: 'GET', path: () => '/api/org/preferences', deniedTo: 'editor' },
      { method: 'PUT', path: () => '/api/org/preferences', body: { theme: 'light' }, deniedTo: 'editor' },
    ];

    for (const endpoint of endpoints) {
      const name = `${endpoint.method} ${endpoint.path('<userId>')}`;

      it(`${name} is 401 without credentials`, async () => {
        const { viewer } = await buildOrgWithPeople(app);
        const res = await app.request(endpoint.method, endpoint.path(viewer.id), { body: endpoint.body });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      it(`${name} is 403 for a member without the permission and for an admin naming an org they are not in`, async () => {
        const { orgId, editor, viewer } = await buildOrgWithPeople(app);
        const other = await buildOrgWithPeople(app);
        const auditsBefore = await app.count('audit_log', { outcome: 'success' });
        // GET /api/org/preferences is every member's: the Editor is denied only the others
        const denied = (endpoint.path('') === '/api/org/preferences' && endpoint.method === 'GET') || endpoint.deniedTo === 'none' ? [] : [editor];
        for (const user of denied) {
          const res = await app.request(endpoint.method, endpoint.path(viewer.id), { cookie: user.cookie, body: endpoint.body });
          expect(res.status, user.login).to.equal(403);
          expect(res.body.message).to.match(DENIED);
        }
        const res = await app.request(endpoint.method, endpoint.path(viewer.id), {
          cookie: other.admin.cookie,
          body: endpoint.body,
          headers: { 'x-svc-org-id': orgId },
        });
        expect(res.status).to.equal(403);
        expect(await app.count('audit_log', { outcome: 'success' })).to.equal(auditsBefore);
        expect(await membership(orgId, viewer.id)).to.deep.equal({ role: 'Viewer' });
        expect(await liveSessions(app, viewer.id)).to.equal(1);
      });
    }

    it('GET /api/org/preferences is 403 for a member whose org role is None', async () => {
      const { orgId } = await buildOrgWithPeople(app);
      const nobody = await createUser(app, { orgId, role: 'None' });
      expect((await api(app, nobody).get('/api/org/preferences')).status).to.equal(403);
    });

    it('a server admin who is not a member is 403 on /api/org… with the org named in X-Svc-Org-Id or ?orgId', async () => {
      const { orgId } = await buildOrgWithPeople(app);
      const outsider = await createUser(app, { svcAdmin: true, orgId: null });
      for (const path of ['/api/org', '/api/org/users', '/api/org/preferences']) {
        expect((await api(app, outsider, orgId).get(path)).status, path).to.equal(403);
        expect((await api(app, outsider).get(`${path}?orgId=${orgId}`)).status, path).to.equal(403);
      }
      expect((await api(app, outsider, orgId).put('/api/org', { name: 'Taken Over' })).status).to.equal(403);
      expect((await api(app, outsider, orgId).post('/api/org/users', { loginOrEmail: outsider.login, role: 'Admin' })).status).to.equal(403);
      expect(await membership(orgId, outsider.id)).to.equal(undefined);
    });

    it('a member holding fixed:org.users:reader lists the users; a header naming an unknown org is refused like a foreign one', async () => {
      const { orgId, viewer } = await buildOrgWithPeople(app);
      await assignRole(app, orgId, viewer.id, 'fixed:org.users:reader');
      expect((await api(app, viewer).get('/api/org/users')).status).to.equal(200);
      expect((await api(app, viewer).patch(`/api/org/users/${viewer.id}`, { role: 'Admin' })).status).to.equal(403);
      const res = await api(app, viewer, 'org_nowhere').get('/api/org/users');
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('user is not a member of org org_nowhere');
    });
  });

  describe('GET and PUT /api/org', () => {
    it('shows the active org: the default org, or the one named by header or query', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Active Org');
      await addMember(app, 'org_main', admin.id, 'Admin');
      const res = await api(app, admin).get('/api/org');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...ORG_FIELDS);
      expect(res.body).to.deep.equal({ id: orgId, name: 'Active Org', address: EMPTY_ADDRESS, billingEmail: '' });
      expect((await api(app, admin, 'org_main').get('/api/org')).body.id).to.equal('org_main');
      expect((await api(app, admin).get('/api/org?orgId=org_main')).body.id).to.equal('org_main');
    });

    it('every member reads its active org, whatever its role; that reads no other org, by id or by name, nor lists them', async () => {
      const { orgId, viewer } = await buildOrgWithPeople(app, 'Viewed Org');
      const nobody = await createUser(app, { orgId, role: 'None' });
      const other = await buildOrgWithPeople(app, 'Not Theirs');
      for (const member of [viewer, nobody]) {
        const res = await api(app, member).get('/api/org');
        expect(res.status, member.login).to.equal(200);
        expect(res.body).to.deep.equal({ id: orgId, name: 'Viewed Org', address: EMPTY_ADDRESS, billingEmail: '' });
        // org administration stays with the org's Admins and holders of orgs:read
        for (const path of [
          `/api/orgs/${orgId}`,
          '/api/orgs/name/Viewed%20Org',
          `/api/orgs/${other.orgId}`,
          '/api/orgs/name/Not%20Theirs',
          '/api/orgs',
          `/api/orgs/${orgId}/users`,
        ]) {
          const denied = await api(app, member).get(path);
          expect(denied.status, `${member.login} ${path}`).to.equal(403);
          expect(denied.body.message).to.match(DENIED);
        }
        const foreign = await api(app, member, other.orgId).get('/api/org');
        expect(foreign.status).to.equal(403);
        expect(foreign.body.message).to.equal(`user is not a member of org ${other.orgId}`);
      }
      expect((await api(app, viewer).put('/api/org', { name: 'Renamed By A Viewer' })).status).to.equal(403);
    });

    it('changes the active org and audits it', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Put Org');
      const res = await api(app, admin).put('/api/org', { name: 'Put Org Renamed', address: { country: 'NZ' }, billingEmail: 'pay@example.test' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ id: orgId, name: 'Put Org Renamed', address: { ...EMPTY_ADDRESS, country: 'NZ' }, billingEmail: 'pay@example.test' });
      const row = await app.db('orgs').where('id', orgId).first();
      expect(row).to.include({ name: 'Put Org Renamed', billing_email: 'pay@example.test' });
      const [entry] = await auditEntries(app, { action: 'org.updated', target_id: orgId });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_name: 'Put Org Renamed', outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ fields: ['address', 'billingEmail', 'name'], previousName: 'Put Org' });
    });

    it('is 400 on bad input and 409 on a taken name', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Strict Org');
      for (const body of [{}, { name: ' ' }, { billingEmail: 'x' }, { address: { street: 'Main' } }, { name: ['a'] }]) {
        expect((await api(app, admin).put('/api/org', body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await app.request('PUT', '/api/org', { cookie: admin.cookie })).status).to.equal(400);
      const res = await api(app, admin).put('/api/org', { name: 'main org.' });
      expect(res.status).to.equal(409);
      expect((await app.db('orgs').where('id', orgId).first('name')).name).to.equal('Strict Org');
    });
  });

  describe('/api/org/users', () => {
    it('lists the people of the active org, service accounts excluded, by login', async () => {
      const { orgId, admin, editor, viewer } = await buildOrgWithPeople(app);
      await buildToken(app, await buildServiceAccount(app, { orgId, role: 'Admin' }));
      const res = await api(app, admin).get('/api/org/users');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalCount: 3, page: 1, perPage: 100 });
      expect(res.body.orgUsers.map((m: { userId: string }) => m.userId).sort()).to.deep.equal([admin.id, editor.id, viewer.id].sort());
      for (const member of res.body.orgUsers) expect(member).to.have.all.keys(...MEMBER_FIELDS);
      const logins = res.body.orgUsers.map((m: { login: string }) => m.login);
      expect(logins).to.deep.equal([...logins].sort());
      expect(res.body.orgUsers.find((m: { userId: string }) => m.userId === editor.id)).to.include({
        login: editor.login,
        email: editor.email,
        name: editor.login,
        role: 'Editor',
      });
    });

    it('invites an existing user by login or email into the active org', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Invite Org');
      const invitee = await createUser(app);
      const res = await api(app, admin).post('/api/org/users', { loginOrEmail: invitee.email, role: 'Viewer' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user added to the org', userId: invitee.id });
      expect(await membership(orgId, invitee.id)).to.deep.equal({ role: 'Viewer' });
      const [entry] = await auditEntries(app, { action: 'org.member_added', target_id: invitee.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, outcome: 'success' });

      expect((await api(app, admin).post('/api/org/users', { loginOrEmail: invitee.login, role: 'Admin' })).status).to.equal(409);
      expect((await api(app, admin).post('/api/org/users', { loginOrEmail: 'ghost', role: 'Viewer' })).status).to.equal(404);
      expect((await api(app, admin).post('/api/org/users', { loginOrEmail: 'ghost' })).status).to.equal(400);
      expect((await api(app, admin).post('/api/org/users', { loginOrEmail: '', role: 'Viewer' })).status).to.equal(400);
    });

    it('enforces the users quota of the active org', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      await setUsersQuota(app, orgId, 3);
      const invitee = await createUser(app);
      const res = await api(app, admin).post('/api/org/users', { loginOrEmail: invitee.login, role: 'Viewer' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('quota exceeded for users: the limit is 3');
      expect(await membership(orgId, invitee.id)).to.equal(undefined);
    });

    it('a Viewer promoted to Admin is an admin at the next request, once they log in again', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app);
      expect((await api(app, viewer).get('/api/org/users')).status).to.equal(403);
      const res = await api(app, admin).patch(`/api/org/users/${viewer.id}`, { role: 'Admin' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'org user updated' });
      expect(await membership(orgId, viewer.id)).to.deep.equal({ role: 'Admin' });
      // the role change ended the sessions the user had
      const stale = await api(app, viewer).get('/api/org/users');
      expect(stale.status).to.equal(401);
      expect(await liveSessions(app, viewer.id)).to.equal(0);
      const [revoked] = await auditEntries(app, { action: 'session.revoked', target_id: viewer.id });
      expect(revoked!.metadata).to.deep.equal({ count: 1, reason: 'org role changed' });
      const fresh = { cookie: await sessionCookie(app, viewer.id) };
      expect((await api(app, fresh).get('/api/org/users')).status).to.equal(200);
      expect((await api(app, fresh).put('/api/org', { billingEmail: 'new-admin@example.test' })).status).to.equal(200);
      const [entry] = await auditEntries(app, { action: 'org.member_role_changed', target_id: viewer.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, outcome: 'success' });
      expect(entry!.metadata).to.deep.include({ from: 'Viewer', to: 'Admin' });
    });

    it('an Admin demoted to Viewer loses the admin endpoints at once', async () => {
      const { admin } = await buildOrgWithPeople(app);
      const second = await createUser(app, { orgId: (await app.db('users').where('id', admin.id).first('default_org_id')).default_org_id, role: 'Admin' });
      expect((await api(app, second).patch(`/api/org/users/${admin.id}`, { role: 'Viewer' })).status).to.equal(200);
      const fresh = { cookie: await sessionCookie(app, admin.id) };
      expect((await api(app, fresh).get('/api/org/users')).status).to.equal(403);
      expect((await api(app, fresh).get('/api/org/preferences')).status).to.equal(200);
    });

    it('refuses to demote or remove the last Admin, also oneself', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      const demote = await api(app, admin).patch(`/api/org/users/${admin.id}`, { role: 'None' });
      expect(demote.status).to.equal(400);
      expect(demote.body.message).to.match(/last Admin/);
      const remove = await api(app, admin).delete(`/api/org/users/${admin.id}`);
      expect(remove.status).to.equal(400);
      expect(await membership(orgId, admin.id)).to.deep.equal({ role: 'Admin' });
    });

    it('keeps an Admin when two Admins demote each other at the same moment', async function () {
      // each round builds an org of people (a password hash each): minutes on a loaded machine
      this.timeout(120_000);
      const rounds = TEST_DB === 'mysql' ? 5 : 2;
      for (let round = 0; round < rounds; round++) {
        const { orgId, admin } = await buildOrgWithPeople(app);
        const second = await createUser(app, { orgId, role: 'Admin' });
        const results = await Promise.all([
          api(app, admin).patch(`/api/org/users/${second.id}`, { role: 'Viewer' }),
          api(app, second).patch(`/api/org/users/${admin.id}`, { role: 'Viewer' }),
        ]);
        const admins = await app.count('org_members', { org_id: orgId, role: 'Admin' });
        expect(admins, JSON.stringify(results.map((r) => [r.status, r.body]))).to.equal(1);
        expect(results.filter((r) => r.status === 200)).to.have.length(1);
        for (const res of results.filter((r) => r.status !== 200)) expect(res.status).to.be.oneOf([400, 401, 403]);
      }
    });

    it('is 404 for a user who is not a member of the active org, 400 for a bad role', async () => {
      const { admin } = await buildOrgWithPeople(app);
      const stranger = await createUser(app);
      expect((await api(app, admin).patch(`/api/org/users/${stranger.id}`, { role: 'Viewer' })).status).to.equal(404);
      expect((await api(app, admin).delete(`/api/org/users/${stranger.id}`)).status).to.equal(404);
      expect((await api(app, admin).patch(`/api/org/users/${stranger.id}`, { role: 'Superuser' })).status).to.equal(400);
      expect((await api(app, admin).patch(`/api/org/users/${stranger.id}`)).status).to.equal(400);
      expect(await membership('org_main', stranger.id)).to.deep.equal({ role: 'Viewer' });
    });

    it('removing a user from their only org leaves them "not a member of any org"', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app, 'Only Org');
      const res = await api(app, admin).delete(`/api/org/users/${viewer.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user removed from the org' });
      expect(await membership(orgId, viewer.id)).to.equal(undefined);
      expect((await app.db('users').where('id', viewer.id).first('default_org_id')).default_org_id).to.equal(null);
      expect(await liveSessions(app, viewer.id)).to.equal(0);
      const [entry] = await auditEntries(app, { action: 'org.member_removed', target_id: viewer.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_name: viewer.login, outcome: 'success' });

      const fresh = { cookie: await sessionCookie(app, viewer.id) };
      for (const path of ['/api/org', '/api/org/users', '/api/org/preferences']) {
        const denied = await api(app, fresh).get(path);
        expect(denied.status, path).to.equal(403);
        expect(denied.body.message).to.equal('user is not a member of any org');
      }
      // naming the org they left is refused as for any org they are not in
      const left = await api(app, fresh, orgId).get('/api/org/preferences');
      expect(left.status).to.equal(403);
      expect(left.body.message).to.equal(`user is not a member of org ${orgId}`);
    });
  });

  describe('GET /api/org/users/lookup', () => {
    it('finds members of the active org by login, email or name for whoever may read the org users, up to limit', async () => {
      const { orgId, admin, editor, viewer } = await buildOrgWithPeople(app);
      const picked = await createUser(app, { orgId, login: 'lookup-ada', name: 'Ada Picked', email: 'ada.lookup@example.test' });
      await createUser(app, { orgId, login: 'lookup-bob', name: 'Bob Picked' });
      await createUser(app, { login: 'lookup-outsider', name: 'Not In The Org' });
      await buildToken(app, await buildServiceAccount(app, { orgId, role: 'Admin' }));

      const res = await api(app, admin).get('/api/org/users/lookup?query=LOOKUP-');
      expect(res.status).to.equal(200);
      expect(res.body.map((u: { login: string }) => u.login)).to.deep.equal(['lookup-ada', 'lookup-bob']);
      expect(res.body[0]).to.have.all.keys('userId', 'login', 'name', 'avatarUrl');
      expect(res.body[0]).to.include({ userId: picked.id, login: 'lookup-ada', name: 'Ada Picked' });
      expect(res.body[0].avatarUrl).to.match(/^https:\/\/secure\.gravatar\.com\/avatar\//);
      expect((await api(app, admin).get('/api/org/users/lookup?query=ada.lookup%40')).body.map((u: { userId: string }) => u.userId)).to.deep.equal([picked.id]);
      expect((await api(app, admin).get('/api/org/users/lookup?query=picked&limit=1')).body).to.have.length(1);
      expect((await api(app, admin).get('/api/org/users/lookup?query=outsider')).body).to.deep.equal([]);
      // no query: the first members by login, at most the default limit
      expect((await api(app, admin).get('/api/org/users/lookup')).body).to.have.length(5);

      await assignRole(app, orgId, viewer.id, 'fixed:org.users:reader');
      expect((await api(app, viewer).get('/api/org/users/lookup?query=ada')).status).to.equal(200);
      const denied = await api(app, editor).get('/api/org/users/lookup?query=ada');
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
      expect((await app.request('GET', '/api/org/users/lookup')).status).to.equal(401);
      for (const bad of ['limit=0', 'limit=101', 'limit=many', 'perpage=2']) {
        expect((await api(app, admin).get(`/api/org/users/lookup?${bad}`)).status, bad).to.equal(400);
      }
    });
  });

  describe('/api/org/preferences', () => {
    it('every member reads the preferences of the active org; an admin changes them', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app, 'Prefs Org');
      const empty = await api(app, viewer).get('/api/org/preferences');
      expect(empty.status).to.equal(200);
      expect(empty.body).to.deep.equal({ homeDashboardUid: '', timezone: '', theme: '' });

      const res = await api(app, admin).put('/api/org/preferences', { homeDashboardUid: 'home-1', timezone: 'Europe/Paris', theme: 'light' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ homeDashboardUid: 'home-1', timezone: 'Europe/Paris', theme: 'light' });
      const row = await app.db('preferences').where({ owner_kind: 'org', owner_id: orgId }).first();
      expect(row).to.include({ home_dashboard_uid: 'home-1', timezone: 'Europe/Paris', theme: 'light' });
      expect((await api(app, viewer).get('/api/org/preferences')).body).to.deep.equal(res.body);
      const [entry] = await auditEntries(app, { action: 'org.preferences_updated', org_id: orgId });
      expect(entry).to.include({ actor_id: admin.id, target_type: 'org', target_id: orgId, target_name: 'Prefs Org', outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ fields: ['homeDashboardUid', 'theme', 'timezone'] });

      // PUT replaces: what is left out goes back to its default
      expect((await api(app, admin).put('/api/org/preferences', { theme: 'dark' })).body).to.deep.equal({ homeDashboardUid: '', timezone: '', theme: 'dark' });
      // another org's preferences are its own
      expect((await api(app, root, 'org_main').get('/api/org/preferences')).body.theme).to.equal('');
    });

    it('is 400 on bad input', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      for (const body of [{ theme: 'blue' }, { timezone: 5 }, { homeDashboardUid: 'x'.repeat(41) }, { language: 'fr' }]) {
        expect((await api(app, admin).put('/api/org/preferences', body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(await app.count('preferences', { owner_kind: 'org', owner_id: orgId })).to.equal(0);
    });
  });
});
