/**
 * Resource permissions: `/api/folders/:uid/permissions`, `/api/dashboards/uid/:uid/permissions`
 * and `/api/access-control/alert.rules/:folderUid/permissions`. What a grant gives is checked
 * through the API the grantee calls, not through the rows it leaves.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  auditEntries,
  buildRole,
  buildTeam,
  createOrg,
  createUser,
  DELEGATION_DENIED,
  DENIED,
  assignRole,
  type TestUser,
} from './helpers/factories.ts';

describe('resource permissions', () => {
  let app: TestApp;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let nobody: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    nobody = await createUser(app, { role: 'None' });
  });
  after(async () => {
    await app.close();
  });

  let sequence = 0;
  async function folder(parentUid?: string, who: TestUser = admin): Promise<string> {
    sequence += 1;
    const res = await api(app, who).post('/api/folders', { uid: `rp-f${sequence}`, title: `rp folder ${sequence}`, ...(parentUid && { parentUid }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  async function dashboard(folderUid: string, who: TestUser = admin): Promise<string> {
    sequence += 1;
    const res = await api(app, who).post('/api/dashboards/db', { dashboard: { uid: `rp-d${sequence}`, title: `rp dashboard ${sequence}` }, folderUid });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.uid;
  }
  const folderPermissions = (uid: string) => `/api/folders/${uid}/permissions`;
  const dashboardPermissions = (uid: string) => `/api/dashboards/uid/${uid}/permissions`;
  const alertRulePermissions = (folderUid: string) => `/api/access-control/alert.rules/${folderUid}/permissions`;
  async function replace(path: string, items: unknown[], who: TestUser = admin): Promise<void> {
    const res = await api(app, who).post(path, { items });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }
  const readDashboard = (who: TestUser, uid: string) => api(app, who).get(`/api/dashboards/uid/${uid}`);
  const saveDashboard = (who: TestUser, uid: string, folderUid: string) =>
    api(app, who).post('/api/dashboards/db', { dashboard: { uid, title: `saved ${uid}` }, folderUid, overwrite: true });

  describe('access', () => {
    let uid: string;
    let dash: string;
    before(async () => {
      uid = await folder();
      dash = await dashboard(uid);
    });
    const paths = () => [folderPermissions(uid), dashboardPermissions(dash), alertRulePermissions(uid)];

    it('401 without credentials on every endpoint', async () => {
      for (const path of paths()) {
        expect((await app.request('GET', path)).status, path).to.equal(401);
        expect((await app.request('POST', path, { body: { items: [] } })).status, path).to.equal(401);
      }
    });

    it('403 for members without *.permissions:read|write on the resource, Editors and Viewers included', async () => {
      for (const who of [viewer, editor, nobody]) {
        for (const path of paths()) {
          const read = await api(app, who).get(path);
          expect(read.status, path).to.equal(403);
          expect(read.body.message).to.match(DENIED);
          expect((await api(app, who).post(path, { items: [] })).status, path).to.equal(403);
        }
      }
    });

    it('an org Admin reads and replaces them; an unknown resource is 404', async () => {
      for (const path of paths()) {
        expect((await api(app, admin).get(path)).status, path).to.equal(200);
        expect((await api(app, admin).post(path, { items: [{ role: 'Viewer', permission: 1 }] })).status, path).to.equal(200);
      }
      for (const path of [folderPermissions('nope'), dashboardPermissions('nope'), alertRulePermissions('nope')]) {
        expect((await api(app, admin).get(path)).status, path).to.equal(404);
        expect((await api(app, admin).post(path, { items: [] })).status, path).to.equal(404);
      }
    });

    it("a resource of another org is 404, even to that org's admin asking from here", async () => {
      const other = await createOrg(app);
      await addMember(app, other, admin.id, 'Admin');
      const foreign = await api(app, admin, other).post('/api/folders', { uid: 'rp-foreign', title: 'foreign' });
      expect(foreign.status).to.equal(201);
      expect((await api(app, admin).get(folderPermissions('rp-foreign'))).status).to.equal(404);
      expect((await api(app, admin).post(folderPermissions('rp-foreign'), { items: [{ userId: nobody.id, permission: 4 }] })).status).to.equal(404);
      expect((await api(app, admin, other).get(folderPermissions('rp-foreign'))).status).to.equal(200);
    });
  });

  describe('bad input', () => {
    let uid: string;
    before(async () => {
      uid = await folder();
    });

    it('400 for items that name no principal or more than one, a level other than 1, 2 or 4, or unknown fields', async () => {
      const bad: unknown[] = [
        {},
        { items: 'all' },
        { items: [{ permission: 1 }] },
        { items: [{ userId: nobody.id, teamId: 'x', permission: 1 }] },
        { items: [{ userId: nobody.id, role: 'Viewer', permission: 1 }] },
        { items: [{ userId: nobody.id, permission: 3 }] },
        { items: [{ userId: nobody.id, permission: '1' }] },
        { items: [{ role: 'Owner', permission: 1 }] },
        { items: [{ role: 'None', permission: 1 }] },
        { items: [{ userId: nobody.id, permission: 1, scope: '*' }] },
        {
          items: [
            { userId: nobody.id, permission: 1 },
            { userId: nobody.id, permission: 2 },
          ],
        },
        {
          items: [
            { role: 'Viewer', permission: 1 },
            { role: 'Viewer', permission: 4 },
          ],
        },
      ];
      for (const body of bad) {
        const res = await api(app, admin).post(folderPermissions(uid), body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message, JSON.stringify(body)).to.be.a('string').and.not.equal('');
      }
      expect((await api(app, admin).get(folderPermissions(uid))).body).to.deep.equal([
        { userId: admin.id, userLogin: admin.login, teamId: null, team: null, role: null, permission: 4, permissionName: 'Admin', inherited: false },
      ]);
    });

    it('400 for a user or team that is not of this org, and nothing changes', async () => {
      const other = await createOrg(app);
      const stranger = await createUser(app, { orgId: other });
      const foreignTeam = await buildTeam(app, { orgId: other });
      for (const item of [
        { userId: stranger.id, permission: 1 },
        { userId: 'usr_missing', permission: 1 },
        { teamId: foreignTeam.id, permission: 1 },
        { teamId: 'team_missing', permission: 1 },
      ]) {
        const res = await api(app, admin).post(folderPermissions(uid), { items: [{ role: 'Editor', permission: 2 }, item] });
        expect(res.status, JSON.stringify(item)).to.equal(400);
        expect(res.body.message).to.match(/^items\[1\]\.(userId|teamId): /);
      }
      const listed = (await api(app, admin).get(folderPermissions(uid))).body as Array<{ role: string | null }>;
      expect(listed.map((grant) => grant.role)).to.deep.equal([null]);
    });
  });

  describe('folders', () => {
    it('the creator administers a new folder and its new dashboard', async () => {
      const uid = await folder(undefined, editor);
      const dash = await dashboard(uid, editor);
      const mine = { userId: editor.id, userLogin: editor.login, teamId: null, team: null, role: null, permission: 4, permissionName: 'Admin' };
      expect((await api(app, editor).get(folderPermissions(uid))).body).to.deep.equal([{ ...mine, inherited: false }]);
      expect((await api(app, editor).get(dashboardPermissions(dash))).body).to.deep.equal([
        { ...mine, inherited: false },
        { ...mine, inherited: true, folderUid: uid },
      ]);
      // and may share it: Editors hold every folder action, so delegation lets them
      await replace(folderPermissions(uid), [{ userId: nobody.id, permission: 1 }], editor);
      expect((await readDashboard(nobody, dash)).status).to.equal(200);
    });

    it('View reads the folder, its subfolders and their dashboards; Edit writes them; an empty list takes it back', async () => {
      const top = await folder();
      const child = await folder(top);
      const dash = await dashboard(child);
      const elsewhere = await dashboard(await folder());
      expect((await readDashboard(nobody, dash)).status).to.equal(403);

      await replace(folderPermissions(top), [{ userId: nobody.id, permission: 1 }]);
      expect((await api(app, nobody).get(`/api/folders/${child}`)).status).to.equal(200);
      expect((await readDashboard(nobody, dash)).status).to.equal(200);
      expect((await readDashboard(nobody, elsewhere)).status).to.equal(403);
      expect((await saveDashboard(nobody, dash, child)).status).to.equal(403);

      await replace(folderPermissions(top), [{ userId: nobody.id, permission: 2 }]);
      expect((await saveDashboard(nobody, dash, child)).status).to.equal(200);
      expect((await api(app, nobody).get(folderPermissions(top))).status, 'Edit does not manage permissions').to.equal(403);

      await replace(folderPermissions(top), []);
      expect((await readDashboard(nobody, dash)).status).to.equal(403);
      expect((await api(app, admin).get(folderPermissions(top))).body).to.deep.equal([]);
    });

    it('a grant to a role reaches everyone of that role and above; a grant to a team reaches its members', async () => {
      const uid = await folder();
      const dash = await dashboard(uid);
      const member = await createUser(app, { role: 'None' });
      const team = await buildTeam(app, { members: [member.id] });
      expect((await saveDashboard(viewer, dash, uid)).status).to.equal(403);
      await replace(folderPermissions(uid), [
        { role: 'Viewer', permission: 2 },
        { teamId: team.id, permission: 1 },
      ]);
      expect((await saveDashboard(viewer, dash, uid)).status).to.equal(200);
      expect((await readDashboard(member, dash)).status).to.equal(200);
      expect((await saveDashboard(member, dash, uid)).status).to.equal(403);
      expect((await readDashboard(nobody, dash)).status).to.equal(403);
      const listed = (await api(app, admin).get(folderPermissions(uid))).body;
      expect(listed).to.deep.equal([
        { userId: null, userLogin: null, teamId: null, team: null, role: 'Viewer', permission: 2, permissionName: 'Edit', inherited: false },
        { userId: null, userLogin: null, teamId: team.id, team: team.name, role: null, permission: 1, permissionName: 'View', inherited: false },
      ]);
    });

    it('audits permission.granted and permission.revoked for every principal whose level changed', async () => {
      const uid = await folder();
      const before = (await auditEntries(app, { target_id: uid })).length;
      await replace(folderPermissions(uid), [
        { userId: nobody.id, permission: 1 },
        { role: 'Editor', permission: 2 },
      ]);
      await replace(folderPermissions(uid), [
        { userId: nobody.id, permission: 4 },
        { role: 'Editor', permission: 2 },
      ]);
      const entries = (await auditEntries(app, { target_id: uid })).slice(before);
      const summary = entries.map((entry) => [entry.action, entry.metadata!.userId ?? entry.metadata!.role, entry.metadata!.permission]);
      expect(summary).to.deep.equal([
        // the creator's Admin goes with the first replacement
        ['permission.revoked', admin.id, 4],
        ['permission.granted', nobody.id, 1],
        ['permission.granted', 'Editor', 2],
        ['permission.revoked', nobody.id, 1],
        ['permission.granted', nobody.id, 4],
      ]);
      expect(entries.every((entry) => entry.target_type === 'folder' && entry.actor_id === admin.id && entry.org_id === 'org_main')).to.equal(true);
    });

    it('deleting the folder takes its grants with it: a new folder of the same uid starts bare', async () => {
      const uid = await folder();
      await replace(folderPermissions(uid), [{ userId: nobody.id, permission: 4 }]);
      expect((await api(app, admin).delete(`/api/folders/${uid}`)).status).to.equal(200);
      expect(await app.count('role_permissions', { scope: `folders:uid:${uid}` })).to.equal(0);
      const again = await api(app, admin).post('/api/folders', { uid, title: 'again' });
      expect(again.status).to.equal(201);
      expect((await api(app, nobody).get(`/api/folders/${uid}`)).status).to.equal(403);
    });
  });

  describe('dashboards', () => {
    it('a grant on one dashboard gives nothing on another of the same folder', async () => {
      const uid = await folder();
      const granted = await dashboard(uid);
      const other = await dashboard(uid);
      await replace(dashboardPermissions(granted), [{ userId: nobody.id, permission: 2 }]);
      expect((await readDashboard(nobody, granted)).status).to.equal(200);
      expect((await saveDashboard(nobody, granted, uid)).status).to.equal(200);
      expect((await readDashboard(nobody, other)).status).to.equal(403);
      expect((await api(app, nobody).get(`/api/folders/${uid}`)).status).to.equal(403);
    });

    it('GET lists the direct grants, then those of each folder above, nearest first, marked inherited', async () => {
      const top = await folder();
      const child = await folder(top);
      const dash = await dashboard(child);
      await replace(folderPermissions(top), [{ role: 'Viewer', permission: 1 }]);
      await replace(folderPermissions(child), [{ userId: nobody.id, permission: 2 }]);
      await replace(dashboardPermissions(dash), [{ userId: viewer.id, permission: 4 }]);
      const listed = (await api(app, admin).get(dashboardPermissions(dash))).body as Array<Record<string, unknown>>;
      expect(listed.map((grant) => [grant.userId ?? grant.role, grant.permissionName, grant.inherited, grant.folderUid])).to.deep.equal([
        [viewer.id, 'Admin', false, undefined],
        [nobody.id, 'Edit', true, child],
        ['Viewer', 'View', true, top],
      ]);
      // the folder grant reaches the dashboard: an inherited grant only adds
      expect((await saveDashboard(nobody, dash, child)).status).to.equal(200);
      // Admin on the dashboard manages its permissions, not the folder's
      expect((await api(app, viewer).get(dashboardPermissions(dash))).status).to.equal(200);
      expect((await api(app, viewer).get(folderPermissions(child))).status).to.equal(403);
    });

    it('overwriting a dashboard by uid keeps its grants', async () => {
      const uid = await folder();
      const dash = await dashboard(uid);
      await replace(dashboardPermissions(dash), [{ userId: nobody.id, permission: 2 }]);
      expect((await saveDashboard(admin, dash, uid)).status).to.equal(200);
      expect((await readDashboard(nobody, dash)).status).to.equal(200);
    });
  });

  describe('alert rules', () => {
    const rule = (folderUID: string, uid: string) => ({
      uid,
      title: uid,
      folderUID,
      ruleGroup: 'group',
      condition: 'A',
      // An expression only: reading a connector would also need query on it (test/alert-rules.connectors.test.ts).
      data: [{ refId: 'A', datasourceUid: '__expr__', model: { type: 'math', expression: '1' } }],
    });

    it('grants on the rules of a folder reach its rules and nothing else of the folder; folder grants stay apart', async () => {
      const top = await folder();
      const child = await folder(top);
      await replace(folderPermissions(top), [{ userId: viewer.id, permission: 1 }]);
      await replace(alertRulePermissions(top), [{ userId: nobody.id, permission: 2 }]);
      expect((await api(app, nobody).post('/api/v1/provisioning/alert-rules', rule(child, `rp-r${++sequence}`))).status).to.equal(201);
      expect((await api(app, nobody).get(`/api/folders/${top}`)).status).to.equal(403);
      // each endpoint lists and replaces its own grants only (the folder's reach the rules, listed as inherited)
      const ruleGrants = (await api(app, admin).get(alertRulePermissions(top))).body as Array<{ userId: string; inherited: boolean }>;
      expect(ruleGrants.filter((grant) => !grant.inherited).map((grant) => grant.userId)).to.deep.equal([nobody.id]);
      expect(ruleGrants.filter((grant) => grant.inherited).map((grant) => grant.userId)).to.deep.equal([viewer.id]);
      expect(((await api(app, admin).get(folderPermissions(top))).body as Array<{ userId: string }>).map((grant) => grant.userId)).to.deep.equal([viewer.id]);
      await replace(folderPermissions(top), []);
      expect((await api(app, nobody).post('/api/v1/provisioning/alert-rules', rule(child, `rp-r${++sequence}`))).status).to.equal(201);
      await replace(alertRulePermissions(top), []);
      expect((await api(app, nobody).post('/api/v1/provisioning/alert-rules', rule(child, `rp-r${++sequence}`))).status).to.equal(403);
      const audit = await auditEntries(app, { target_id: top, target_type: 'alert.rules', action: 'permission.revoked' });
      expect(audit.map((entry) => entry.metadata!.userId)).to.deep.equal([nobody.id]);
    });

    it("a folder's grants reach the alert rules in it and below at the same level: View reads, Edit writes, Admin manages their grants", async () => {
      const top = await folder();
      const child = await folder(top);
      const elsewhere = await folder();
      const member = await createUser(app, { role: 'Viewer' });
      const reader = await createUser(app, { role: 'None' });
      const rules = '/api/v1/provisioning/alert-rules';
      await replace(folderPermissions(top), [
        { userId: member.id, permission: 2 },
        { userId: reader.id, permission: 1 },
      ]);
      const first = `rp-r${++sequence}`;
      expect((await api(app, member).post(rules, rule(top, first))).status).to.equal(201);
      const second = `rp-r${++sequence}`;
      expect((await api(app, member).post(rules, rule(child, second))).status).to.equal(201);
      expect((await api(app, member).put(`${rules}/${second}`, { ...rule(child, second), uid: undefined, title: 'renamed' })).status).to.equal(200);
      expect((await api(app, reader).get(`${rules}/${second}`)).status).to.equal(200);
      expect((await api(app, reader).post(rules, rule(child, `rp-r${++sequence}`))).status).to.equal(403);
      expect((await api(app, member).delete(`${rules}/${first}`)).status).to.equal(204);
      const outside = await api(app, member).post(rules, rule(elsewhere, `rp-r${++sequence}`));
      expect(outside.status).to.equal(403);
      expect(outside.body.message).to.include('alert.rules:create');
      expect((await api(app, member).get(alertRulePermissions(child))).status, 'Edit does not manage permissions').to.equal(403);

      await replace(folderPermissions(top), [{ userId: member.id, permission: 4 }]);
      expect((await api(app, member).get(alertRulePermissions(child))).status).to.equal(200);
      await replace(alertRulePermissions(child), [{ userId: reader.id, permission: 2 }], member);
      expect((await api(app, reader).post(rules, rule(child, `rp-r${++sequence}`))).status).to.equal(201);

      // taking the folder grant away takes the rules with it; the alert-rule grant stays
      await replace(folderPermissions(top), []);
      expect((await api(app, member).post(rules, rule(child, `rp-r${++sequence}`))).status).to.equal(403);
      expect((await api(app, reader).post(rules, rule(child, `rp-r${++sequence}`))).status).to.equal(201);
    });

    it('GET lists the alert-rule grants of the folder, then those that reach its rules from it and each folder above, marked inherited', async () => {
      const top = await folder();
      const child = await folder(top);
      await replace(folderPermissions(top), [{ role: 'Viewer', permission: 1 }]);
      await replace(alertRulePermissions(top), [{ userId: nobody.id, permission: 2 }]);
      await replace(folderPermissions(child), [{ userId: editor.id, permission: 4 }]);
      await replace(alertRulePermissions(child), [{ userId: viewer.id, permission: 4 }]);
      const listed = (await api(app, admin).get(alertRulePermissions(child))).body as Array<Record<string, unknown>>;
      expect(listed.map((grant) => [grant.userId ?? grant.role, grant.permissionName, grant.inherited, grant.folderUid])).to.deep.equal([
        [viewer.id, 'Admin', false, undefined],
        [editor.id, 'Admin', true, child],
        ['Viewer', 'View', true, top],
        [nobody.id, 'Edit', true, top],
      ]);
      // each endpoint still replaces only its own grants
      expect(((await api(app, admin).get(folderPermissions(child))).body as Array<{ userId: string }>).map((grant) => grant.userId)).to.deep.equal([editor.id]);
    });
  });

  describe('anti-escalation', () => {
    it('a folder Admin shares what it holds, below it too, but not a folder it does not administer', async () => {
      const top = await folder();
      const child = await folder(top);
      const sibling = await folder();
      const delegate = await createUser(app, { role: 'None' });
      await replace(folderPermissions(top), [{ userId: delegate.id, permission: 4 }]);
      await replace(folderPermissions(child), [{ userId: nobody.id, permission: 4 }], delegate);
      await replace(dashboardPermissions(await dashboard(child)), [{ userId: nobody.id, permission: 2 }], delegate);
      const refused = await api(app, delegate).post(folderPermissions(sibling), { items: [{ userId: nobody.id, permission: 1 }] });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(DENIED);
    });

    it('a caller who may manage permissions but does not hold what a level gives is refused, and nothing changes', async () => {
      const uid = await folder();
      const manager = await createUser(app, { role: 'None' });
      const role = buildRole({
        permissions: [
          { action: 'folders.permissions:write', scope: 'folders:*' },
          { action: 'folders.permissions:read', scope: 'folders:*' },
          { action: 'folders:read', scope: 'folders:*' },
          { action: 'dashboards:read', scope: 'folders:*' },
          { action: 'alert.rules:read', scope: 'folders:*' },
        ],
      });
      await assignRole(app, 'org_main', manager.id, role.uid, role.permissions);
      await replace(folderPermissions(uid), [{ userId: nobody.id, permission: 1 }], manager);
      const refused = await api(app, manager).post(folderPermissions(uid), { items: [{ userId: nobody.id, permission: 2 }] });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(DELEGATION_DENIED);
      const listed = (await api(app, admin).get(folderPermissions(uid))).body as Array<{ permission: number }>;
      expect(listed.map((grant) => grant.permission)).to.deep.equal([1]);
    });

    it('a folder level gives the alert-rule actions it carries: granting it needs them too', async () => {
      const uid = await folder();
      const manager = await createUser(app, { role: 'None' });
      const role = buildRole({
        permissions: ['folders.permissions:write', 'folders.permissions:read', 'folders:read', 'dashboards:read'].map((action) => ({
          action,
          scope: 'folders:*',
        })),
      });
      await assignRole(app, 'org_main', manager.id, role.uid, role.permissions);
      const refused = await api(app, manager).post(folderPermissions(uid), { items: [{ userId: nobody.id, permission: 1 }] });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(DELEGATION_DENIED);
      expect((await api(app, admin).get(folderPermissions(uid))).body.map((grant: { userId: string }) => grant.userId)).to.deep.equal([admin.id]);
    });
  });

  describe('managed roles', () => {
    it('grants become hidden managed roles: listed only with includeHidden, refused by role delete', async () => {
      const uid = await folder();
      await replace(folderPermissions(uid), [{ role: 'Editor', permission: 1 }]);
      const plain = await api(app, admin).get('/api/access-control/roles?perpage=1000');
      expect(plain.body.roles.map((r: { uid: string }) => r.uid)).not.to.include('managed:builtins:editor:permissions');
      const hidden = await api(app, admin).get('/api/access-control/roles?perpage=1000&includeHidden=true');
      expect(hidden.body.roles.find((r: { uid: string }) => r.uid === 'managed:builtins:editor:permissions')).to.include({ hidden: true });
      const refused = await api(app, admin).delete('/api/access-control/roles/managed:builtins:editor:permissions');
      expect(refused.status).to.equal(400);
    });
  });

  describe('concurrency', () => {
    it('parallel replacements of one folder leave exactly one of the requested sets', async () => {
      const uid = await folder();
      const users = await Promise.all(Array.from({ length: 10 }, () => createUser(app, { role: 'None' })));
      const sets = Array.from({ length: 20 }, (_, i) => [
        { userId: users[i % users.length]!.id, permission: 1 },
        { userId: users[(i + 1) % users.length]!.id, permission: 2 },
      ]);
      const results = await Promise.all(sets.map((items) => api(app, admin).post(folderPermissions(uid), { items })));
      expect(results.map((res) => res.status)).to.deep.equal(sets.map(() => 200));
      const listed = (await api(app, admin).get(folderPermissions(uid))).body as Array<{ userId: string; permission: number }>;
      const key = (items: Array<{ userId: string; permission: number }>) =>
        items
          .map((item) => `${item.userId}:${item.permission}`)
          .sort()
          .join(',');
      expect(sets.map(key)).to.include(key(listed));
    });

    it('50 folders given the same 100 members at once: every grant applied, audited and enforced', async function () {
      this.timeout(60_000);
      const users = await Promise.all(Array.from({ length: 100 }, () => createUser(app, { role: 'None' })));
      const uids: string[] = [];
      for (let i = 0; i < 50; i++) uids.push(await folder());
      const items = users.map((user, i) => ({ userId: user.id, permission: [1, 2, 4][i % 3]! }));
      const results = await Promise.all(uids.map((uid) => api(app, admin).post(folderPermissions(uid), { items })));
      expect(results.map((res) => res.status)).to.deep.equal(uids.map(() => 200));
      for (const uid of [uids[0]!, uids[49]!]) {
        const listed = (await api(app, admin).get(folderPermissions(uid))).body as Array<{ userId?: string; permission: number }>;
        expect(
          listed
            .filter((grant) => grant.userId)
            .map((grant) => `${grant.userId}:${grant.permission}`)
            .sort(),
        ).to.deep.equal(items.map((item) => `${item.userId}:${item.permission}`).sort());
        expect(await auditEntries(app, { action: 'permission.granted', target_id: uid })).to.have.length(100);
      }
      // the last member holds View on the last folder: reads it at the next request
      const reader = users[99]!;
      expect((await api(app, reader).get(`/api/folders/${uids[49]}`)).status).to.equal(200);
    });
  });
});
