import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, buildTeam, createUser, DENIED } from './helpers/factories.ts';

/** A state-changing request the policy refuses (403) leaves one failure entry; a refused read none. */
describe('audit of refused requests', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it("records a Viewer's refused POST /api/teams once, with the action, the actor and the target", async () => {
    const viewer = await createUser(app, { login: 'vera-viewer', role: 'Viewer' });
    const res = await app.request('POST', '/api/teams', { cookie: viewer.cookie, body: { name: 'Not allowed' } });
    expect(res.status).to.equal(403);
    expect(res.body.message).to.match(DENIED);

    const entries = await auditEntries(app, { outcome: 'failure' });
    expect(entries).to.have.length(1);
    expect(entries[0]).to.deep.include({
      action: 'access.denied',
      outcome: 'failure',
      actor_type: 'user',
      actor_id: viewer.id,
      actor_name: 'vera-viewer',
      org_id: 'org_main',
      target_type: 'org',
      target_id: 'org_main',
    });
    expect(entries[0]!.metadata).to.deep.equal({ permission: 'teams:create', request: 'POST /api/teams' });
    expect(await app.count('teams', { name: 'Not allowed' })).to.equal(0);
  });

  it('names the resource of a refused change as its target, for a token caller too', async () => {
    const viewer = await createUser(app, { role: 'Viewer' });
    const team = await buildTeam(app, { name: 'kept' });
    const issued = await app.request('POST', '/api/user/access-tokens', { cookie: viewer.cookie, body: { name: 'cli' } });
    const res = await app.request('PUT', `/api/teams/${team.id}`, { token: issued.body.key, body: { name: 'renamed' } });
    expect(res.status).to.equal(403);

    const [entry, ...more] = await auditEntries(app, { outcome: 'failure' });
    expect(more).to.be.empty;
    expect(entry).to.deep.include({ action: 'access.denied', actor_id: viewer.id, target_type: 'teams', target_id: team.id, org_id: 'org_main' });
    expect(entry!.metadata).to.deep.equal({ permission: 'teams:write', request: 'PUT /api/teams/:id' });
    expect(await app.count('teams', { id: team.id, name: 'kept' })).to.equal(1);
  });

  it('names every refused change access.denied, whatever its permission, as every other action is <subject>.<verb>', async () => {
    const viewer = await createUser(app, { role: 'Viewer' });
    const editor = await createUser(app, { role: 'Editor' });
    const refused = [
      await app.request('POST', '/api/folders', { cookie: viewer.cookie, body: { title: 'Not mine' } }),
      await app.request('PUT', '/api/orgs/org_main/quotas/users', { cookie: editor.cookie, body: { limit: 3 } }),
      await app.request('POST', '/api/connectors', { cookie: editor.cookie, body: { name: 'nope', type: 'tsmetrics', url: 'http://prometheus.example:9090' } }),
    ];
    expect(refused.map((res) => res.status)).to.deep.equal([403, 403, 403]);

    const entries = await auditEntries(app, { outcome: 'failure' });
    expect(entries.map((entry) => entry.action)).to.deep.equal(['access.denied', 'access.denied', 'access.denied']);
    for (const entry of entries) expect(entry.action).to.match(/^[a-z_]+\.[a-z_]+$/);
    expect(entries.map((entry) => entry.metadata!.permission)).to.deep.equal(['folders:create', 'orgs.quotas:write', 'connectors:create']);
  });

  it('leaves no entry for a refused read', async () => {
    const viewer = await createUser(app, { role: 'Viewer' });
    const before = await app.count('audit_log');
    expect((await app.request('GET', '/api/admin/users', { cookie: viewer.cookie })).status).to.equal(403);
    expect((await app.request('GET', '/api/admin/audit-log', { cookie: viewer.cookie })).status).to.equal(403);
    expect(await app.count('audit_log')).to.equal(before);
  });

  it('leaves no failure entry for an allowed change', async () => {
    const admin = await createUser(app, { role: 'Admin' });
    expect((await app.request('POST', '/api/teams', { cookie: admin.cookie, body: { name: 'allowed' } })).status).to.be.oneOf([200, 201]);
    expect(await auditEntries(app, { outcome: 'failure' })).to.be.empty;
  });
});
