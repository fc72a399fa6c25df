/** Orgs at server level (`/api/orgs`): access, listing, creating, reading, changing and deleting an org. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  assignRole,
  auditEntries,
  buildOrgWithPeople,
  buildServiceAccount,
  buildTeam,
  buildToken,
  createOrg,
  createUser,
  DENIED,
  EMPTY_ADDRESS,
  grantManagedPermissions,
  liveSessions,
  ORG_FIELDS,
  orgFootprint,
  setUsersQuota,
  type TestUser,
} from './helpers/factories.ts';

const SEEDED_ROLES = 61;

describe('orgs at server level (/api/orgs)', () => {
  let app: TestApp;
  /** Server admin and Admin of org_main. */
  let root: TestUser;
  /** Server admin who belongs to no org. */
  let outsider: TestUser;

  before(async () => {
    app = await startTestApp();
    root = await createUser(app, { svcAdmin: true, role: 'Admin', login: 'root-admin' });
    outsider = await createUser(app, { svcAdmin: true, orgId: null, login: 'outsider-admin' });
  });
  after(async () => {
    await app.close();
  });

  const orgRow = (id: string) => app.db('orgs').where('id', id).first('id', 'name', 'address', 'billing_email');
  const membership = (orgId: string, userId: string) => app.db('org_members').where({ org_id: orgId, user_id: userId }).first('role');

  describe('access', () => {
    const endpoints: Array<{ method: string; path: (orgId: string, userId: string) => string; body?: unknown; serverOnly?: boolean }> = [
      { method: 'GET', path: () => '/api/orgs', serverOnly: true },
      { method: 'POST', path: () => '/api/orgs', body: { name: 'Intruder Org' }, serverOnly: true },
      { method: 'GET', path: (o) => `/api/orgs/${o}` },
      { method: 'PUT', path: (o) => `/api/orgs/${o}`, body: { name: 'Hijacked' } },
      { method: 'DELETE', path: (o) => `/api/orgs/${o}`, serverOnly: true },
      { method: 'GET', path: (o) => `/api/orgs/${o}/users` },
      { method: 'POST', path: (o) => `/api/orgs/${o}/users`, body: { loginOrEmail: 'root-admin', role: 'Admin' } },
      { method: 'PATCH', path: (o, u) => `/api/orgs/${o}/users/${u}`, body: { role: 'Admin' } },
      { method: 'DELETE', path: (o, u) => `/api/orgs/${o}/users/${u}` },
    ];

    for (const endpoint of endpoints) {
      const name = `${endpoint.method} ${endpoint.path('<id>', '<userId>')}`;

      it(`${name} is 401 without credentials`, async () => {
        const { orgId, viewer } = await buildOrgWithPeople(app);
        const res = await app.request(endpoint.method, endpoint.path(orgId, viewer.id), { body: endpoint.body });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      const who = endpoint.serverOnly ? 'an org admin who is not a server admin' : 'an Editor of the org and for an Admin of another org';
      it(`${name} is 403 for ${who}, and changes nothing`, async () => {
        const { orgId, admin, editor, viewer } = await buildOrgWithPeople(app);
        const other = await buildOrgWithPeople(app);
        const callers = endpoint.serverOnly ? [admin] : [editor, other.admin];
        const auditsBefore = await app.count('audit_log', { outcome: 'success' });
        for (const user of callers) {
          const res = await app.request(endpoint.method, endpoint.path(orgId, viewer.id), { cookie: user.cookie, body: endpoint.body });
          expect(res.status, user.login).to.equal(403);
          expect(res.body.message).to.match(DENIED);
        }
        expect(await app.count('audit_log', { outcome: 'success' })).to.equal(auditsBefore);
        expect(await orgRow(orgId)).to.include({ id: orgId });
        expect(await app.count('orgs', { name: 'Intruder Org' })).to.equal(0);
        expect(await membership(orgId, viewer.id)).to.deep.equal({ role: 'Viewer' });
        expect(await liveSessions(app, viewer.id)).to.equal(1);
      });
    }

    it('an org admin reaches their own org through /api/orgs/<id>', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app);
      const as = api(app, admin);
      expect((await as.get(`/api/orgs/${orgId}`)).status).to.equal(200);
      expect((await as.get(`/api/orgs/${orgId}/users`)).status).to.equal(200);
      expect((await as.patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Editor' })).status).to.equal(200);
    });

    it('a member holding fixed:orgs:reader may read the org, not change it', async () => {
      const { orgId, viewer } = await buildOrgWithPeople(app);
      await assignRole(app, orgId, viewer.id, 'fixed:orgs:reader');
      expect((await api(app, viewer).get(`/api/orgs/${orgId}`)).status).to.equal(200);
      expect((await api(app, viewer).put(`/api/orgs/${orgId}`, { name: 'Nope' })).status).to.equal(403);
    });
  });

  describe('GET /api/orgs', () => {
    it('lists every org by name with totalCount, also to a server admin who belongs to no org', async () => {
      await createOrg(app, { name: 'Alpha Listing' });
      await createOrg(app, { name: 'Beta Listing' });
      const res = await api(app, outsider).get('/api/orgs?perpage=1000');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'orgs', 'page', 'perPage');
      expect(res.body.totalCount).to.equal(await app.count('orgs'));
      expect(res.body.orgs).to.have.length(res.body.totalCount);
      for (const org of res.body.orgs) expect(org).to.have.all.keys('id', 'name');
      expect(res.body.orgs).to.deep.include({ id: 'org_main', name: 'Main Org.' });
      const names = res.body.orgs.map((o: { name: string }) => o.name);
      expect(names).to.deep.equal([...names].sort());
    });

    it('searches by part of the name, ignoring case, with % and _ taken literally', async () => {
      const id = await createOrg(app, { name: 'Searchable 100% Org' });
      const res = await api(app, root).get(`/api/orgs?query=${encodeURIComponent('SEARCHABLE 100%')}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalCount: 1 });
      expect(res.body.orgs).to.deep.equal([{ id, name: 'Searchable 100% Org' }]);
      expect((await api(app, root).get('/api/orgs?query=_earchable')).body.totalCount).to.equal(0);
    });

    it('pages with perpage and page', async () => {
      const all = (await api(app, root).get('/api/orgs?perpage=1000')).body.orgs.map((o: { id: string }) => o.id);
      const res = await api(app, root).get('/api/orgs?perpage=2&page=2');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ page: 2, perPage: 2, totalCount: all.length });
      expect(res.body.orgs.map((o: { id: string }) => o.id)).to.deep.equal(all.slice(2, 4));
    });

    it('is 400 on bad paging or unknown parameters', async () => {
      for (const query of ['perpage=0', 'perpage=abc', 'page=0', 'perpage=100000', 'sort=name']) {
        const res = await api(app, root).get(`/api/orgs?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
    });
  });

  describe('POST /api/orgs', () => {
    it('creates the org, seeds its roles and makes the creator its Admin, default org unchanged', async () => {
      const res = await api(app, root).post('/api/orgs', { name: '  Fresh Org  ' });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys(...ORG_FIELDS);
      expect(res.body).to.deep.equal({ id: res.body.id, name: 'Fresh Org', address: EMPTY_ADDRESS, billingEmail: '' });
      expect(res.body.id).to.match(/^org_[0-9a-f]{16}$/);
      const orgId = res.body.id as string;
      expect(await orgRow(orgId)).to.include({ name: 'Fresh Org' });
      expect(await app.count('roles', { org_id: orgId })).to.equal(SEEDED_ROLES);
      expect(await app.count('roles', { org_id: orgId, uid: 'basic:admin' })).to.equal(1);
      expect(await membership(orgId, root.id)).to.deep.equal({ role: 'Admin' });
      expect(await app.count('org_members', { org_id: orgId })).to.equal(1);
      expect((await app.db('users').where('id', root.id).first('default_org_id')).default_org_id).to.equal('org_main');

      const [created] = await auditEntries(app, { action: 'org.created', target_id: orgId });
      expect(created).to.include({
        actor_type: 'user',
        actor_id: root.id,
        actor_name: 'root-admin',
        org_id: orgId,
        target_type: 'org',
        target_name: 'Fresh Org',
        outcome: 'success',
      });
      expect(created!.metadata).to.deep.equal({ seededRoles: SEEDED_ROLES });
      const [added] = await auditEntries(app, { action: 'org.member_added', org_id: orgId });
      expect(added).to.include({ actor_id: root.id, target_type: 'user', target_id: root.id, outcome: 'success' });

      // The creator administers it at once, through the active org too.
      const here = api(app, root, orgId);
      expect((await here.get('/api/org')).body).to.include({ id: orgId });
      expect((await here.get('/api/org/users')).body.orgUsers.map((m: { userId: string }) => m.userId)).to.deep.equal([root.id]);
    });

    it('lets a server admin who belongs to no org create one', async () => {
      const loner = await createUser(app, { svcAdmin: true, orgId: null });
      const res = await api(app, loner).post('/api/orgs', { name: 'Loner Made' });
      expect(res.status).to.equal(201);
      expect(await membership(res.body.id, loner.id)).to.deep.equal({ role: 'Admin' });
      expect((await app.db('users').where('id', loner.id).first('default_org_id')).default_org_id).to.equal(null);
    });

    it('is 409 for a name in use, whatever its case', async () => {
      await createOrg(app, { name: 'Taken Name' });
      const before = await app.count('orgs');
      for (const name of ['Taken Name', 'taken name', ' TAKEN NAME ']) {
        const res = await api(app, root).post('/api/orgs', { name });
        expect(res.status, name).to.equal(409);
        expect(res.body.message).to.match(/already exists/);
      }
      expect(await app.count('orgs')).to.equal(before);
    });

    it('is 400 on a missing, blank, too long or mistyped name and on unknown fields', async () => {
      const before = await app.count('orgs');
      for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(191) }, { name: 42 }, { name: 'Ok', extra: true }]) {
        const res = await api(app, root).post('/api/orgs', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await app.request('POST', '/api/orgs', { cookie: root.cookie, rawBody: '{"name":', contentType: 'application/json' })).status).to.equal(400);
      expect(await app.count('orgs')).to.equal(before);
    });
  });

  describe('GET /api/orgs/:id and /api/orgs/name/:name', () => {
    it('shows the org to its admin, by id and by name', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Lookup Org');
      const byId = await api(app, admin).get(`/api/orgs/${orgId}`);
      expect(byId.status).to.equal(200);
      expect(byId.body).to.deep.equal({ id: orgId, name: 'Lookup Org', address: EMPTY_ADDRESS, billingEmail: '' });
      const byName = await api(app, admin).get(`/api/orgs/name/${encodeURIComponent('Lookup Org')}`);
      expect(byName.status).to.equal(200);
      expect(byName.body).to.deep.equal(byId.body);
    });

    it('by name is 403 for an org admin of another org, 404 for a server admin when no org has it', async () => {
      const { admin } = await buildOrgWithPeople(app);
      await buildOrgWithPeople(app, 'Someone Elses');
      expect((await api(app, admin).get(`/api/orgs/name/${encodeURIComponent('Someone Elses')}`)).status).to.equal(403);
      // an unknown name does not tell a non-server-admin that it is unknown
      expect((await api(app, admin).get('/api/orgs/name/No%20Such%20Org')).status).to.equal(403);
      const res = await api(app, root).get('/api/orgs/name/No%20Such%20Org');
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal('no org named No Such Org');
    });

    it('is 400 for an over-long id', async () => {
      expect((await api(app, root).get(`/api/orgs/${'x'.repeat(41)}`)).status).to.equal(400);
    });
  });

  describe('PUT /api/orgs/:id', () => {
    it('changes name, address and billing email, stores them, and audits what changed', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Before Rename');
      const address = { address1: '1 Main St', city: 'Springfield', zipCode: '12345', country: 'US' };
      const res = await api(app, admin).put(`/api/orgs/${orgId}`, { name: 'After Rename', address, billingEmail: 'billing@example.test' });
      expect(res.status).to.equal(200);
      const expectedAddress = { ...EMPTY_ADDRESS, ...address };
      expect(res.body).to.deep.equal({ id: orgId, name: 'After Rename', address: expectedAddress, billingEmail: 'billing@example.test' });
      const row = await orgRow(orgId);
      expect(row).to.include({ name: 'After Rename', billing_email: 'billing@example.test' });
      expect(JSON.parse(row.address)).to.deep.equal(expectedAddress);
      const [entry] = await auditEntries(app, { action: 'org.updated', target_id: orgId });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_type: 'org', target_name: 'After Rename', outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ fields: ['address', 'billingEmail', 'name'], previousName: 'Before Rename' });

      // an address replaces the stored one whole; the same values again change and audit nothing
      const again = await api(app, admin).put(`/api/orgs/${orgId}`, { address: { city: 'Shelbyville' } });
      expect(again.body.address).to.deep.equal({ ...EMPTY_ADDRESS, city: 'Shelbyville' });
      await api(app, admin).put(`/api/orgs/${orgId}`, { address: { city: 'Shelbyville' }, name: 'After Rename' });
      expect(await auditEntries(app, { action: 'org.updated', target_id: orgId })).to.have.length(2);
      // '' clears the billing email
      expect((await api(app, admin).put(`/api/orgs/${orgId}`, { billingEmail: '' })).body.billingEmail).to.equal('');
    });

    it('is 409 for a name another org has, and allows a change of case of its own', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Case Org');
      await createOrg(app, { name: 'Occupied Org' });
      const res = await api(app, admin).put(`/api/orgs/${orgId}`, { name: 'occupied org' });
      expect(res.status).to.equal(409);
      expect((await orgRow(orgId)).name).to.equal('Case Org');
      expect((await api(app, admin).put(`/api/orgs/${orgId}`, { name: 'CASE ORG' })).body.name).to.equal('CASE ORG');
    });

    it('is 400 on an empty body, bad fields or types', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      const bodies = [
        {},
        { name: '' },
        { billingEmail: 'not-an-email' },
        { address: { planet: 'Mars' } },
        { address: 'Main St' },
        { address: { city: 7 } },
        { id: 'org_x' },
      ];
      for (const body of bodies) {
        const res = await api(app, admin).put(`/api/orgs/${orgId}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect(await auditEntries(app, { action: 'org.updated', target_id: orgId })).to.have.length(0);
    });
  });

  describe('DELETE /api/orgs/:id', () => {
    it('deletes the org and everything of it, moves default orgs away, and audits', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app, 'Doomed Org');
      const survivor = await createOrg(app, { name: 'Survivor Org' });
      // the Viewer also belongs to the survivor; the Admin belongs nowhere else
      await addMember(app, survivor, viewer.id, 'Admin');
      const sa = await buildServiceAccount(app, { orgId, role: 'Editor' });
      await buildToken(app, sa);
      const team = (await buildTeam(app, { orgId: orgId, members: [admin.id, viewer.id], preferences: { timezone: 'utc', theme: 'dark' } })).id;
      await assignRole(app, orgId, viewer.id, 'fixed:dashboards:reader');
      await grantManagedPermissions(app, orgId, { kind: 'user', userId: viewer.id }, [{ action: 'dashboards:read', scope: 'dashboards:uid:abc' }]);
      await setUsersQuota(app, orgId, 50);
      const inOrg = api(app, admin, orgId);
      expect((await inOrg.put('/api/org/preferences', { homeDashboardUid: 'home', timezone: 'utc', theme: 'light' })).status).to.equal(200);
      expect((await inOrg.post('/api/folders', { uid: 'f1', title: 'F1' })).status).to.equal(201);
      const before = await orgFootprint(app, orgId, [team]);
      expect(before).to.deep.equal({
        orgs: 1,
        org_members: 4,
        teams: 1,
        // the Viewer's managed role, and the Admin's: the creator of a folder administers it
        roles: SEEDED_ROLES + 2,
        user_roles: 3,
        api_tokens: 1,
        folders: 1,
        quotas: 1,
        org_preferences: 1,
        team_preferences: 1,
      });
      const survivorRoles = await app.count('roles', { org_id: survivor });

      const res = await api(app, outsider).delete(`/api/orgs/${orgId}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'org deleted' });
      const after = await orgFootprint(app, orgId, [team]);
      expect(
        Object.values(after).every((count) => count === 0),
        JSON.stringify(after),
      ).to.equal(true);
      expect(await app.count('team_members', { team_id: team })).to.equal(0);
      expect(await app.count('users', { id: sa.id })).to.equal(0);
      expect(await app.count('users', { id: admin.id })).to.equal(1);
      expect(await app.count('roles', { org_id: survivor })).to.equal(survivorRoles);
      const defaults = async (id: string) => (await app.db('users').where('id', id).first('default_org_id')).default_org_id;
      expect(await defaults(viewer.id)).to.equal(survivor);
      expect(await defaults(admin.id)).to.equal(null);

      const [entry] = await auditEntries(app, { action: 'org.deleted', target_id: orgId });
      expect(entry).to.include({ actor_id: outsider.id, org_id: orgId, target_type: 'org', target_name: 'Doomed Org', outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ serviceAccountsDeleted: 1, teamsDeleted: 1 });

      // the policy forgot the org at once: its former Admin now belongs to no org
      const res2 = await app.request('GET', '/api/org', { cookie: admin.cookie });
      expect(res2.status).to.equal(403);
      expect(res2.body.message).to.equal('user is not a member of any org');
      expect((await api(app, viewer).get('/api/org')).body).to.deep.include({ id: survivor });
    });

    it('refuses the default org with 400 and an unknown org with 404', async () => {
      const res = await api(app, root).delete('/api/orgs/org_main');
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal('the default org org_main cannot be deleted');
      expect(await app.count('orgs', { id: 'org_main' })).to.equal(1);
      const unknown = await api(app, root).delete('/api/orgs/org_0000000000000000');
      expect(unknown.status).to.equal(404);
    });

    it('is 403 for the admin of the org itself', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      expect((await api(app, admin).delete(`/api/orgs/${orgId}`)).status).to.equal(403);
      expect(await app.count('orgs', { id: orgId })).to.equal(1);
    });
  });
});
