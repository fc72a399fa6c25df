/**
 * The active org (X-Svc-Org-Id, ?orgId, a token's org, the default org) as the policy decides it
 * (authz/active_org): a token acts only in the org it is pinned to, a user only in an org it
 * belongs to, and nobody learns which org ids exist or makes the service load a document for one.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, api, auditEntries, buildOrg, buildServiceAccount, buildToken, buildUser, DENIED } from './helpers/factories.ts';

describe('the active org, decided by the policy', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  const teamsIn = (orgId: string) => app.count('teams', { org_id: orgId });

  it('is 401 without credentials, whatever org is named', async () => {
    const orgId = await buildOrg(app);
    for (const headers of [{ 'x-svc-org-id': orgId }, { 'x-svc-org-id': 'org_made_up' }, {}] as Array<Record<string, string>>) {
      const res = await app.request('POST', '/api/teams', { headers, body: { name: 'Anonymous' } });
      expect(res.status).to.equal(401);
    }
    expect(await app.count('teams')).to.equal(0);
  });

  describe('a service-account token', () => {
    it('acts in its own org, named or not', async () => {
      const orgId = await buildOrg(app);
      const { key } = await buildToken(app, await buildServiceAccount(app, { orgId, role: 'Admin' }));
      const named = await app.request('POST', '/api/teams', { token: key, headers: { 'x-svc-org-id': orgId }, body: { name: 'Named' } });
      expect(named.status).to.equal(201);
      const unnamed = await app.request('POST', '/api/teams', { token: key, body: { name: 'Unnamed' } });
      expect(unnamed.status).to.equal(201);
      expect(await teamsIn(orgId)).to.equal(2);
    });

    it('is 403 naming another org, existing or not, by header or query, and changes nothing there', async () => {
      const orgId = await buildOrg(app);
      const other = await buildOrg(app);
      const { key } = await buildToken(app, await buildServiceAccount(app, { orgId, role: 'Admin' }));
      for (const [path, headers] of [
        ['/api/teams', { 'x-svc-org-id': other }],
        ['/api/teams', { 'x-svc-org-id': 'org_main' }],
        ['/api/teams', { 'x-svc-org-id': 'org_made_up' }],
        [`/api/teams?orgId=${other}`, {}],
      ] as const) {
        const res = await app.request('POST', path, { token: key, headers, body: { name: 'Elsewhere' } });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).to.equal(403);
        expect(res.body).to.deep.equal({ message: `this token can only act in org ${orgId}` });
      }
      expect(await teamsIn(other)).to.equal(0);
      expect(await teamsIn('org_main')).to.equal(0);
      expect(await auditEntries(app, { action: 'team.created' })).to.have.length(0);
    });
  });

  describe('a user', () => {
    it('acts in an org it belongs to, by header, by query, or by default', async () => {
      const orgId = await buildOrg(app);
      const user = await buildUser(app, { role: 'Admin' });
      await addMember(app, orgId, user.id, 'Admin');
      expect((await api(app, user, orgId).post('/api/teams', { name: 'By Header' })).status).to.equal(201);
      expect((await api(app, user).post(`/api/teams?orgId=${orgId}`, { name: 'By Query' })).status).to.equal(201);
      expect((await api(app, user).post('/api/teams', { name: 'By Default' })).status).to.equal(201);
      expect(await teamsIn(orgId)).to.equal(2);
      expect(await teamsIn('org_main')).to.equal(1);
    });

    it('is 403 in an org it does not belong to, with the same answer when the org does not exist', async () => {
      const other = await buildOrg(app);
      for (const user of [await buildUser(app, { role: 'Admin' }), await buildUser(app, { role: 'Admin', svcAdmin: true })]) {
        const foreign = await api(app, user, other).post('/api/teams', { name: 'Intruder' });
        const madeUp = await api(app, user, 'org_made_up').post('/api/teams', { name: 'Intruder' });
        expect(foreign.status).to.equal(403);
        expect(foreign.body).to.deep.equal({ message: `user is not a member of org ${other}` });
        expect(madeUp.status).to.equal(403);
        expect(madeUp.body).to.deep.equal({ message: 'user is not a member of org org_made_up' });
      }
      expect(await teamsIn(other)).to.equal(0);
    });

    it('is 403 everywhere when it belongs to no org', async () => {
      const loner = await buildUser(app, { orgId: null, svcAdmin: true });
      const res = await api(app, loner).post('/api/teams', { name: 'Nowhere' });
      expect(res.status).to.equal(403);
      expect(res.body).to.deep.equal({ message: 'user is not a member of any org' });
      expect(await app.count('teams')).to.equal(0);
    });

    it('inside an org it belongs to, is still asked for the action (403 from the decision)', async () => {
      const orgId = await buildOrg(app);
      const viewer = await buildUser(app, { orgId, role: 'Viewer' });
      const res = await api(app, viewer, orgId).post('/api/teams', { name: 'Not Mine To Make' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(DENIED);
    });
  });

  it('loads no policy document for an org a caller was refused, made up or real', async () => {
    const other = await buildOrg(app);
    const user = await buildUser(app, { role: 'Viewer' });
    expect((await api(app, user).get('/api/user/permissions')).status).to.equal(200);
    const before = app.services.engine.stats();
    for (let i = 0; i < 5; i++) expect((await api(app, user, `org_made_up_${i}`).get('/api/user/permissions')).status).to.equal(403);
    expect((await api(app, user, other).get('/api/user/permissions')).status).to.equal(403);
    const after = app.services.engine.stats();
    expect(after.orgs).to.equal(before.orgs);
    expect(after.rebuilds).to.equal(before.rebuilds);
  });
});
