/**
 * GET /api/access-control/policy-data and `npm run cli -- export-policy-data`: the org's data
 * document, exactly as the policy evaluates it. The proof is the recipe of policies/README.md: `opa eval` on the
 * Rego sources with the exported file reproduces the service's decisions (allowed, denied, a
 * connector's grants, folder inheritance, the legacy ACL), and the CLI writes the same document.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { AuthzInput, Decision } from '../src/authz/types.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, api, assignRole, createOrg, createUser, DENIED, importLegacyAclEntries, type TestUser } from './helpers/factories.ts';
import { findOpa, REPO_ROOT } from './helpers/opa.ts';
import { requirePeer } from './helpers/peers.ts';
import { runCli } from './helpers/cli.ts';

describe('policy data export (GET /api/access-control/policy-data, export-policy-data)', function () {
  // opa eval and each CLI run start a process
  this.timeout(60_000);
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let connectorUser: TestUser;
  let dir: string;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    outsider = await createUser(app, { role: 'None' });
    connectorUser = await createUser(app, { role: 'Viewer' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-policy-data-'));
    for (const [uid, parentUid] of [
      ['pd-parent', undefined],
      ['pd-child', 'pd-parent'],
    ]) {
      expect((await api(app, admin).post('/api/folders', { uid, title: uid, ...(parentUid && { parentUid }) })).status).to.equal(201);
    }
    const saved = await api(app, admin).post('/api/dashboards/db', { dashboard: { uid: 'pd-dash', title: 'pd dash' }, folderUid: 'pd-child' });
    expect(saved.status).to.equal(200);
    // the outsider (org role None) may view the parent folder, and so what is below it
    const granted = await api(app, admin).post('/api/folders/pd-parent/permissions', { items: [{ userId: outsider.id, permission: 1 }] });
    expect(granted.status).to.equal(200);
    // pd-open keeps the role entries it was made with; pd-conn's are replaced by a grant to connectorUser
    for (const uid of ['pd-open', 'pd-conn']) expect((await api(app, admin).post('/api/connectors', { uid, name: uid, type: 'changes' })).status).to.equal(201);
    const replaced = await api(app, admin).post('/api/connectors/pd-conn/permissions', { items: [{ userId: connectorUser.id, permission: 1 }] });
    expect(replaced.status).to.equal(200);
    await assignRole(app, 'org_main', viewer.id, 'custom:pd-writer', [{ action: 'dashboards:write', scope: 'folders:uid:pd-child' }]);
    // the outsider may also save the dashboard, by a legacy ACL entry: a reason of its own in every explanation
    await importLegacyAclEntries(app, 'org_main', [{ dashboardUid: 'pd-dash', userId: outsider.id, permission: 2 }]);
  });
  after(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const exportDocument = () => api(app, admin).get('/api/access-control/policy-data');

  it('401 without credentials, 403 for a member who is not an org Admin', async () => {
    expect((await app.request('GET', '/api/access-control/policy-data')).status).to.equal(401);
    for (const who of [viewer, outsider]) {
      const res = await api(app, who).get('/api/access-control/policy-data');
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('permission denied: you need policy.data:read to do this');
      expect(res.body.message).to.match(DENIED);
    }
  });

  it('answers the data document of the active org: its sections, members, folder chains and connector grants', async () => {
    const res = await exportDocument();
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(
      [
        'alert_rules',
        'builtin_roles',
        'chat_agents',
        'dashboards',
        'folders',
        'label_rules',
        'legacy_acl',
        'members',
        'org_id',
        'roles',
        'settings',
        'teams',
      ].sort(),
    );
    expect(res.body.org_id).to.equal('org_main');
    expect(res.body.members[viewer.id]).to.deep.include({ role: 'Viewer' });
    expect(res.body.members[viewer.id].roles).to.include('custom:pd-writer');
    expect(res.body.folders['pd-child']).to.deep.equal({ scopes: ['folders:uid:pd-child', 'folders:uid:pd-parent'] });
    expect(res.body.dashboards['pd-dash']).to.deep.equal({ folder: 'pd-child' });
    expect(res.body.roles['managed:builtins:viewer:permissions']['connectors:query']).to.deep.equal({ 'connectors:uid:pd-open': true });
    expect(res.body.roles[`managed:users:${connectorUser.id}:permissions`]['connectors:query']).to.deep.equal({ 'connectors:uid:pd-conn': true });
    expect(res.body.roles['custom:pd-writer']).to.deep.equal({ 'dashboards:write': { 'folders:uid:pd-child': true } });

    // the same document the engine holds: another org's export is that org's
    const other = await createUser(app, { role: 'Admin', orgId: null });
    const orgId = await createOrg(app);
    await addMember(app, orgId, other.id, 'Admin');
    const foreign = await api(app, other, orgId).get('/api/access-control/policy-data');
    expect(foreign.status).to.equal(200);
    expect(foreign.body.org_id).to.equal(orgId);
    expect(foreign.body.members).to.have.keys([other.id]);
  });

  describe('opa eval on the exported file reproduces the service', function () {
    const opa = findOpa();
    before(function () {
      requirePeer(this, 'opa');
    });

    /** The command of policies/README.md: opa eval -d policies/authz -d <data.json> -i <input.json> 'data.authz.decision'. */
    function opaDecision(dataFile: string, input: AuthzInput): Decision {
      const inputFile = path.join(dir, `input-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(inputFile, JSON.stringify(input));
      const output = execFileSync(
        opa!,
        ['eval', '--format', 'json', '-d', path.join(REPO_ROOT, 'policies/authz'), '-d', dataFile, '-i', inputFile, 'data.authz.decision'],
        { encoding: 'utf8' },
      );
      return JSON.parse(output).result[0].expressions[0].value as Decision;
    }

    it("for an allow, a deny, a connector's grants, folder inheritance and a legacy ACL entry", async () => {
      const dataFile = path.join(dir, 'data.json');
      fs.writeFileSync(dataFile, JSON.stringify((await exportDocument()).body));

      const subject = (user: TestUser) => ({ id: user.id, kind: 'user' as const, server_admin: false, disabled: false });
      const cases: Array<[string, AuthzInput, boolean]> = [
        [
          'a Viewer reads the dashboard',
          { subject: subject(viewer), org_id: 'org_main', action: 'dashboards:read', resource: { kind: 'dashboards', uid: 'pd-dash' } },
          true,
        ],
        [
          'a Viewer may not delete it',
          { subject: subject(viewer), org_id: 'org_main', action: 'dashboards:delete', resource: { kind: 'dashboards', uid: 'pd-dash' } },
          false,
        ],
        [
          'a custom role on the child folder writes the dashboard',
          { subject: subject(viewer), org_id: 'org_main', action: 'dashboards:write', resource: { kind: 'dashboards', uid: 'pd-dash' } },
          true,
        ],
        [
          'a connector without its role entries refuses a Viewer',
          { subject: subject(viewer), org_id: 'org_main', action: 'connectors:query', resource: { kind: 'connectors', uid: 'pd-conn' } },
          false,
        ],
        [
          'and allows its grantee',
          { subject: subject(connectorUser), org_id: 'org_main', action: 'connectors:query', resource: { kind: 'connectors', uid: 'pd-conn' } },
          true,
        ],
        [
          'a connector with its role entries lets a Viewer query it',
          { subject: subject(viewer), org_id: 'org_main', action: 'connectors:query', resource: { kind: 'connectors', uid: 'pd-open' } },
          true,
        ],
        [
          'a View grant on the parent folder reaches the dashboard in its child',
          { subject: subject(outsider), org_id: 'org_main', action: 'dashboards:read', resource: { kind: 'dashboards', uid: 'pd-dash' } },
          true,
        ],
        [
          'the legacy ACL entry lets the outsider save it',
          { subject: subject(outsider), org_id: 'org_main', action: 'dashboards:write', resource: { kind: 'dashboards', uid: 'pd-dash' } },
          true,
        ],
        [
          'but not delete the folder',
          { subject: subject(outsider), org_id: 'org_main', action: 'folders:delete', resource: { kind: 'folders', uid: 'pd-parent' } },
          false,
        ],
        ['without a resource, any scope counts', { subject: subject(outsider), org_id: 'org_main', action: 'folders:read' }, true],
      ];
      for (const [what, input, allowed] of cases) {
        const service = await app.services.engine.explain(input);
        expect(service.allow, what).to.equal(allowed);
        expect(opaDecision(dataFile, input), what).to.deep.equal(service);
      }
      const inherited = await app.services.engine.explain(cases[6]![1]);
      expect(inherited.reasons).to.deep.equal([
        { kind: 'acl', level: 2, scope: 'dashboards:uid:pd-dash', principal: `user:${outsider.id}` },
        { kind: 'grant', role: `managed:users:${outsider.id}:permissions`, action: 'dashboards:read', scope: 'folders:uid:pd-parent' },
      ]);
    });
  });

  describe('npm run cli -- export-policy-data', () => {
    const cli = (...args: string[]) => runCli(app, args);

    it('writes the document the API answers to --out, and refuses an unknown org or option', async () => {
      const out = path.join(dir, 'exported.json');
      const written = await cli('export-policy-data', '--org', 'org_main', '--out', out);
      expect(written, written.stderr).to.include({ code: 0 });
      expect(written.stdout.trim()).to.equal(`wrote the policy data of org org_main to ${out}`);
      expect(JSON.parse(fs.readFileSync(out, 'utf8'))).to.deep.equal((await exportDocument()).body);

      const missing = await cli('export-policy-data', '--org', 'org_nowhere');
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.include('error: org org_nowhere not found');
      const bad = await cli('export-policy-data', '--org', 'org_main', '--format', 'yaml');
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.include('error: unknown option --format');
    });

    it('explain prints the decision, its reasons and the input that reproduces it', async () => {
      const explained = await cli('explain', '--org', 'org_main', '--user', outsider.login, '--action', 'dashboards:read', '--resource', 'dashboards:pd-dash');
      expect(explained, explained.stderr).to.include({ code: 0 });
      const lines = explained.stdout.trim().split('\n');
      expect(lines[0]).to.equal(`allowed: ${outsider.login} dashboards:read on dashboards:pd-dash in org org_main`);
      expect(lines.slice(1, 3)).to.deep.equal([
        `  - legacy ACL grants level 2 on dashboards:uid:pd-dash to user:${outsider.id}`,
        `  - role managed:users:${outsider.id}:permissions grants dashboards:read on folders:uid:pd-parent`,
      ]);
      expect(JSON.parse(lines.at(-2)!.slice('reasons: '.length))).to.deep.equal([
        { kind: 'acl', level: 2, scope: 'dashboards:uid:pd-dash', principal: `user:${outsider.id}` },
        { kind: 'grant', role: `managed:users:${outsider.id}:permissions`, action: 'dashboards:read', scope: 'folders:uid:pd-parent' },
      ]);
      expect(JSON.parse(lines.at(-1)!.slice('input: '.length))).to.deep.equal({
        subject: { id: outsider.id, kind: 'user', server_admin: false, disabled: false },
        org_id: 'org_main',
        action: 'dashboards:read',
        resource: { kind: 'dashboards', uid: 'pd-dash' },
      });

      const denied = await cli('explain', '--org', 'org_main', '--user', viewer.login, '--action', 'teams:delete');
      expect(denied.stdout.split('\n').slice(0, 2)).to.deep.equal([
        `denied: ${viewer.login} teams:delete in org org_main`,
        '  - no role grants teams:delete on any scope',
      ]);

      const unknownAction = await cli('explain', '--org', 'org_main', '--user', viewer.login, '--action', 'teams:frobnicate');
      expect(unknownAction.code).to.equal(2);
      expect(unknownAction.stderr).to.include('error: --action must be a catalogued action, got "teams:frobnicate"');
      const stranger = await cli('explain', '--org', 'org_main', '--user', 'nobody-here', '--action', 'teams:read');
      expect(stranger.code).to.equal(2);
      expect(stranger.stderr).to.include('error: user nobody-here not found in org org_main');
    });
  });
});
