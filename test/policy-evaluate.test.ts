/**
 * POST /api/access-control/evaluate: the policy's decision and reasons for the caller, or with
 * `users.permissions:read` for another member. The rule for what the reasons may name: a role, a
 * team or a resource the asker may not read shows as `(hidden)`; wildcards, the resource the
 * asker named, the user asked about and the roles every org shares (basic, fixed, org-role grants)
 * always show.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, buildTeam, createUser, DENIED, grantManagedPermissions, type TestUser } from './helpers/factories.ts';

describe('POST /api/access-control/evaluate', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  let subject: TestUser;
  /** Org role None with only the right to read other users' permissions: sees no folder, team or custom role. */
  let auditor: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    subject = await createUser(app, { role: 'None' });
    auditor = await createUser(app, { role: 'None' });
    await assignRole(app, 'org_main', auditor.id, 'custom:ev-auditor', [{ action: 'users.permissions:read', scope: 'users:*' }]);
    expect((await api(app, admin).post('/api/folders', { uid: 'ev-secret', title: 'secret' })).status).to.equal(201);
    const saved = await api(app, admin).post('/api/dashboards/db', { dashboard: { uid: 'ev-dash', title: 'ev dash' }, folderUid: 'ev-secret' });
    expect(saved.status).to.equal(200);
    await assignRole(app, 'org_main', subject.id, 'custom:ev-secret-reader', [{ action: 'dashboards:read', scope: 'folders:uid:ev-secret' }]);
    const team = await buildTeam(app, { members: [subject.id] });
    await grantManagedPermissions(app, 'org_main', { kind: 'team', teamId: team.id }, [{ action: 'dashboards:write', scope: 'dashboards:uid:ev-dash' }]);
  });
  after(async () => {
    await app.close();
  });

  const evaluate = (who: TestUser, body: unknown) => api(app, who).post('/api/access-control/evaluate', body);

  it('401 without credentials', async () => {
    expect((await app.request('POST', '/api/access-control/evaluate', { body: { action: 'teams:read' } })).status).to.equal(401);
  });

  it('403 when asking about another user without users.permissions:read on them', async () => {
    const res = await evaluate(viewer, { action: 'dashboards:read', userId: subject.id });
    expect(res.status).to.equal(403);
    expect(res.body.message).to.equal('permission denied: you need users.permissions:read to do this');
    expect(res.body.message).to.match(DENIED);
  });

  it('answers the caller its own decision, allowed with the matching role and scope, denied with what is missing', async () => {
    const allowed = await evaluate(viewer, { action: 'dashboards:read', resource: { kind: 'dashboards', uid: 'ev-dash' } });
    expect(allowed.status).to.equal(200);
    expect(allowed.body).to.deep.equal({
      allow: true,
      reasons: ['role basic:viewer grants dashboards:read on dashboards:*', 'role basic:viewer grants dashboards:read on folders:*'],
      reasonDetails: [
        { kind: 'grant', role: 'basic:viewer', action: 'dashboards:read', scope: 'dashboards:*' },
        { kind: 'grant', role: 'basic:viewer', action: 'dashboards:read', scope: 'folders:*' },
      ],
    });

    const denied = await evaluate(viewer, { action: 'dashboards:delete', resource: { kind: 'dashboards', uid: 'ev-dash' } });
    expect(denied.body).to.deep.equal({
      allow: false,
      reasons: [
        'no role grants dashboards:delete on dashboards:uid:ev-dash, folders:uid:ev-secret, dashboards:uid:*, dashboards:*, folders:uid:*, folders:*, *',
      ],
      reasonDetails: [
        {
          kind: 'missing',
          action: 'dashboards:delete',
          scopes: ['dashboards:uid:ev-dash', 'folders:uid:ev-secret', 'dashboards:uid:*', 'dashboards:*', 'folders:uid:*', 'folders:*', '*'],
        },
      ],
    });
    // naming oneself is asking about oneself
    expect((await evaluate(viewer, { action: 'teams:create', userId: viewer.id })).body).to.deep.equal({
      allow: false,
      reasons: ['no role grants teams:create on any scope'],
      reasonDetails: [{ kind: 'missing', action: 'teams:create' }],
    });
  });

  it('an org Admin sees every reason of another member, its custom roles, team grants and folders included', async () => {
    const res = await evaluate(admin, { action: 'dashboards:write', resource: { kind: 'dashboards', uid: 'ev-dash' }, userId: subject.id });
    expect(res.status).to.equal(200);
    const teamId = (await app.db('team_members').where('user_id', subject.id).first('team_id')).team_id;
    expect(res.body).to.deep.equal({
      allow: true,
      reasons: [`role managed:teams:${teamId}:permissions grants dashboards:write on dashboards:uid:ev-dash`],
      reasonDetails: [{ kind: 'grant', role: `managed:teams:${teamId}:permissions`, action: 'dashboards:write', scope: 'dashboards:uid:ev-dash' }],
    });
    const read = await evaluate(admin, { action: 'dashboards:read', resource: { kind: 'dashboards', uid: 'ev-dash' }, userId: subject.id });
    expect(read.body.reasons).to.deep.equal(['role custom:ev-secret-reader grants dashboards:read on folders:uid:ev-secret']);
  });

  it('hides from an asker the roles, teams and folders it may not read, and keeps what it named', async () => {
    const read = await evaluate(auditor, { action: 'dashboards:read', resource: { kind: 'dashboards', uid: 'ev-dash' }, userId: subject.id });
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.equal({
      allow: true,
      reasons: ['role (hidden) grants dashboards:read on folders:uid:(hidden)'],
      reasonDetails: [{ kind: 'grant', role: '(hidden)', action: 'dashboards:read', scope: 'folders:uid:(hidden)' }],
    });

    const write = await evaluate(auditor, { action: 'dashboards:write', resource: { kind: 'dashboards', uid: 'ev-dash' }, userId: subject.id });
    expect(write.body).to.deep.equal({
      allow: true,
      reasons: ['role (hidden) grants dashboards:write on dashboards:uid:ev-dash'],
      reasonDetails: [{ kind: 'grant', role: '(hidden)', action: 'dashboards:write', scope: 'dashboards:uid:ev-dash' }],
    });

    const denied = await evaluate(auditor, { action: 'dashboards:delete', resource: { kind: 'dashboards', uid: 'ev-dash' }, userId: subject.id });
    expect(denied.body).to.deep.equal({
      allow: false,
      reasons: [
        'no role grants dashboards:delete on dashboards:uid:ev-dash, folders:uid:(hidden), dashboards:uid:*, dashboards:*, folders:uid:*, folders:*, *',
      ],
      reasonDetails: [
        {
          kind: 'missing',
          action: 'dashboards:delete',
          scopes: ['dashboards:uid:ev-dash', 'folders:uid:(hidden)', 'dashboards:uid:*', 'dashboards:*', 'folders:uid:*', 'folders:*', '*'],
        },
      ],
    });
    const text = JSON.stringify([read.body, write.body, denied.body]);
    expect(text).to.not.include('ev-secret');
    expect(text).to.not.include('managed:teams');

    // the same asker about a Viewer: the basic roles are the same in every org and always show
    const basic = await evaluate(auditor, { action: 'teams:read', resource: { kind: 'teams', id: 'team-x' }, userId: viewer.id });
    expect(basic.body).to.deep.equal({
      allow: true,
      reasons: ['role basic:viewer grants teams:read on teams:*'],
      reasonDetails: [{ kind: 'grant', role: 'basic:viewer', action: 'teams:read', scope: 'teams:*' }],
    });
  });

  it('404 for a user who is not a member of the org', async () => {
    const stranger = await createUser(app, { orgId: null });
    for (const userId of [stranger.id, 'usr_missing']) {
      const res = await evaluate(admin, { action: 'teams:read', userId });
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal(`user ${userId} not found in this org`);
    }
  });

  it('400 for an unknown action, a resource of no known kind or shape, or an unknown field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ action: 'teams:frobnicate' }, 'body.action must be equal to one of the allowed values'],
      [{}, 'body.action is required'],
      [{ action: 'teams:read', resource: { kind: 'bananas', uid: 'b1' } }, 'resource: unknown resource kind bananas'],
      [
        { action: 'teams:read', resource: { scope: 'teams' } },
        'resource: resource must be {kind, uid}, {kind, id} or {scope} with a scope *, <kind>:* or <kind>:<attr>:<value>',
      ],
      [{ action: 'teams:read', resource: { kind: 'teams' } }, 'body.resource.uid is required'],
      [{ action: 'teams:read', subject: { id: 'x' } }, 'body.subject is not allowed'],
    ];
    for (const [body, message] of cases) {
      const res = await evaluate(admin, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message, JSON.stringify(body)).to.equal(message);
    }
  });

  it('enforces nothing and is not an authorize(): the decision metrics count the one that let the caller ask', async () => {
    const decisions = async () => {
      const metrics = await app.services.metrics.registry.getSingleMetricAsString('gatehouse_authorize_decisions_total');
      return [...metrics.matchAll(/outcome="(\w+)"} (\d+)/g)].reduce((sum, match) => sum + Number(match[2]), 0);
    };
    const before = await decisions();
    const res = await evaluate(viewer, { action: 'orgs:delete' });
    expect(res.body.allow).to.equal(false);
    expect((await decisions()) - before).to.equal(1);
  });
});
