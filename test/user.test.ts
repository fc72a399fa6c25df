import { expect } from 'chai';
import { addMember, api, createOrg, createUser, signInAgain } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const USER_FIELDS = ['id', 'email', 'login', 'name', 'theme', 'orgId', 'isSvcAdmin', 'orgs', 'authLabels', 'isDisabled', 'avatarUrl'];

describe('current user', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  describe('GET /api/user', () => {
    it('is 401 without a session', async () => {
      const res = await app.request('GET', '/api/user');
      expect(res.status).to.equal(401);
      expect(res.body.message).to.be.a('string');
    });

    it('shows exactly the spec fields of a plain viewer, orgs with roles', async () => {
      const viewer = await createUser(app, { role: 'Viewer', name: 'Vera' });
      const res = await app.request('GET', '/api/user', { cookie: viewer.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...USER_FIELDS);
      expect(res.body).to.include({ id: viewer.id, login: viewer.login, name: 'Vera', orgId: 'org_main', isSvcAdmin: false, isDisabled: false });
      expect(res.body.orgs).to.deep.equal([{ orgId: 'org_main', name: 'Main Org.', role: 'Viewer' }]);
      expect(res.body.authLabels).to.deep.equal([]);
    });

    it('works for a user who belongs to no org', async () => {
      const loner = await createUser(app, { orgId: null });
      const res = await app.request('GET', '/api/user', { cookie: loner.cookie });
      expect(res.status).to.equal(200);
      expect(res.body.orgs).to.deep.equal([]);
    });

    it('is 401 for a disabled user', async () => {
      const disabled = await createUser(app, { disabled: true });
      expect((await app.request('GET', '/api/user', { cookie: disabled.cookie })).status).to.equal(401);
    });
  });

  describe('GET /api/user/permissions', () => {
    it('is 401 without a session', async () => {
      expect((await app.request('GET', '/api/user/permissions')).status).to.equal(401);
    });

    it('maps each action to its scopes for the active org', async () => {
      const viewer = await createUser(app, { role: 'Viewer' });
      const res = await app.request('GET', '/api/user/permissions', { cookie: viewer.cookie });
      expect(res.status).to.equal(200);
      expect(res.body['dashboards:read']).to.include('dashboards:*');
      expect(res.body['connectors:read']).to.deep.equal(['connectors:*']);
      // a Viewer queries the connectors that grant Viewer, one by one, not every connector
      expect(res.body['connectors:query'] ?? []).not.to.include('connectors:*');
      expect(res.body['users:read']).to.deep.equal([`users:id:${viewer.id}`]);
      expect(res.body).not.to.have.property('dashboards:write');
    });

    it('sees a committed role change at the next request', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      const before = await app.request('GET', '/api/user/permissions', { cookie: user.cookie });
      expect(before.body).not.to.have.property('dashboards:write');
      const admin = await createUser(app, { role: 'Admin' });
      expect((await api(app, admin).patch(`/api/org/users/${user.id}`, { role: 'Editor' })).status).to.equal(200);
      // A change of org role ends the user's sessions: the next request comes from a new one.
      const after = await api(app, await signInAgain(app, user)).get('/api/user/permissions');
      expect(after.body['dashboards:write']).to.include('dashboards:*');
    });

    it('follows X-Svc-Org-Id, then ?orgId, then the default org', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      const other = await createOrg(app);
      await addMember(app, other, user.id, 'Admin');
      const byHeader = await app.request('GET', '/api/user/permissions?orgId=org_main', { cookie: user.cookie, headers: { 'X-Svc-Org-Id': other } });
      expect(byHeader.body).to.have.property('org.users:add');
      const byQuery = await app.request(`GET`, `/api/user/permissions?orgId=${other}`, { cookie: user.cookie });
      expect(byQuery.body).to.have.property('org.users:add');
      const byDefault = await app.request('GET', '/api/user/permissions', { cookie: user.cookie });
      expect(byDefault.body).not.to.have.property('org.users:add');
    });

    it('is 403 in an org the caller does not belong to, a server admin included', async () => {
      const other = await createOrg(app);
      const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
      const res = await app.request('GET', '/api/user/permissions', { cookie: admin.cookie, headers: { 'X-Svc-Org-Id': other } });
      expect(res.status).to.equal(403);
    });

    it('answers an org that does not exist exactly as one the caller does not belong to', async () => {
      const user = await createUser(app);
      const other = await createOrg(app);
      const missing = await app.request('GET', '/api/user/permissions', { cookie: user.cookie, headers: { 'X-Svc-Org-Id': 'org_nope' } });
      const foreign = await app.request('GET', '/api/user/permissions', { cookie: user.cookie, headers: { 'X-Svc-Org-Id': other } });
      expect(missing.status).to.equal(403);
      expect(foreign.status).to.equal(403);
      expect(missing.body.message.replace('org_nope', 'X')).to.equal(foreign.body.message.replace(other, 'X'));
    });

    it("fails with 'user is not a member of any org' for a user without membership", async () => {
      const loner = await createUser(app, { orgId: null });
      const res = await app.request('GET', '/api/user/permissions', { cookie: loner.cookie });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('user is not a member of any org');
    });
  });
});
