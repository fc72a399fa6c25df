/** SCIM 2.0 at /scim/v2: authentication, discovery, Users and Groups CRUD, filters, paging, PATCH, teams. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, buildServiceAccount, buildTeam, buildToken, createUser, liveSessions, sessionCookie, type TestUser } from './helpers/factories.ts';
import { buildScimClient, GROUP_SCHEMA, patchOf, SCIM_ERROR, scimAs, scimUserBody, USER_SCHEMA, type ScimClient } from './helpers/scim.ts';

describe('SCIM 2.0', () => {
  let app: TestApp;
  let scim: ScimClient;
  let admin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    scim = await buildScimClient(app);
  });
  after(async () => {
    await app.close();
  });

  const createScimUser = async (overrides: Record<string, unknown> = {}) => {
    const res = await scim.post('/Users', scimUserBody(overrides));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string; userName: string; emails: Array<{ value: string }> };
  };

  describe('access', () => {
    it('answers 401 without a token or with a dead one, in SCIM error format and content type', async () => {
      const none = await app.request('GET', '/scim/v2/Users');
      expect(none.status).to.equal(401);
      expect(none.headers.get('content-type')).to.match(/^application\/scim\+json/);
      expect(none.body).to.deep.equal({ schemas: [SCIM_ERROR], status: '401', detail: 'authentication required' });
      const dead = await scimAs(app, 'svc_sa_notarealtokennotarealtokennotarealtoken0').get('/Users');
      expect(dead.status).to.equal(401);
      expect(dead.body.schemas).to.deep.equal([SCIM_ERROR]);
    });

    it('answers 403 to a service account without the provisioner role and to a person, even an org admin with it', async () => {
      const plain = await buildServiceAccount(app, { role: 'Admin' });
      const { key } = await buildToken(app, plain);
      const res = await scimAs(app, key).get('/Users');
      // an Admin service account holds "*", which reaches scim:read: the role is what a plain one lacks
      expect(res.status).to.equal(200);
      const viewer = await buildServiceAccount(app, { role: 'Viewer' });
      const viewerToken = await buildToken(app, viewer);
      const refused = await scimAs(app, viewerToken.key).post('/Users', scimUserBody());
      expect(refused.status).to.equal(403);
      expect(refused.body).to.deep.equal({ schemas: [SCIM_ERROR], status: '403', detail: 'permission denied: you need scim:write to do this' });
      const person = await app.request('GET', '/scim/v2/Users', { cookie: admin.cookie });
      expect(person.status).to.equal(403);
      expect(person.body.status).to.equal('403');
      const denied = await auditEntries(app, { action: 'access.denied', actor_id: viewer.id });
      expect(denied.map((entry) => entry.metadata?.permission)).to.deep.equal(['scim:write']);
    });

    it('describes itself: ServiceProviderConfig, ResourceTypes and Schemas', async () => {
      const config = await scim.get('/ServiceProviderConfig');
      expect(config.status).to.equal(200);
      expect(config.headers.get('content-type')).to.match(/^application\/scim\+json/);
      expect(config.body).to.deep.include({
        patch: { supported: true },
        filter: { supported: true, maxResults: 1000 },
        bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      });
      const types = await scim.get('/ResourceTypes');
      expect(types.body.Resources.map((type: { endpoint: string }) => type.endpoint)).to.deep.equal(['/Users', '/Groups']);
      const schemas = await scim.get('/Schemas');
      expect(schemas.body.Resources.map((schema: { id: string }) => schema.id)).to.deep.equal([USER_SCHEMA, GROUP_SCHEMA]);
    });

    it('refuses bad input with 400 and a scimType, never a 500', async () => {
      const cases: Array<[unknown, string]> = [
        [{ schemas: [USER_SCHEMA] }, 'invalidValue'],
        [scimUserBody({ userName: 'has space' }), 'invalidValue'],
        [scimUserBody({ userName: 42 }), 'invalidValue'],
        [scimUserBody({ emails: [{ value: 'not-an-email' }] }), 'invalidValue'],
        [scimUserBody({ emails: 'x@y.z' }), 'invalidValue'],
        [scimUserBody({ active: 'maybe' }), 'invalidValue'],
        [scimUserBody({ externalId: 7 }), 'invalidValue'],
        [scimUserBody({ externalId: 'x'.repeat(191) }), 'invalidValue'],
        [scimUserBody({ displayName: 'evil\u202Egnp' }), 'invalidValue'],
        [scimUserBody({ password: 'correct horse battery staple' }), 'invalidValue'],
        [[1, 2], 'invalidValue'],
      ];
      for (const [body, scimType] of cases) {
        const res = await scim.post('/Users', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body, JSON.stringify(body)).to.include({ status: '400', scimType });
      }
      const raw = await app.request('POST', '/scim/v2/Users', { token: scim.token, rawBody: '{"userName":', contentType: 'application/scim+json' });
      expect(raw.status).to.equal(400);
      expect(raw.body.schemas).to.deep.equal([SCIM_ERROR]);
      for (const query of ['startIndex=x', 'count=1e400', 'sortBy=userName', `filter=${'a'.repeat(1001)}`]) {
        const res = await scim.get(`/Users?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.schemas, query).to.deep.equal([SCIM_ERROR]);
      }
      const unknown = await scim.get('/Users/usr_missing');
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.equal({ schemas: [SCIM_ERROR], status: '404', detail: 'user usr_missing not found' });
      const patch = await scim.patch(`/Users/${(await createScimUser()).id}`, { Operations: [{ op: 'move', path: 'userName', value: 'x' }] });
      expect(patch.status).to.equal(400);
    });
  });

  describe('Users', () => {
    it('creates, reads, replaces, patches and deletes a user, audited as the service account', async () => {
      const body = scimUserBody({ externalId: 'okta-00u1', displayName: 'Babs Jensen' });
      const created = await scim.post('/Users', body);
      expect(created.status).to.equal(201);
      const id = created.body.id as string;
      expect(created.headers.get('location')).to.equal(`/scim/v2/Users/${id}`);
      expect(created.body).to.deep.include({
        schemas: [USER_SCHEMA],
        id,
        externalId: 'okta-00u1',
        userName: body.userName,
        displayName: 'Babs Jensen',
        name: { formatted: 'Babs Jensen' },
        emails: [{ value: body.userName, type: 'work', primary: true }],
        active: true,
        groups: [],
      });
      expect(created.body.meta).to.include({ resourceType: 'User', location: `/scim/v2/Users/${id}` });
      const row = await app.db('users').where('id', id).first();
      expect(row).to.include({ login: body.userName, email: body.userName, password_hash: null, name: 'Babs Jensen' });
      expect(!!row.is_svc_admin).to.equal(false);
      expect(await app.db('org_members').where({ org_id: 'org_main', user_id: id }).first('role')).to.deep.equal({ role: 'Viewer' });
      expect(await app.db('scim_users').where('user_id', id).first('org_id', 'external_id')).to.deep.equal({ org_id: 'org_main', external_id: 'okta-00u1' });
      const [audit] = await auditEntries(app, { action: 'user.created', target_id: id });
      expect(audit).to.include({ actor_type: 'service_account', actor_id: scim.accountId, org_id: 'org_main' });
      expect(audit!.metadata).to.include({ via: 'scim', isSvcAdmin: false, externalId: 'okta-00u1' });

      expect((await scim.get(`/Users/${id}`)).body).to.deep.equal(created.body);

      const replaced = await scim.put(`/Users/${id}`, {
        ...body,
        userName: 'babs@corp.example',
        name: { formatted: 'Barbara J.' },
        displayName: undefined,
        emails: [],
      });
      expect(replaced.status).to.equal(200);
      expect(replaced.body).to.deep.include({ userName: 'babs@corp.example', displayName: 'Barbara J.', emails: [], externalId: 'okta-00u1' });
      const updated = await auditEntries(app, { action: 'user.updated', target_id: id });
      expect(updated.at(-1)!.metadata).to.deep.equal({ fields: ['email', 'name', 'userName'], by: 'scim' });

      const patched = await scim.patch(
        `/Users/${id}`,
        patchOf(
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'barbara@corp.example' },
          { op: 'replace', value: { displayName: 'Barbara Jensen' } },
          { op: 'remove', path: 'externalId' },
        ),
      );
      expect(patched.status).to.equal(200);
      expect(patched.body).to.deep.include({ displayName: 'Barbara Jensen', emails: [{ value: 'barbara@corp.example', type: 'work', primary: true }] });
      expect(patched.body).not.to.have.property('externalId');

      const deleted = await scim.delete(`/Users/${id}`);
      expect(deleted.status).to.equal(204);
      expect(await app.count('users', { id })).to.equal(0);
      expect(await app.count('scim_users', { user_id: id })).to.equal(0);
      expect((await scim.get(`/Users/${id}`)).status).to.equal(404);
      expect(await auditEntries(app, { action: 'user.deleted', target_id: id })).to.have.length(1);
    });

    it('disables a user with active false (Entra ID sends "False") and ends its sessions; active true enables it', async () => {
      const user = await createScimUser();
      await sessionCookie(app, user.id);
      expect(await liveSessions(app, user.id)).to.equal(1);
      const res = await scim.patch(`/Users/${user.id}`, patchOf({ op: 'Replace', path: 'active', value: 'False' }));
      expect(res.status).to.equal(200);
      expect(res.body.active).to.equal(false);
      expect(!!(await app.db('users').where('id', user.id).first('is_disabled')).is_disabled).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      expect(await auditEntries(app, { action: 'user.disabled', target_id: user.id })).to.have.length(1);
      const back = await scim.patch(`/Users/${user.id}`, patchOf({ op: 'replace', value: { active: true } }));
      expect(back.body.active).to.equal(true);
      expect(!!(await app.db('users').where('id', user.id).first('is_disabled')).is_disabled).to.equal(false);
    });

    it('leaves the org only, when the user belongs to another org too', async () => {
      const user = await createScimUser();
      const other = await app.db('orgs').whereNot('id', 'org_main').first('id');
      const orgId = other?.id ?? (await import('./helpers/factories.ts').then((f) => f.createOrg(app)));
      await app.services.transact(async (tx) => {
        await tx.db('org_members').insert({ org_id: orgId, user_id: user.id, role: 'Viewer', created_at: app.clock.now() });
        tx.policyChanged(orgId, { kind: 'member', userId: user.id });
      });
      expect((await scim.delete(`/Users/${user.id}`)).status).to.equal(204);
      expect(await app.count('users', { id: user.id })).to.equal(1);
      expect(await app.count('org_members', { org_id: 'org_main', user_id: user.id })).to.equal(0);
      expect(await app.count('scim_users', { user_id: user.id })).to.equal(0);
    });
  });

  describe('filters and paging', () => {
    it('filters users with eq, co, sw, pr, and, or on userName, emails.value, externalId and displayName', async () => {
      const tag = `f${Date.now().toString(36)}`;
      const a = await createScimUser({
        userName: `${tag}-alice@corp.example`,
        emails: [{ value: `${tag}-alice@mail.example`, primary: true }],
        externalId: `${tag}-A`,
        displayName: 'Alice Liddell',
      });
      const b = await createScimUser({ userName: `${tag}-bob@corp.example`, emails: [], externalId: `${tag}-B`, displayName: 'Bob Builder' });
      const c = await createScimUser({ userName: `${tag}-carol@corp.example`, emails: [{ value: `${tag}-carol@mail.example` }], displayName: 'Carol Alice' });
      const ids = async (filter: string) => {
        const res = await scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
        expect(res.status, `${filter}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(res.body.totalResults, filter).to.equal(res.body.Resources.length);
        return (res.body.Resources as Array<{ id: string }>).map((r) => r.id).sort();
      };
      const sorted = (...users: Array<{ id: string }>) => users.map((u) => u.id).sort();
      expect(await ids(`userName eq "${tag.toUpperCase()}-ALICE@corp.example"`)).to.deep.equal(sorted(a));
      expect(await ids(`emails.value co "${tag}-carol@mail"`)).to.deep.equal(sorted(c));
      expect(await ids(`emails[value eq "${tag}-alice@mail.example"]`)).to.deep.equal(sorted(a));
      expect(await ids(`externalId eq "${tag}-B"`)).to.deep.equal(sorted(b));
      expect(await ids(`externalId eq "${tag}-b"`)).to.satisfy((found: string[]) => found.length === 0 || found[0] === b.id);
      expect(await ids(`userName sw "${tag}" and displayName co "alice"`)).to.deep.equal(sorted(a, c));
      expect(await ids(`userName sw "${tag}" and (externalId pr or emails.value pr)`)).to.deep.equal(sorted(a, b, c));
      expect(await ids(`userName sw "${tag}" and externalId pr`)).to.deep.equal(sorted(a, b));
      expect(await ids(`userName sw "${tag}" and emails.value pr`)).to.deep.equal(sorted(a, c));
      expect(await ids(`displayName eq "Bob Builder" or externalId eq "${tag}-A"`)).to.deep.equal(sorted(a, b));
      expect(await ids(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "${tag}-bob@corp.example"`)).to.deep.equal(sorted(b));
    });

    it('refuses unsupported attributes, operators, values and malformed filters with 400 invalidFilter', async () => {
      for (const filter of [
        'name.givenName eq "Barbara"',
        'id eq "usr_1"',
        'password eq "x"',
        'userName ne "x"',
        'userName gt "a"',
        'userName ew "x"',
        'not (userName eq "x")',
        'externalId eq 1',
        'userName eq true',
        'userName eq null',
        'userName eq',
        'userName eq "unterminated',
        ')',
        'emails[type eq "work" and value co "x"] and emails[value pr]',
      ]) {
        const res = await scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
        expect(res.status, filter).to.equal(400);
        expect(res.body, filter).to.include({ status: '400', scimType: 'invalidFilter' });
      }
      const groups = await scim.get(`/Groups?filter=${encodeURIComponent('userName eq "x"')}`);
      expect(groups.body).to.include({ scimType: 'invalidFilter' });
    });

    it('pages with startIndex and count by userName, totalResults counting every match', async () => {
      const tag = `p${Date.now().toString(36)}`;
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await createScimUser({ userName: `${tag}-${i}@corp.example` })).id);
      const page = async (query: string) => (await scim.get(`/Users?filter=${encodeURIComponent(`userName sw "${tag}"`)}&${query}`)).body;
      const second = await page('startIndex=2&count=2');
      expect(second).to.include({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
      expect(second.Resources.map((r: { id: string }) => r.id)).to.deep.equal(made.slice(1, 3));
      const last = await page('startIndex=5&count=10');
      expect(last.Resources.map((r: { id: string }) => r.id)).to.deep.equal(made.slice(4));
      const none = await page('count=0');
      expect(none).to.include({ totalResults: 5, itemsPerPage: 0 });
      const past = await page('startIndex=9');
      expect(past).to.include({ totalResults: 5, itemsPerPage: 0 });
      const clamped = await page('startIndex=-3&count=-1');
      expect(clamped).to.include({ startIndex: 1, itemsPerPage: 0 });
    });
  });

  describe('Groups', () => {
    it('creates a group as a team with members, visible through /api/teams/:id/members, and changes it with PATCH', async () => {
      const [u1, u2, u3] = [await createScimUser(), await createScimUser(), await createScimUser()];
      const created = await scim.post('/Groups', {
        schemas: [GROUP_SCHEMA],
        displayName: `Engineering ${Date.now()}`,
        externalId: 'grp-1',
        members: [{ value: u1.id }, { value: u2.id }],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const teamId = created.body.id as string;
      expect(created.body.members.map((m: { value: string }) => m.value).sort()).to.deep.equal([u1.id, u2.id].sort());
      const teamMembers = async () => {
        const res = await api(app, admin).get(`/api/teams/${teamId}/members`);
        expect(res.status).to.equal(200);
        return (res.body.teamMembers as Array<{ userId: string }>).map((m) => m.userId).sort();
      };
      expect(await teamMembers()).to.deep.equal([u1.id, u2.id].sort());
      expect((await api(app, admin).get(`/api/teams/${teamId}`)).body.name).to.equal(created.body.displayName);
      // a person an org admin added through the teams API is neither listed nor touched by SCIM
      const local = await createUser(app);
      expect((await api(app, admin).post(`/api/teams/${teamId}/members`, { userId: local.id })).status).to.equal(200);

      const removed = await scim.patch(
        `/Groups/${teamId}`,
        patchOf({ op: 'remove', path: `members[value eq "${u1.id}"]` }, { op: 'add', path: 'members', value: [{ value: u3.id }] }),
      );
      expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
      expect(removed.body.members.map((m: { value: string }) => m.value).sort()).to.deep.equal([u2.id, u3.id].sort());
      expect(await teamMembers()).to.deep.equal([u2.id, u3.id, local.id].sort());
      const added = await auditEntries(app, { action: 'team.member_added', target_id: teamId, actor_id: scim.accountId });
      expect(added.map((entry) => entry.metadata?.userId).sort()).to.deep.equal([u1.id, u2.id, u3.id].sort());

      // a member holds the team's roles at once: the policy data changed with the membership
      const renamed = await scim.patch(
        `/Groups/${teamId}`,
        patchOf({ op: 'replace', value: { displayName: 'Platform', externalId: 'grp-2' } }, { op: 'replace', path: 'members', value: [{ value: u1.id }] }),
      );
      expect(renamed.body).to.deep.include({ displayName: 'Platform', externalId: 'grp-2' });
      expect(await teamMembers()).to.deep.equal([u1.id, local.id].sort());
      const entraRemove = await scim.patch(`/Groups/${teamId}`, patchOf({ op: 'Remove', path: 'members', value: [{ value: u1.id }] }));
      expect(entraRemove.body.members).to.deep.equal([]);
      expect(await teamMembers()).to.deep.equal([local.id]);

      const replaced = await scim.put(`/Groups/${teamId}`, { schemas: [GROUP_SCHEMA], displayName: 'Platform', members: [{ value: u2.id }] });
      expect(replaced.status).to.equal(200);
      expect(replaced.body).not.to.have.property('externalId');
      expect(await teamMembers()).to.deep.equal([u2.id, local.id].sort());
      const listed = await scim.get(`/Groups?filter=${encodeURIComponent('displayName eq "platform"')}`);
      expect(listed.body.Resources.map((g: { id: string }) => g.id)).to.deep.equal([teamId]);
      expect((await scim.get(`/Users/${u2.id}`)).body.groups).to.deep.equal([{ value: teamId, display: 'Platform', $ref: `/scim/v2/Groups/${teamId}` }]);

      expect((await scim.delete(`/Groups/${teamId}`)).status).to.equal(204);
      expect(await app.count('teams', { id: teamId })).to.equal(0);
      expect(await app.count('scim_groups', { team_id: teamId })).to.equal(0);
      expect(await auditEntries(app, { action: 'team.deleted', target_id: teamId })).to.have.length(1);
    });

    it('membership changes the policy: a member of a group holds the roles assigned to its team', async () => {
      const user = await createScimUser();
      const group = await scim.post('/Groups', { displayName: `Readers ${Date.now()}` });
      const { assignRoleToTeam } = await import('./helpers/factories.ts');
      await assignRoleToTeam(app, { id: group.body.id, name: group.body.displayName, orgId: 'org_main' }, 'fixed:annotations:writer');
      const cookie = await sessionCookie(app, user.id);
      const before = await app.request('GET', '/api/user/permissions', { cookie });
      expect(before.body).not.to.have.property('annotations:delete');
      await scim.patch(`/Groups/${group.body.id}`, patchOf({ op: 'add', path: 'members', value: [{ value: user.id }] }));
      const after = await app.request('GET', '/api/user/permissions', { cookie });
      expect(after.body['annotations:delete']).to.include('annotations:*');
    });

    it('refuses members that are not SCIM users of the org, a taken name, and bad paths', async () => {
      const person = await createUser(app);
      const group = await scim.post('/Groups', { displayName: `G ${Date.now()}` });
      for (const value of [person.id, admin.id, scim.accountId, 'usr_nobody']) {
        const res = await scim.patch(`/Groups/${group.body.id}`, patchOf({ op: 'add', path: 'members', value: [{ value }] }));
        expect(res.status, value).to.equal(400);
        expect(res.body.scimType).to.equal('invalidValue');
      }
      expect(await app.count('team_members', { team_id: group.body.id as string })).to.equal(0);
      const existing = await buildTeam(app);
      const taken = await scim.post('/Groups', { displayName: existing.name });
      expect(taken.status).to.equal(409);
      expect(taken.body).to.include({ status: '409', scimType: 'uniqueness' });
      // an existing team is never claimed: it is not a SCIM group
      expect((await scim.get(`/Groups/${existing.id}`)).status).to.equal(404);
      expect((await scim.patch(`/Groups/${existing.id}`, patchOf({ op: 'add', path: 'members', value: [] }))).status).to.equal(404);
      expect((await scim.delete(`/Groups/${existing.id}`)).status).to.equal(404);
      expect(await app.count('teams', { id: existing.id })).to.equal(1);
      for (const path of ['members[value ne "x"]', 'members[', 'owner', 'displayName']) {
        const res = await scim.patch(`/Groups/${group.body.id}`, patchOf({ op: 'remove', path }));
        expect(res.status, path).to.equal(400);
      }
    });
  });
});
