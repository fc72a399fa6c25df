import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  assignRole,
  auditEntries,
  buildServiceAccount,
  buildTeam,
  buildToken,
  createOrg,
  createUser,
  DENIED,
  EMPTY_ADDRESS,
  liveSessions,
  MEMBER_FIELDS,
  ORG_FIELDS,
  orgFootprint,
  sessionCookie,
  setUsersQuota,
  type TestUser,
} from './helpers/factories.ts';

const SEEDED_ROLES = 60;

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

  /** A fresh org with an Admin, an Editor and a Viewer. */
  async function orgWithPeople(name?: string) {
    const orgId = await createOrg(app, name ? { name } : {});
    const admin = await createUser(app, { orgId, role: 'Admin' });
    const editor = await createUser(app, { orgId, role: 'Editor' });
    const viewer = await createUser(app, { orgId, role: 'Viewer' });
    return { orgId, admin, editor, viewer };
  }

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
        const { orgId, viewer } = await orgWithPeople();
        const res = await app.request(endpoint.method, endpoint.path(orgId, viewer.id), { body: endpoint.body });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      const who = endpoint.serverOnly ? 'an org admin who is not a server admin' : 'an Editor of the org and for an Admin of another org';
      it(`${name} is 403 for ${who}, and changes nothing`, async () => {
        const { orgId, admin, editor, viewer } = await orgWithPeople();
        const other = await orgWithPeople();
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
      const { orgId, admin, viewer } = await orgWithPeople();
      const as = api(app, admin);
      expect((await as.get(`/api/orgs/${orgId}`)).status).to.equal(200);
      expect((await as.get(`/api/orgs/${orgId}/users`)).status).to.equal(200);
      expect((await as.patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Editor' })).status).to.equal(200);
    });

    it('a member holding fixed:orgs:reader may read the org, not change it', async () => {
      const { orgId, viewer } = await orgWithPeople();
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
      const { orgId, admin } = await orgWithPeople('Lookup Org');
      const byId = await api(app, admin).get(`/api/orgs/${orgId}`);
      expect(byId.status).to.equal(200);
      expect(byId.body).to.deep.equal({ id: orgId, name: 'Lookup Org', address: EMPTY_ADDRESS, billingEmail: '' });
      const byName = await api(app, admin).get(`/api/orgs/name/${encodeURIComponent('Lookup Org')}`);
      expect(byName.status).to.equal(200);
      expect(byName.body).to.deep.equal(byId.body);
    });

    it('by name is 403 for an org admin of another org, 404 for a server admin when no org has it', async () => {
      const { admin } = await orgWithPeople();
      await orgWithPeople('Someone Elses');
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
      const { orgId, admin } = await orgWithPeople('Before Rename');
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
      const { orgId, admin } = await orgWithPeople('Case Org');
      await createOrg(app, { name: 'Occupied Org' });
      const res = await api(app, admin).put(`/api/orgs/${orgId}`, { name: 'occupied org' });
      expect(res.status).to.equal(409);
      expect((await orgRow(orgId)).name).to.equal('Case Org');
      expect((await api(app, admin).put(`/api/orgs/${orgId}`, { name: 'CASE ORG' })).body.name).to.equal('CASE ORG');
    });

    it('is 400 on an empty body, bad fields or types', async () => {
      const { orgId, admin } = await orgWithPeople();
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
      const { orgId, admin, viewer } = await orgWithPeople('Doomed Org');
      const survivor = await createOrg(app, { name: 'Survivor Org' });
      // the Viewer also belongs to the survivor; the Admin belongs nowhere else
      await addMember(app, survivor, viewer.id, 'Admin');
      const sa = await buildServiceAccount(app, { orgId, role: 'Editor' });
      await buildToken(app, sa);
      const team = (await buildTeam(app, { orgId: orgId, members: [admin.id, viewer.id], preferences: { timezone: 'utc', theme: 'dark' } })).id;
      await assignRole(app, orgId, viewer.id, 'fixed:dashboards:reader');
      await assignRole(app, orgId, viewer.id, `managed:users:${viewer.id}:permissions`, [{ action: 'dashboards:read', scope: 'dashboards:uid:abc' }]);
      await setUsersQuota(app, orgId, 50);
      await app.db('preferences').insert({ owner_kind: 'org', owner_id: orgId, home_dashboard_uid: 'home', timezone: 'utc', theme: 'light', updated_at: 1 });
      await app.db('folders').insert({ org_id: orgId, uid: 'f1', title: 'F1', created_at: 1, updated_at: 1 });
      const before = await orgFootprint(app, orgId, [team]);
      expect(before).to.deep.equal({
        orgs: 1,
        org_members: 4,
        teams: 1,
        roles: SEEDED_ROLES + 1,
        user_roles: 2,
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
      const { orgId, admin } = await orgWithPeople();
      expect((await api(app, admin).delete(`/api/orgs/${orgId}`)).status).to.equal(403);
      expect(await app.count('orgs', { id: orgId })).to.equal(1);
    });
  });

  describe('members (/api/orgs/:id/users)', () => {
    it('lists the people of the org with their roles, never service accounts', async () => {
      const { orgId, admin, editor, viewer } = await orgWithPeople();
      await buildToken(app, await buildServiceAccount(app, { orgId }));
      const res = await api(app, admin).get(`/api/orgs/${orgId}/users`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'orgUsers', 'page', 'perPage');
      expect(res.body).to.include({ totalCount: 3, page: 1, perPage: 100 });
      expect(res.body.orgUsers).to.have.length(3);
      for (const member of res.body.orgUsers) expect(member).to.have.all.keys(...MEMBER_FIELDS);
      const byId = new Map(res.body.orgUsers.map((m: { userId: string }) => [m.userId, m]));
      expect(byId.get(admin.id)).to.include({ login: admin.login, email: admin.email, role: 'Admin', lastSeenAt: new Date(app.clock.now()).toISOString() });
      expect(byId.get(editor.id)).to.include({ role: 'Editor' });
      expect(byId.get(viewer.id)).to.include({ role: 'Viewer' });
      expect((byId.get(viewer.id) as { avatarUrl: string }).avatarUrl).to.match(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}/);
      expect((await api(app, root).get('/api/orgs/org_0000000000000000/users')).status).to.be.oneOf([403, 404]);
    });

    it('adds an existing person by login or email, once, and audits it', async () => {
      const { orgId, admin } = await orgWithPeople('Adding Org');
      const joiner = await createUser(app, { role: 'Viewer' });
      const byEmail = await createUser(app, { orgId: null });
      const res = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login.toUpperCase(), role: 'Editor' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user added to the org', userId: joiner.id });
      expect(await membership(orgId, joiner.id)).to.deep.equal({ role: 'Editor' });
      const [entry] = await auditEntries(app, { action: 'org.member_added', target_id: joiner.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_type: 'user', target_name: joiner.login, outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ org: 'Adding Org', role: 'Editor' });
      // the membership counts at once, and adding changes no session
      expect((await api(app, joiner, orgId).get('/api/org/preferences')).status).to.equal(200);
      expect(await liveSessions(app, joiner.id)).to.equal(1);
      // their default org stays; someone who belonged nowhere lands in this one
      expect((await app.db('users').where('id', joiner.id).first('default_org_id')).default_org_id).to.equal('org_main');
      expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: byEmail.email, role: 'None' })).status).to.equal(200);
      expect((await app.db('users').where('id', byEmail.id).first('default_org_id')).default_org_id).to.equal(orgId);

      const dup = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.email, role: 'Admin' });
      expect(dup.status).to.equal(409);
      expect(dup.body.message).to.match(/already a member/);
      expect(await membership(orgId, joiner.id)).to.deep.equal({ role: 'Editor' });
    });

    it('is 404 for nobody or a service account, 400 on bad input', async () => {
      const { orgId, admin } = await orgWithPeople();
      const sa = await buildServiceAccount(app, { orgId: 'org_main' });
      await buildToken(app, sa);
      for (const loginOrEmail of ['nobody-at-all', 'nobody@example.test', sa.login]) {
        const res = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail, role: 'Viewer' });
        expect(res.status, loginOrEmail).to.equal(404);
        expect(res.body.message).to.equal('no user with that login or email');
      }
      for (const body of [
        {},
        { loginOrEmail: 'x' },
        { role: 'Viewer' },
        { loginOrEmail: 'x', role: 'Owner' },
        { loginOrEmail: 5, role: 'Viewer' },
        { loginOrEmail: 'x', role: 'Viewer', orgId: 'o' },
      ]) {
        expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(await app.count('org_members', { org_id: orgId })).to.equal(3);
    });

    it('enforces the org users quota', async () => {
      const { orgId, admin } = await orgWithPeople();
      await setUsersQuota(app, orgId, 3);
      const joiner = await createUser(app);
      const res = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login, role: 'Viewer' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(/^quota exceeded for users/);
      expect(await membership(orgId, joiner.id)).to.equal(undefined);
      await setUsersQuota(app, orgId, 4);
      expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login, role: 'Viewer' })).status).to.equal(200);
    });

    it('re-roles a member: the change counts at once, their sessions end, it is audited', async () => {
      const { orgId, admin, viewer } = await orgWithPeople('Rerole Org');
      const res = await api(app, admin).patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Admin' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'org user updated' });
      expect(await membership(orgId, viewer.id)).to.deep.equal({ role: 'Admin' });
      expect(await liveSessions(app, viewer.id)).to.equal(0);
      expect((await api(app, viewer).get(`/api/orgs/${orgId}`)).status).to.equal(401);
      const fresh = { cookie: await sessionCookie(app, viewer.id) };
      expect((await api(app, fresh).get(`/api/orgs/${orgId}/users`)).status).to.equal(200);
      const [entry] = await auditEntries(app, { action: 'org.member_role_changed', target_id: viewer.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_name: viewer.login, outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ org: 'Rerole Org', from: 'Viewer', to: 'Admin' });
      expect(await auditEntries(app, { action: 'session.revoked', target_id: viewer.id })).to.have.length(1);
      // the same role again is no change: no audit, sessions kept
      expect((await api(app, admin).patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Admin' })).status).to.equal(200);
      expect(await liveSessions(app, viewer.id)).to.equal(1);
      expect(await auditEntries(app, { action: 'org.member_role_changed', target_id: viewer.id })).to.have.length(1);
    });

    it('never demotes or removes the last Admin (400, audited as a failure)', async () => {
      const { orgId, admin, viewer } = await orgWithPeople();
      // a service account that is Admin does not count: it cannot administer people
      await buildToken(app, await buildServiceAccount(app, { orgId, role: 'Admin' }));
      for (const [method, body, message] of [
        ['PATCH', { role: 'Editor' }, 'cannot demote the last Admin of the org: make another member Admin first'],
        ['DELETE', undefined, 'cannot remove the last Admin of the org: make another member Admin first'],
      ] as const) {
        const res = await app.request(method, `/api/orgs/${orgId}/users/${admin.id}`, { cookie: admin.cookie, body });
        expect(res.status, method).to.equal(400);
        expect(res.body.message).to.equal(message);
      }
      expect(await membership(orgId, admin.id)).to.deep.equal({ role: 'Admin' });
      expect(await liveSessions(app, admin.id)).to.equal(1);
      const failures = await auditEntries(app, { target_id: admin.id, outcome: 'failure' });
      expect(failures.map((f) => f.action).sort()).to.deep.equal(['org.member_removed', 'org.member_role_changed']);
      for (const failure of failures) expect(failure).to.include({ actor_id: admin.id, org_id: orgId, target_type: 'user' });

      // with a second Admin, the first may step down
      await api(app, admin).patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Admin' });
      expect((await api(app, admin).patch(`/api/orgs/${orgId}/users/${admin.id}`, { role: 'Viewer' })).status).to.equal(200);
      expect(await membership(orgId, admin.id)).to.deep.equal({ role: 'Viewer' });
    });

    it('is 404 for a non-member or a service account, 400 for a bad role', async () => {
      const { orgId, admin } = await orgWithPeople();
      const stranger = await createUser(app);
      const sa = await buildServiceAccount(app, { orgId });
      await buildToken(app, sa);
      for (const id of [stranger.id, sa.id, 'usr_doesnotexist']) {
        const patched = await api(app, admin).patch(`/api/orgs/${orgId}/users/${id}`, { role: 'Editor' });
        expect(patched.status, id).to.equal(404);
        expect(patched.body.message).to.equal(`user ${id} is not a member of this org`);
        expect((await api(app, admin).delete(`/api/orgs/${orgId}/users/${id}`)).status, id).to.equal(404);
      }
      for (const body of [{}, { role: 'admin' }, { role: 4 }, { role: 'Editor', extra: 1 }]) {
        expect((await api(app, admin).patch(`/api/orgs/${orgId}/users/${stranger.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(await membership(orgId, sa.id)).to.deep.equal({ role: 'Viewer' });
    });

    it('removes a member with their teams, roles and grants there, ends their sessions, moves their default org', async () => {
      const { orgId, admin, editor } = await orgWithPeople('Removal Org');
      await app.db('users').where('id', editor.id).update({ default_org_id: orgId });
      await addMember(app, 'org_main', editor.id, 'Viewer');
      const team = (await buildTeam(app, { orgId: orgId, members: [editor.id], preferences: { timezone: 'utc', theme: 'dark' } })).id;
      await assignRole(app, orgId, editor.id, 'fixed:dashboards:reader');
      await assignRole(app, orgId, editor.id, `managed:users:${editor.id}:permissions`, [{ action: 'dashboards:read', scope: 'dashboards:uid:d1' }]);
      await app.db('legacy_acl').insert({ org_id: orgId, dashboard_uid: 'd1', user_id: editor.id, permission: 1 });

      const res = await api(app, admin).delete(`/api/orgs/${orgId}/users/${editor.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user removed from the org' });
      expect(await membership(orgId, editor.id)).to.equal(undefined);
      expect(await app.count('team_members', { team_id: team, user_id: editor.id })).to.equal(0);
      expect(await app.count('user_roles', { org_id: orgId, user_id: editor.id })).to.equal(0);
      expect(await app.count('roles', { org_id: orgId, uid: `managed:users:${editor.id}:permissions` })).to.equal(0);
      expect(await app.count('legacy_acl', { org_id: orgId, user_id: editor.id })).to.equal(0);
      expect(await liveSessions(app, editor.id)).to.equal(0);
      expect((await app.db('users').where('id', editor.id).first('default_org_id')).default_org_id).to.equal('org_main');
      const [entry] = await auditEntries(app, { action: 'org.member_removed', target_id: editor.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_name: editor.login, outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ org: 'Removal Org', role: 'Editor' });
      // the policy dropped them at once
      const fresh = { cookie: await sessionCookie(app, editor.id) };
      expect((await api(app, fresh, orgId).get('/api/org/preferences')).status).to.equal(403);
    });
  });

  describe('a server admin who is not a member (the policy lets server admins administer any org)', () => {
    it('administers any org through /api/orgs/<id>…, but not through /api/org', async () => {
      const { orgId, viewer } = await orgWithPeople('Administered Org');
      const joiner = await createUser(app);
      const as = api(app, outsider);
      expect((await as.get(`/api/orgs/${orgId}`)).status).to.equal(200);
      expect((await as.get(`/api/orgs/name/${encodeURIComponent('Administered Org')}`)).status).to.equal(200);
      expect((await as.put(`/api/orgs/${orgId}`, { billingEmail: 'root@example.test' })).body.billingEmail).to.equal('root@example.test');
      expect((await as.get(`/api/orgs/${orgId}/users`)).body.totalCount).to.equal(3);
      expect((await as.post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login, role: 'Viewer' })).status).to.equal(200);
      expect((await as.patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Editor' })).status).to.equal(200);
      expect((await as.delete(`/api/orgs/${orgId}/users/${joiner.id}`)).status).to.equal(200);
      expect(await membership(orgId, outsider.id)).to.equal(undefined);

      const here = api(app, outsider, orgId);
      for (const [method, path] of [
        ['get', '/api/org'],
        ['get', '/api/org/users'],
        ['get', '/api/org/preferences'],
      ] as const) {
        const res = await here[method](path);
        expect(res.status, path).to.equal(403);
      }
      expect((await here.put('/api/org', { name: 'Nope' })).status).to.equal(403);
    });

    it('gets 404 for an unknown org id on every /api/orgs/<id>… endpoint', async () => {
      const as = api(app, outsider);
      const unknown = 'org_0000000000000000';
      for (const [method, path, body] of [
        ['get', `/api/orgs/${unknown}`, undefined],
        ['put', `/api/orgs/${unknown}`, { name: 'Ghost' }],
        ['get', `/api/orgs/${unknown}/users`, undefined],
        ['post', `/api/orgs/${unknown}/users`, { loginOrEmail: 'root-admin', role: 'Viewer' }],
        ['patch', `/api/orgs/${unknown}/users/${root.id}`, { role: 'Viewer' }],
        ['delete', `/api/orgs/${unknown}/users/${root.id}`, undefined],
      ] as const) {
        const res = await as[method](path, body);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.message).to.equal(`org ${unknown} not found`);
      }
    });
  });
});
