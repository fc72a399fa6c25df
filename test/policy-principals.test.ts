/**
 * Who can: GET /api/access-control/resources/:kind/:uid/principals?action= lists the members
 * (users, service accounts) the policy allows the action on the resource, with the grants behind
 * each allow, and the teams and roles those grants come through.
 */
import { expect } from 'chai';
import { createRole } from '../src/accesscontrol/policy-writer.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  api,
  buildServiceAccount,
  buildTeam,
  createUser,
  DENIED,
  grantManagedPermissions,
  importLegacyAclEntries,
  type TestTeam,
  type TestUser,
} from './helpers/factories.ts';

describe('who can: GET /api/access-control/resources/:kind/:uid/principals', () => {
  let app: TestApp;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let granted: TestUser;
  let teamMember: TestUser;
  let legacyUser: TestUser;
  let disabledViewer: TestUser;
  let bystander: TestUser;
  let team: TestTeam;
  let robotId: string;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    granted = await createUser(app, { role: 'None' });
    teamMember = await createUser(app, { role: 'None' });
    legacyUser = await createUser(app, { role: 'None' });
    disabledViewer = await createUser(app, { role: 'Viewer', disabled: true });
    bystander = await createUser(app, { role: 'None' });
    team = await buildTeam(app, { members: [teamMember.id] });
    robotId = (await buildServiceAccount(app, { role: 'Viewer' })).id;

    expect((await api(app, admin).post('/api/folders', { uid: 'wc-parent', title: 'wc parent' })).status).to.equal(201);
    expect((await api(app, admin).post('/api/folders', { uid: 'wc-child', title: 'wc child', parentUid: 'wc-parent' })).status).to.equal(201);
    expect((await api(app, admin).post('/api/dashboards/db', { dashboard: { uid: 'wc-dash', title: 'wc' }, folderUid: 'wc-child' })).status).to.equal(200);
    expect((await api(app, admin).post('/api/folders/wc-parent/permissions', { items: [{ userId: granted.id, permission: 1 }] })).status).to.equal(200);
    expect((await api(app, admin).post('/api/folders/wc-child/permissions', { items: [{ teamId: team.id, permission: 2 }] })).status).to.equal(200);
    await importLegacyAclEntries(app, 'org_main', [{ dashboardUid: 'wc-dash', userId: legacyUser.id, permission: 1 }]);
  });
  after(async () => {
    await app.close();
  });

  const whoCan = (who: TestUser, kind: string, uid: string, action: string) =>
    api(app, who).get(`/api/access-control/resources/${kind}/${uid}/principals?action=${encodeURIComponent(action)}`);
  const idsOf = (holders: Array<{ userId: string }>) => holders.map((holder) => holder.userId);

  it('401 without credentials, 403 for a member who is not an org Admin', async () => {
    expect((await app.request('GET', '/api/access-control/resources/dashboards/wc-dash/principals?action=dashboards:read')).status).to.equal(401);
    for (const who of [editor, viewer]) {
      const res = await whoCan(who, 'dashboards', 'wc-dash', 'dashboards:read');
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(DENIED);
    }
  });

  it('400 for an unknown kind or action, 404 for a resource the org does not have', async () => {
    const unknownKind = await whoCan(admin, 'bananas', 'b1', 'dashboards:read');
    expect(unknownKind.status).to.equal(400);
    expect(unknownKind.body.message).to.equal('params.kind must be equal to one of the allowed values');
    const unknownAction = await whoCan(admin, 'dashboards', 'wc-dash', 'dashboards:frobnicate');
    expect(unknownAction.status).to.equal(400);
    expect(unknownAction.body.message).to.equal('query.action must be equal to one of the allowed values');
    const noAction = await api(app, admin).get('/api/access-control/resources/dashboards/wc-dash/principals');
    expect(noAction.status).to.equal(400);
    expect(noAction.body.message).to.equal('query.action is required');
    for (const kind of ['folders', 'dashboards', 'connectors', 'alert.rules', 'teams']) {
      const missing = await whoCan(admin, kind, 'wc-missing', `${kind === 'alert.rules' ? 'alert.rules' : kind}:read`);
      expect(missing.status, kind).to.equal(404);
      expect(missing.body.message).to.equal(`${kind} wc-missing not found`);
    }
  });

  it('lists who reads a dashboard and through what: org role, inherited folder grant, team, legacy ACL', async () => {
    const res = await whoCan(admin, 'dashboards', 'wc-dash', 'dashboards:read');
    expect(res.status).to.equal(200);
    expect(res.body.action).to.equal('dashboards:read');
    expect(res.body.resource).to.deep.equal({ kind: 'dashboards', uid: 'wc-dash' });
    const users = idsOf(res.body.users);
    expect(users).to.include.members([admin.id, editor.id, viewer.id, granted.id, teamMember.id, legacyUser.id]);
    expect(users).to.not.include.members([disabledViewer.id, bystander.id]);
    expect(idsOf(res.body.serviceAccounts)).to.deep.equal([robotId]);

    const grantsOf = (user: TestUser) => res.body.users.find((holder: { userId: string }) => holder.userId === user.id).grants;
    expect(grantsOf(granted)).to.deep.equal([
      {
        roleUid: `managed:users:${granted.id}:permissions`,
        action: 'dashboards:read',
        scope: 'folders:uid:wc-parent',
        inheritedFrom: 'wc-parent',
        via: { direct: true },
      },
    ]);
    const teamRole = `managed:teams:${team.id}:permissions`;
    expect(grantsOf(teamMember)).to.deep.equal([
      { roleUid: teamRole, action: 'dashboards:read', scope: 'folders:uid:wc-child', inheritedFrom: 'wc-child', via: { teams: [team.id] } },
    ]);
    expect(grantsOf(legacyUser)).to.deep.equal([{ legacyAcl: { level: 1, principal: `user:${legacyUser.id}` }, scope: 'dashboards:uid:wc-dash' }]);
    expect(grantsOf(viewer)).to.deep.include({ roleUid: 'basic:viewer', action: 'dashboards:read', scope: 'dashboards:*', via: { orgRole: 'Viewer' } });

    expect(res.body.teams).to.deep.equal([
      {
        teamId: team.id,
        name: team.name,
        grants: [{ roleUid: teamRole, action: 'dashboards:read', scope: 'folders:uid:wc-child', inheritedFrom: 'wc-child' }],
      },
    ]);
    const roles = res.body.roles.map((role: { uid: string }) => role.uid);
    expect(roles).to.include.members(['basic:viewer', teamRole, `managed:users:${granted.id}:permissions`]);
    expect(res.body.roles.find((role: { uid: string }) => role.uid === 'basic:viewer')).to.deep.equal({
      uid: 'basic:viewer',
      grants: [
        { action: 'dashboards:read', scope: 'dashboards:*' },
        { action: 'dashboards:read', scope: 'folders:*' },
      ],
    });
    expect(res.body.roles.find((role: { uid: string }) => role.uid === teamRole).grants).to.deep.equal([
      { action: 'dashboards:read', scope: 'folders:uid:wc-child', inheritedFrom: 'wc-child' },
    ]);
  });

  it('lists the teams, roles and org roles that hold the action, also those that reach no member', async () => {
    const empty = await buildTeam(app);
    await grantManagedPermissions(app, 'org_main', { kind: 'team', teamId: empty.id }, [{ action: 'dashboards:delete', scope: 'dashboards:uid:wc-dash' }]);
    await app.services.transact((tx) =>
      createRole(
        tx,
        'org_main',
        {
          uid: 'custom:wc-unassigned',
          name: 'custom:wc-unassigned',
          displayName: 'unassigned',
          description: '',
          groupName: '',
          permissions: [{ action: 'dashboards:delete', scope: 'folders:uid:wc-parent' }],
        },
        app.clock.now(),
      ),
    );
    await importLegacyAclEntries(app, 'org_main', [{ folderUid: 'wc-parent', role: 'Viewer', permission: 2 }]);

    const res = await whoCan(admin, 'dashboards', 'wc-dash', 'dashboards:delete');
    expect(res.status).to.equal(200);
    expect(res.body.teams).to.deep.equal(
      [
        {
          teamId: empty.id,
          name: empty.name,
          grants: [{ roleUid: `managed:teams:${empty.id}:permissions`, action: 'dashboards:delete', scope: 'dashboards:uid:wc-dash' }],
        },
        {
          teamId: team.id,
          name: team.name,
          grants: [{ roleUid: `managed:teams:${team.id}:permissions`, action: 'dashboards:delete', scope: 'folders:uid:wc-child', inheritedFrom: 'wc-child' }],
        },
      ].sort((a, b) => (a.name < b.name ? -1 : 1)),
    );
    const unassigned = res.body.roles.find((role: { uid: string }) => role.uid === 'custom:wc-unassigned');
    expect(unassigned).to.deep.equal({
      uid: 'custom:wc-unassigned',
      grants: [{ action: 'dashboards:delete', scope: 'folders:uid:wc-parent', inheritedFrom: 'wc-parent' }],
    });
    expect(res.body.roles.map((role: { uid: string }) => role.uid)).to.include.members(['basic:editor', 'basic:admin', 'fixed:dashboards:writer']);
    expect(res.body.roles.map((role: { uid: string }) => role.uid)).to.not.include('basic:viewer');

    // Viewers may delete it through the legacy ACL entry for their org role; Editors and Admins through their roles
    const viewers = res.body.orgRoles.find((entry: { role: string }) => entry.role === 'Viewer');
    expect(viewers).to.deep.equal({
      role: 'Viewer',
      grants: [{ legacyAcl: { level: 2, principal: 'role:Viewer' }, scope: 'folders:uid:wc-parent', inheritedFrom: 'wc-parent' }],
    });
    expect(res.body.orgRoles.map((entry: { role: string }) => entry.role).sort()).to.deep.equal(['Admin', 'Editor', 'Viewer']);
    expect(idsOf(res.body.users)).to.include(viewer.id);
    await importLegacyAclEntries(app, 'org_main', [{ dashboardUid: 'wc-dash', userId: legacyUser.id, permission: 1 }]);
  });

  it('a write: the team (Edit on the folder) and Editors, not the View grants or the level-1 ACL entry', async () => {
    const res = await whoCan(admin, 'dashboards', 'wc-dash', 'dashboards:write');
    const users = idsOf(res.body.users);
    expect(users).to.include.members([admin.id, editor.id, teamMember.id]);
    expect(users).to.not.include.members([viewer.id, granted.id, legacyUser.id]);
    expect(res.body.serviceAccounts).to.deep.equal([]);
  });

  it('a connector: its role entries let Viewers and Editors query it; without them only its grantees (and "*") may', async () => {
    const created = await api(app, admin).post('/api/connectors', {
      uid: 'wc-conn',
      name: 'wc conn',
      type: 'tsmetrics',
      url: 'http://prometheus.example:9090',
    });
    expect(created.status).to.equal(201);
    const open = await whoCan(admin, 'connectors', 'wc-conn', 'connectors:query');
    expect(idsOf(open.body.users)).to.include.members([viewer.id, editor.id]);

    const replaced = await api(app, admin).post('/api/connectors/wc-conn/permissions', { items: [{ userId: granted.id, permission: 1 }] });
    expect(replaced.status).to.equal(200);
    const narrowed = await whoCan(admin, 'connectors', 'wc-conn', 'connectors:query');
    expect(idsOf(narrowed.body.users)).to.include.members([granted.id, admin.id]);
    expect(idsOf(narrowed.body.users)).to.not.include.members([viewer.id, editor.id]);
  });

  it('alert rules are asked of their folder, teams by id', async () => {
    const rules = await whoCan(admin, 'alert.rules', 'wc-child', 'alert.rules:write');
    expect(rules.status).to.equal(200);
    expect(rules.body.resource).to.deep.equal({ kind: 'folders', uid: 'wc-child' });
    // the team's Edit on the folder is a folder grant: alert-rule grants are managed apart
    expect(idsOf(rules.body.users)).to.include.members([admin.id, editor.id]);
    expect(idsOf(rules.body.users)).to.not.include.members([viewer.id, teamMember.id]);

    const teams = await whoCan(admin, 'teams', team.id, 'teams:delete');
    expect(teams.status).to.equal(200);
    expect(teams.body.resource).to.deep.equal({ kind: 'teams', id: team.id });
    expect(idsOf(teams.body.users)).to.deep.equal([admin.id]);
  });
});
