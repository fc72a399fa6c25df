/** `/api/folders…`: the tree, its limits, its policy (inheritance follows moves) and the cascade on delete. */
import { expect } from 'chai';
import { insertDashboard } from '../src/dashboards/store.ts';
import { MAX_FOLDER_DELETE_ITEMS } from '../src/folders/tree-delete.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, auditEntries, buildRole, createUser, DENIED, grantManagedPermissions, refusalEntries, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';

describe('folders', () => {
  let app: TestApp;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;

  before(async () => {
    app = await startTestApp();
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    outsider = await createUser(app, { role: 'None' });
    // the connector the alert rules read: its list lets every Viewer and Editor query it
    const admin = await createUser(app, { role: 'Admin' });
    expect((await api(app, admin).post('/api/connectors', { uid: 'prom', name: 'prom', type: 'changes' })).status).to.equal(201);
  });
  after(async () => {
    await app.close();
  });

  async function createFolder(body: Record<string, unknown>, who: TestUser = editor): Promise<string> {
    const res = await api(app, who).post('/api/folders', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  /** A dashboard and an alert rule in the folder, made through the API like any user's. */
  async function addDashboard(folderUid: string, uid: string): Promise<void> {
    const res = await api(app, editor).post('/api/dashboards/db', { dashboard: { uid, title: uid }, folderUid });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }
  async function addAlertRule(folderUid: string, uid: string): Promise<void> {
    const res = await api(app, editor).post('/api/v1/provisioning/alert-rules', {
      uid,
      title: uid,
      folderUID: folderUid,
      ruleGroup: 'group',
      condition: 'A',
      data: [{ refId: 'A', datasourceUid: 'prom', model: { expr: 'up' } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  }
  /** A chain of `levels` nested folders; returns their uids, root first. */
  async function chain(levels: number, tag: string): Promise<string[]> {
    const uids: string[] = [];
    for (let level = 1; level <= levels; level += 1)
      uids.push(await createFolder({ uid: `${tag}-${level}`, title: `${tag} ${level}`, ...(uids.length > 0 && { parentUid: uids.at(-1) }) }));
    return uids;
  }

  describe('POST /api/folders', () => {
    it('401 without credentials, 403 for a Viewer', async () => {
      expect((await app.request('POST', '/api/folders', { body: { title: 'x' } })).status).to.equal(401);
      const res = await api(app, viewer).post('/api/folders', { title: 'x' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(DENIED);
    });

    it('creates a root folder with a generated uid, audited', async () => {
      const res = await api(app, editor).post('/api/folders', { title: '  Ops  ', description: 'on call' });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ title: 'Ops', description: 'on call', orgId: ORG, createdBy: editor.id });
      expect(res.body.uid).to.match(/^[A-Za-z0-9]{14}$/);
      expect(res.body.url).to.equal(`/dashboards/f/${res.body.uid}/`);
      expect(res.body).not.to.have.property('parentUid');
      const [entry] = await auditEntries(app, { action: 'folder.created', target_id: res.body.uid });
      expect(entry).to.include({ actor_id: editor.id, org_id: ORG, target_name: 'Ops', outcome: 'success' });
    });

    it('refuses unsafe or reserved uids (400) and a taken one (409)', async () => {
      for (const uid of ['*', '', 'a*', ':', 'a:b', '../x', '%2A', 'a/b', 'a b', 'general', 'x'.repeat(41)]) {
        const res = await api(app, editor).post('/api/folders', { uid, title: 'bad' });
        expect(res.status, uid).to.equal(400);
        expect(res.body.message).to.match(/^body\.uid /);
      }
      await createFolder({ uid: 'taken', title: 'first' });
      expect((await api(app, editor).post('/api/folders', { uid: 'taken', title: 'second' })).status).to.equal(409);
      expect(await app.count('folders', { title: 'bad' })).to.equal(0);
    });

    it('refuses a blank title, unknown fields and a missing parent (400)', async () => {
      expect((await api(app, editor).post('/api/folders', { title: '   ' })).status).to.equal(400);
      expect((await api(app, editor).post('/api/folders', {})).status).to.equal(400);
      expect((await api(app, editor).post('/api/folders', { title: 't', color: 'red' })).status).to.equal(400);
      const res = await api(app, editor).post('/api/folders', { title: 't', parentUid: 'no-such-folder' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include('no-such-folder');
    });

    it('nests 8 levels deep and refuses the 9th (400)', async () => {
      const uids = await chain(8, 'deep');
      const res = await api(app, editor).post('/api/folders', { uid: 'deep-9', title: 'too deep', parentUid: uids.at(-1) });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include('8 levels');
      expect((await api(app, editor).get('/api/folders/deep-8')).body.parentUid).to.equal('deep-7');
    });
  });

  describe('GET /api/folders and /api/folders/:uid', () => {
    it('401, 403 for a member without folder rights, 404 for an unknown uid', async () => {
      const uid = await createFolder({ title: 'readable' });
      expect((await app.request('GET', '/api/folders')).status).to.equal(401);
      expect((await app.request('GET', `/api/folders/${uid}`)).status).to.equal(401);
      expect((await api(app, outsider).get('/api/folders')).status).to.equal(403);
      expect((await api(app, outsider).get(`/api/folders/${uid}`)).status).to.equal(403);
      expect((await api(app, viewer).get(`/api/folders/${uid}`)).body.title).to.equal('readable');
      expect((await api(app, viewer).get('/api/folders/nope')).status).to.equal(404);
    });

    it('lists root folders or the children of parentUid, paged', async () => {
      const parent = await createFolder({ uid: 'list-parent', title: 'List parent' });
      for (const title of ['c', 'a', 'b']) await createFolder({ title: `child ${title}`, parentUid: parent });
      const children = await api(app, viewer).get('/api/folders?parentUid=list-parent&perpage=2&page=1');
      expect(children.status).to.equal(200);
      expect(children.body).to.include({ totalCount: 3, page: 1, perPage: 2 });
      expect(children.body.folders.map((f: { title: string }) => f.title)).to.deep.equal(['child a', 'child b']);
      const second = await api(app, viewer).get('/api/folders?parentUid=list-parent&perpage=2&page=2');
      expect(second.body.folders.map((f: { title: string }) => f.title)).to.deep.equal(['child c']);
      const roots = await api(app, viewer).get('/api/folders?perpage=1000');
      expect(roots.body.folders.map((f: { uid: string }) => f.uid)).to.include(parent);
      expect(roots.body.folders.every((f: { parentUid?: string }) => f.parentUid === undefined)).to.equal(true);
      expect((await api(app, viewer).get('/api/folders?perpage=0')).status).to.equal(400);
    });

    it('shows a member only the folders a grant lets them read, children included', async () => {
      const granted = await createFolder({ uid: 'granted', title: 'Granted' });
      await createFolder({ uid: 'granted-child', title: 'Granted child', parentUid: granted });
      await createFolder({ uid: 'hidden', title: 'Hidden' });
      const reader = await createUser(app, { role: 'None' });
      await grantManagedPermissions(app, ORG, { kind: 'user', userId: reader.id }, [{ action: 'folders:read', scope: 'folders:uid:granted' }]);
      const roots = await api(app, reader).get('/api/folders');
      expect(roots.body.folders.map((f: { uid: string }) => f.uid)).to.deep.equal(['granted']);
      expect(roots.body.totalCount).to.equal(1);
      expect((await api(app, reader).get('/api/folders?parentUid=granted')).body.folders.map((f: { uid: string }) => f.uid)).to.deep.equal(['granted-child']);
      expect((await api(app, reader).get('/api/folders/granted-child')).status).to.equal(200);
      expect((await api(app, reader).get('/api/folders/hidden')).status).to.equal(403);
    });
  });

  describe('GET /api/folders/:uid/counts', () => {
    it('counts subfolders, dashboards and alert rules; 401, 403, 404', async () => {
      const uid = await createFolder({ uid: 'counted', title: 'Counted' });
      await createFolder({ title: 'sub', parentUid: uid });
      await addDashboard(uid, 'counted-d1');
      await addDashboard(uid, 'counted-d2');
      await addAlertRule(uid, 'counted-r1');
      expect((await api(app, viewer).get(`/api/folders/${uid}/counts`)).body).to.deep.equal({ folder: 1, dashboard: 2, alertrule: 1 });
      expect((await app.request('GET', `/api/folders/${uid}/counts`)).status).to.equal(401);
      expect((await api(app, outsider).get(`/api/folders/${uid}/counts`)).status).to.equal(403);
      expect((await api(app, viewer).get('/api/folders/nope/counts')).status).to.equal(404);
    });
  });

  describe('PUT /api/folders/:uid', () => {
    it('401, 403 for a Viewer, 404, 400 on an empty or unknown body', async () => {
      const uid = await createFolder({ title: 'to rename' });
      expect((await app.request('PUT', `/api/folders/${uid}`, { body: { title: 'x' } })).status).to.equal(401);
      expect((await api(app, viewer).put(`/api/folders/${uid}`, { title: 'x' })).status).to.equal(403);
      expect((await api(app, editor).put('/api/folders/nope', { title: 'x' })).status).to.equal(404);
      expect((await api(app, editor).put(`/api/folders/${uid}`, {})).status).to.equal(400);
      expect((await api(app, editor).put(`/api/folders/${uid}`, { uid: 'other' })).status).to.equal(400);
    });

    it('renames and describes, audited with the changed fields', async () => {
      const uid = await createFolder({ title: 'old' });
      const res = await api(app, editor).put(`/api/folders/${uid}`, { title: 'new', description: 'desc' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ title: 'new', description: 'desc', updatedBy: editor.id });
      const [entry] = await auditEntries(app, { action: 'folder.updated', target_id: uid });
      expect(entry!.metadata).to.deep.equal({ fields: ['description', 'title'] });
    });

    it('moves a folder, and the policy follows: grants of the old parent stop, of the new one start', async () => {
      await createFolder({ uid: 'src', title: 'Source' });
      await createFolder({ uid: 'dst', title: 'Destination' });
      await createFolder({ uid: 'mover', title: 'Mover', parentUid: 'src' });
      const reader = await createUser(app, { role: 'None' });
      await grantManagedPermissions(app, ORG, { kind: 'user', userId: reader.id }, [{ action: 'folders:read', scope: 'folders:uid:src' }]);
      expect((await api(app, reader).get('/api/folders/mover')).status).to.equal(200);
      const res = await api(app, editor).put('/api/folders/mover', { parentUid: 'dst' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.parentUid).to.equal('dst');
      expect((await api(app, reader).get('/api/folders/mover')).status).to.equal(403);
      expect((await api(app, editor).put('/api/folders/mover', { parentUid: null })).body).not.to.have.property('parentUid');
      const [entry] = await auditEntries(app, { action: 'folder.updated', target_id: 'mover' });
      expect(entry!.metadata).to.deep.equal({ fields: ['parent_uid'], previousParentUid: 'src', parentUid: 'dst' });
    });

    it('a move re-chains the whole subtree: the new parent’s grants reach every folder below it at once', async () => {
      const [top, , bottom] = await chain(3, 'subtree');
      await createFolder({ uid: 'subtree-dst', title: 'Subtree destination' });
      const reader = await createUser(app, { role: 'None' });
      await grantManagedPermissions(app, ORG, { kind: 'user', userId: reader.id }, [{ action: 'folders:read', scope: 'folders:uid:subtree-dst' }]);
      expect((await api(app, reader).get(`/api/folders/${bottom}`)).status).to.equal(403);
      expect((await api(app, editor).put(`/api/folders/${top}`, { parentUid: 'subtree-dst' })).status).to.equal(200);
      expect((await api(app, reader).get(`/api/folders/${bottom}`)).status).to.equal(200);
      // a fresh document built from the database agrees with the patched one
      const fresh = await startTestApp({ database: { url: app.services.config.databaseUrl!, drop: async () => {} } });
      try {
        expect((await fresh.request('GET', `/api/folders/${bottom}`, { cookie: reader.cookie })).status).to.equal(200);
      } finally {
        await fresh.close();
      }
    });

    it('refuses a move into itself or a descendant (cycle, 400) and one past 8 levels (400)', async () => {
      const [top, middle, bottom] = await chain(3, 'cyc');
      for (const parentUid of [top, middle, bottom]) {
        const res = await api(app, editor).put(`/api/folders/${top}`, { parentUid });
        expect(res.status, parentUid).to.equal(400);
        expect(res.body.message).to.include('cannot move into itself');
      }
      const deep = await chain(6, 'sixdeep');
      // cyc-1 holds 3 levels: under a level-6 folder it would reach level 9
      const res = await api(app, editor).put(`/api/folders/${top}`, { parentUid: deep.at(-1) });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include('8 levels');
      expect((await api(app, editor).put(`/api/folders/${top}`, { parentUid: deep.at(-2) })).status).to.equal(200);
      expect((await api(app, editor).put(`/api/folders/${top}`, { parentUid: 'nope' })).status).to.equal(400);
    });

    it('a move needs folders:create on the destination', async () => {
      await createFolder({ uid: 'own', title: 'Own' });
      await createFolder({ uid: 'forbidden-dst', title: 'Forbidden' });
      const writer = await createUser(app, { role: 'None' });
      await grantManagedPermissions(app, ORG, { kind: 'user', userId: writer.id }, [
        { action: 'folders:read', scope: 'folders:uid:own' },
        { action: 'folders:write', scope: 'folders:uid:own' },
      ]);
      expect((await api(app, writer).put('/api/folders/own', { title: 'Own renamed' })).status).to.equal(200);
      // naming the parent it already has is no move
      expect((await api(app, writer).put('/api/folders/own', { title: 'Own again', parentUid: null })).status).to.equal(200);
      const res = await api(app, writer).put('/api/folders/own', { parentUid: 'forbidden-dst' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.include('folders:create');
      expect((await app.db('folders').where({ org_id: ORG, uid: 'own' }).first('parent_uid')).parent_uid).to.equal(null);
    });
  });

  describe('DELETE /api/folders/:uid', () => {
    async function fill(tag: string): Promise<void> {
      await createFolder({ uid: `${tag}`, title: tag });
      await createFolder({ uid: `${tag}-sub`, title: `${tag} sub`, parentUid: tag });
      await addDashboard(`${tag}-sub`, `${tag}-dash`);
      await addAlertRule(`${tag}-sub`, `${tag}-rule`);
    }

    it('401, 403 for a Viewer, 404', async () => {
      const uid = await createFolder({ title: 'doomed' });
      expect((await app.request('DELETE', `/api/folders/${uid}`)).status).to.equal(401);
      expect((await api(app, viewer).delete(`/api/folders/${uid}`)).status).to.equal(403);
      expect((await api(app, editor).delete('/api/folders/nope')).status).to.equal(404);
      expect((await api(app, editor).delete(`/api/folders/${uid}?forceDeleteRules=maybe`)).status).to.equal(400);
    });

    it('refuses (400) while the folder or a subfolder holds alert rules, unless forceDeleteRules=true', async () => {
      await fill('ruled');
      const res = await api(app, editor).delete('/api/folders/ruled');
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include('forceDeleteRules');
      expect(await app.count('folders', { org_id: ORG, uid: 'ruled' })).to.equal(1);
      expect((await api(app, editor).delete('/api/folders/ruled?forceDeleteRules=false')).status).to.equal(400);
      expect((await api(app, editor).delete('/api/folders/ruled?forceDeleteRules=true')).status).to.equal(200);
    });

    it('cascades to subfolders, dashboards, alert rules and every grant on them, audited', async () => {
      await fill('casc');
      const holder = await createUser(app, { role: 'None' });
      const roleUid = `managed:users:${holder.id}:permissions`;
      await assignRole(app, ORG, holder.id, roleUid, [
        { action: 'folders:read', scope: 'folders:uid:casc-sub' },
        { action: 'dashboards:read', scope: 'dashboards:uid:casc-dash' },
        { action: 'alert.rules:read', scope: 'alert.rules:uid:casc-rule' },
        { action: 'folders:read', scope: 'folders:uid:granted' },
      ]);
      expect((await api(app, holder).get('/api/folders/casc-sub')).status).to.equal(200);
      const res = await api(app, editor).delete('/api/folders/casc?forceDeleteRules=true');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'Folder deleted', uid: 'casc', title: 'casc' });
      expect(await app.count('folders', { org_id: ORG, uid: 'casc-sub' })).to.equal(0);
      expect(await app.count('dashboards', { org_id: ORG, uid: 'casc-dash' })).to.equal(0);
      expect(await app.count('alert_rules', { org_id: ORG, uid: 'casc-rule' })).to.equal(0);
      const role = await app.db('roles').where({ org_id: ORG, uid: roleUid }).first('id');
      expect(await app.db('role_permissions').where('role_id', role.id).pluck('scope')).to.deep.equal(['folders:uid:granted']);
      // A folder made again under the same uid inherits nothing of the old one's grants.
      await createFolder({ uid: 'casc-sub', title: 'reborn' });
      expect((await api(app, holder).get('/api/folders/casc-sub')).status).to.equal(403);
      const [entry] = await auditEntries(app, { action: 'folder.deleted', target_id: 'casc' });
      expect(entry!.metadata).to.deep.equal({ folders: 2, dashboards: 1, alertRules: 1 });
    });

    it('needs delete on every subfolder, dashboard and alert rule it removes, in one decision: else 403 and nothing goes', async () => {
      // whole: a rule in the folder itself, and a subfolder holding a dashboard and a rule
      await fill('whole');
      await addAlertRule('whole', 'whole-top-rule');
      const snapshot = async () => [
        await app.count('folders', { org_id: ORG, uid: 'whole' }),
        await app.count('folders', { org_id: ORG, uid: 'whole-sub' }),
        await app.count('dashboards', { org_id: ORG, uid: 'whole-dash' }),
        await app.count('alert_rules', { org_id: ORG, uid: 'whole-rule' }),
        await app.count('alert_rules', { org_id: ORG, uid: 'whole-top-rule' }),
      ];
      /** A member of no org role holding `actions` on the folder (and what is below it) through a custom role. */
      async function deleter(actions: string[]): Promise<TestUser> {
        const user = await createUser(app, { role: 'None' });
        const role = buildRole({ permissions: ['folders:read', ...actions].map((action) => ({ action, scope: 'folders:uid:whole' })) });
        await assignRole(app, ORG, user.id, role.uid, role.permissions);
        return user;
      }
      const rulesOnly = await deleter(['folders:delete', 'alert.rules:delete']);
      const single = await api(app, rulesOnly).delete('/api/v1/provisioning/alert-rules/whole-rule');
      expect(single.status, 'the rule alone is theirs to delete').to.equal(204);
      await addAlertRule('whole-sub', 'whole-rule');

      const folderOnly = await deleter(['folders:delete']);
      const refused = await api(app, folderOnly).delete('/api/folders/whole?forceDeleteRules=true');
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal(
        'permission denied: you need alert.rules:delete, dashboards:delete, folders:delete on every alert rule and dashboard and folder the folder holds',
      );
      expect(await snapshot()).to.deep.equal([1, 1, 1, 1, 1]);
      const noDashboards = await api(app, rulesOnly).delete('/api/folders/whole?forceDeleteRules=true');
      expect(noDashboards.status).to.equal(403);
      expect(noDashboards.body.message).to.include('dashboards:delete');
      expect(await snapshot()).to.deep.equal([1, 1, 1, 1, 1]);
      expect(await auditEntries(app, { action: 'folder.deleted', target_id: 'whole' })).to.deep.equal([]);
      const [attempt] = await refusalEntries(app, 'folders:delete', { target_id: 'whole' });
      expect(attempt).to.include({ outcome: 'failure', actor_id: folderOnly.id });

      const everything = await deleter(['folders:delete', 'alert.rules:delete', 'dashboards:delete']);
      // without forceDeleteRules no rule would go, so none is asked for: the answer is the 400
      expect((await api(app, folderOnly).delete('/api/folders/whole')).status).to.equal(403);
      expect((await api(app, everything).delete('/api/folders/whole')).status).to.equal(400);
      const done = await api(app, everything).delete('/api/folders/whole?forceDeleteRules=true');
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
      expect(await snapshot()).to.deep.equal([0, 0, 0, 0, 0]);
      const entries = await auditEntries(app, { actor_id: everything.id });
      const removed = entries.map((entry) => [entry.action, entry.target_id, entry.metadata?.deletedWithFolder ?? null]);
      expect(removed).to.have.deep.members([
        ['folder.deleted', 'whole', null],
        ['folder.deleted', 'whole-sub', 'whole'],
        ['dashboard.deleted', 'whole-dash', 'whole'],
        ['alert_rule.deleted', 'whole-rule', 'whole'],
        ['alert_rule.deleted', 'whole-top-rule', 'whole'],
      ]);
      expect(removed).to.have.length(5);
      expect(entries.find((entry) => entry.target_id === 'whole-top-rule')!.metadata).to.deep.equal({
        folderUid: 'whole',
        ruleGroup: 'group',
        deletedWithFolder: 'whole',
      });
    });

    it(`removes at most ${MAX_FOLDER_DELETE_ITEMS} subfolders, dashboards and alert rules in one delete: past that 400, to whoever may delete the folder`, async function () {
      this.timeout(120_000);
      await createFolder({ uid: 'big', title: 'big' });
      await createFolder({ uid: 'big-sub', title: 'big sub', parentUid: 'big' });
      // the bound's worth of dashboards, written as the dashboard API writes them (one transaction, to be quick)
      await app.services.transact(async (tx) => {
        for (let i = 0; i < MAX_FOLDER_DELETE_ITEMS; i += 1)
          await insertDashboard(tx, ORG, `big-d${i}`, { title: `big ${i}`, folderUid: 'big', model: {} }, editor.id, app.clock.now());
      });
      expect((await api(app, viewer).delete('/api/folders/big')).status).to.equal(403);
      const past = await api(app, editor).delete('/api/folders/big');
      expect(past.status).to.equal(400);
      expect(past.body.message).to.equal(
        `folder big holds more than the ${MAX_FOLDER_DELETE_ITEMS} subfolders, dashboards and alert rules one delete removes: delete some of them first`,
      );
      expect(await app.count('dashboards', { org_id: ORG, folder_uid: 'big' })).to.equal(MAX_FOLDER_DELETE_ITEMS);
      expect((await api(app, editor).delete('/api/folders/big-sub')).status).to.equal(200);
      expect((await api(app, editor).delete('/api/folders/big')).status).to.equal(200);
      expect(await app.count('dashboards', { org_id: ORG, folder_uid: 'big' })).to.equal(0);
      const audited = await auditEntries(app, { action: 'dashboard.deleted', actor_id: editor.id });
      expect(audited.filter((entry) => entry.metadata?.deletedWithFolder === 'big')).to.have.length(MAX_FOLDER_DELETE_ITEMS);
    });

    it('what is put in a folder while it is deleted is deleted with it, audited, or refused: nothing is left in a folder that is gone', async () => {
      for (let round = 0; round < 3; round += 1) {
        const uid = await createFolder({ uid: `racing-${round}`, title: `racing ${round}` });
        const puts = Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? api(app, editor).post('/api/dashboards/db', { dashboard: { uid: `${uid}-d${i}`, title: `d${i}` }, folderUid: uid })
            : api(app, editor).post('/api/folders', { uid: `${uid}-f${i}`, title: `f${i}`, parentUid: uid }),
        );
        const [deleted, ...put] = await Promise.all([api(app, editor).delete(`/api/folders/${uid}`), ...puts]);
        expect([200, 409], JSON.stringify(deleted.body)).to.include(deleted.status);
        for (const res of put) expect([200, 201, 400], JSON.stringify(res.body)).to.include(res.status);
        if (deleted.status !== 200) continue;
        expect(await app.count('folders', { org_id: ORG, parent_uid: uid })).to.equal(0);
        expect(await app.count('dashboards', { org_id: ORG, folder_uid: uid })).to.equal(0);
        const audited = (await auditEntries(app, { actor_id: editor.id })).filter((entry) => entry.metadata?.deletedWithFolder === uid);
        const landed = put.filter((res) => res.status !== 400).length;
        expect(audited, 'every put that landed went with the folder, audited').to.have.length(landed);
      }
    });

    it('a Viewer with Edit on a folder deletes it with the rules in it: the folder grant carries alert.rules:delete', async () => {
      await fill('teamf');
      const member = await createUser(app, { role: 'Viewer' });
      const granted = await api(app, editor).post('/api/folders/teamf/permissions', { items: [{ userId: member.id, permission: 2 }] });
      expect(granted.status).to.equal(200);
      expect((await api(app, member).delete('/api/v1/provisioning/alert-rules/teamf-rule')).status).to.equal(204);
      await addAlertRule('teamf-sub', 'teamf-rule');
      expect((await api(app, member).delete('/api/folders/teamf?forceDeleteRules=true')).status).to.equal(200);
      expect(await app.count('alert_rules', { org_id: ORG, uid: 'teamf-rule' })).to.equal(0);
      expect(await auditEntries(app, { action: 'alert_rule.deleted', target_id: 'teamf-rule', actor_id: member.id })).to.have.length(2);
    });
  });

  describe('quota', () => {
    it('QUOTA_FOLDERS_PER_ORG holds exactly under 10 concurrent creates (403)', async () => {
      const limited = await startTestApp({ env: { QUOTA_FOLDERS_PER_ORG: '3' } });
      try {
        const who = await createUser(limited, { role: 'Editor' });
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => limited.request('POST', '/api/folders', { cookie: who.cookie, body: { title: `f${i}` } })),
        );
        expect(results.filter((r) => r.status === 201)).to.have.length(3);
        const refused = results.filter((r) => r.status !== 201);
        expect(refused.map((r) => r.status)).to.deep.equal(Array(7).fill(403));
        expect(refused[0]!.body.message).to.match(/quota exceeded for folders/);
        expect(await limited.count('folders')).to.equal(3);
      } finally {
        await limited.close();
      }
    });
  });
});
