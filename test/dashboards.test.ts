/** `/api/dashboards…`: save with optimistic locking, read with the caller's rights, delete; folder inheritance and moves. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, refusalEntries, createUser, DENIED, grantManagedPermissions, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';

describe('dashboards', () => {
  let app: TestApp;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    outsider = await createUser(app, { role: 'None' });
    for (const uid of ['team-a', 'team-b']) expect((await api(app, editor).post('/api/folders', { uid, title: uid })).status).to.equal(201);
    expect((await api(app, editor).post('/api/folders', { uid: 'team-a-sub', title: 'sub', parentUid: 'team-a' })).status).to.equal(201);
  });
  after(async () => {
    await app.close();
  });

  async function save(body: Record<string, unknown>, who: TestUser = editor) {
    const res = await api(app, who).post('/api/dashboards/db', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { uid: string; version: number; url: string };
  }
  /** A member of no role whose managed role holds `permissions`. */
  async function grantee(permissions: Array<{ action: string; scope: string }>): Promise<TestUser> {
    const user = await createUser(app, { role: 'None' });
    await grantManagedPermissions(app, ORG, { kind: 'user', userId: user.id }, permissions);
    return user;
  }

  describe('POST /api/dashboards/db', () => {
    it('401, 403 for a Viewer', async () => {
      expect((await app.request('POST', '/api/dashboards/db', { body: { dashboard: { title: 'x' } } })).status).to.equal(401);
      const res = await api(app, viewer).post('/api/dashboards/db', { dashboard: { title: 'x' } });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(DENIED);
    });

    it('creates in a folder with a generated uid, keeps the model, audited', async () => {
      const res = await api(app, editor).post('/api/dashboards/db', {
        dashboard: { id: null, title: 'CPU Usage', panels: [{ type: 'graph' }], tags: ['infra'] },
        folderUid: 'team-a',
        message: 'first',
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ status: 'success', version: 1, folderUid: 'team-a', slug: 'cpu-usage' });
      expect(res.body.url).to.equal(`/d/${res.body.uid}/cpu-usage`);
      const read = await api(app, viewer).get(`/api/dashboards/uid/${res.body.uid}`);
      expect(read.body.dashboard).to.deep.equal({ uid: res.body.uid, title: 'CPU Usage', version: 1, panels: [{ type: 'graph' }], tags: ['infra'] });
      expect(read.body.meta).to.include({ folderUid: 'team-a', folderTitle: 'team-a', version: 1, createdBy: editor.id });
      const [entry] = await auditEntries(app, { action: 'dashboard.created', target_id: res.body.uid });
      expect(entry).to.include({ actor_id: editor.id, target_name: 'CPU Usage', org_id: ORG });
      expect(entry!.metadata).to.deep.equal({ folderUid: 'team-a', version: 1, message: 'first' });
    });

    it('refuses bad input (400): unsafe uid, missing or blank title, unknown field, unknown folder', async () => {
      for (const uid of ['*', '', 'a*', ':', '../x', '%2A', 'general']) {
        expect((await api(app, editor).post('/api/dashboards/db', { dashboard: { uid, title: 'bad' } })).status, uid).to.equal(400);
      }
      expect((await api(app, editor).post('/api/dashboards/db', { dashboard: {} })).status).to.equal(400);
      expect((await api(app, editor).post('/api/dashboards/db', { dashboard: { title: '  ' } })).status).to.equal(400);
      expect((await api(app, editor).post('/api/dashboards/db', {})).status).to.equal(400);
      expect((await api(app, editor).post('/api/dashboards/db', { dashboard: { title: 'bad' }, folderId: 3 })).status).to.equal(400);
      const res = await api(app, editor).post('/api/dashboards/db', { dashboard: { title: 'bad' }, folderUid: 'nope' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include('nope');
      expect(await app.count('dashboards', { title: 'bad' })).to.equal(0);
    });

    it('412 version-mismatch on a stale version unless overwrite; each save bumps the version', async () => {
      const { uid } = await save({ dashboard: { uid: 'locked', title: 'Locked' } });
      expect((await save({ dashboard: { uid, title: 'Locked', version: 1 } })).version).to.equal(2);
      const stale = await api(app, editor).post('/api/dashboards/db', { dashboard: { uid, title: 'Locked', version: 1, note: 'stale' } });
      expect(stale.status).to.equal(412);
      expect(stale.body).to.deep.equal({ status: 'version-mismatch', message: 'The dashboard has been changed by someone else' });
      expect((await api(app, editor).post('/api/dashboards/db', { dashboard: { uid, title: 'Locked' } })).status).to.equal(412);
      expect((await save({ dashboard: { uid, title: 'Locked', version: 1, note: 'forced' }, overwrite: true })).version).to.equal(3);
      expect((await api(app, viewer).get(`/api/dashboards/uid/${uid}`)).body.dashboard.note).to.equal('forced');
      const [entry] = (await auditEntries(app, { action: 'dashboard.updated', target_id: uid })).slice(-1);
      expect(entry!.metadata).to.deep.include({ version: 3 });
    });

    it('412 name-exists for a title taken in the same folder (any case); another folder is fine', async () => {
      await save({ dashboard: { title: 'Latency' }, folderUid: 'team-b' });
      const res = await api(app, editor).post('/api/dashboards/db', { dashboard: { title: 'LATENCY' }, folderUid: 'team-b' });
      expect(res.status).to.equal(412);
      expect(res.body.status).to.equal('name-exists');
      await save({ dashboard: { title: 'Latency' }, folderUid: 'team-a' });
      const other = await save({ dashboard: { title: 'Other' }, folderUid: 'team-b' });
      const rename = await api(app, editor).post('/api/dashboards/db', { dashboard: { uid: other.uid, title: 'latency', version: 1 } });
      expect(rename.status).to.equal(412);
      expect(rename.body.status).to.equal('name-exists');
    });

    it('moving needs write on the dashboard and create in the destination folder', async () => {
      const { uid } = await save({ dashboard: { uid: 'mover', title: 'Mover' }, folderUid: 'team-a' });
      const folderAEditor = await grantee(
        ['dashboards:read', 'dashboards:write', 'dashboards:create'].flatMap((action) => [{ action, scope: 'folders:uid:team-a' }]),
      );
      // within its folder it saves
      expect((await api(app, folderAEditor).post('/api/dashboards/db', { dashboard: { uid, title: 'Mover', version: 1 } })).status).to.equal(200);
      // out of it, into a folder it cannot create in: refused, and the dashboard stays
      const out = await api(app, folderAEditor).post('/api/dashboards/db', { dashboard: { uid, title: 'Mover', version: 2 }, folderUid: 'team-b' });
      expect(out.status).to.equal(403);
      expect(out.body.message).to.equal('permission denied: you need dashboards:create on the destination folder to do this');
      const [refusal] = await refusalEntries(app, 'dashboards:write', { actor_id: folderAEditor.id });
      expect(refusal).to.include({ outcome: 'failure', target_type: 'dashboards', target_id: uid });
      expect(refusal!.metadata!.destination).to.deep.equal({ type: 'folders', id: 'team-b' });
      // a dashboard of team-b, which it cannot write, cannot be pulled into team-a
      const foreign = await save({ dashboard: { uid: 'foreign', title: 'Foreign' }, folderUid: 'team-b' });
      const pull = await api(app, folderAEditor).post('/api/dashboards/db', {
        dashboard: { uid: foreign.uid, title: 'Foreign', version: 1 },
        folderUid: 'team-a',
      });
      expect(pull.status).to.equal(403);
      expect(pull.body.message).to.include('dashboards:write');
      expect((await app.db('dashboards').where({ org_id: ORG, uid: 'foreign' }).first('folder_uid')).folder_uid).to.equal('team-b');
      // an Editor moves it, and the policy follows: team-a's grant no longer reaches it
      expect((await save({ dashboard: { uid, title: 'Mover', version: 2 }, folderUid: 'team-b' })).version).to.equal(3);
      expect((await api(app, folderAEditor).get(`/api/dashboards/uid/${uid}`)).status).to.equal(403);
      const [entry] = (await auditEntries(app, { action: 'dashboard.updated', target_id: uid })).slice(-1);
      expect(entry!.metadata).to.deep.equal({ folderUid: 'team-b', previousFolderUid: 'team-a', version: 3 });
    });

    it("overwriting another's dashboard by uid keeps its grants", async () => {
      const { uid } = await save({ dashboard: { uid: 'granted-dash', title: 'Granted' } }, admin);
      const reader = await grantee([{ action: 'dashboards:read', scope: 'dashboards:uid:granted-dash' }]);
      expect((await api(app, reader).get(`/api/dashboards/uid/${uid}`)).status).to.equal(200);
      await save({ dashboard: { uid, title: 'Granted, rewritten' }, overwrite: true }, editor);
      const read = await api(app, reader).get(`/api/dashboards/uid/${uid}`);
      expect(read.status).to.equal(200);
      expect(read.body.dashboard.title).to.equal('Granted, rewritten');
    });
  });

  describe('GET /api/dashboards/uid/:uid', () => {
    it('401, 403, 404, and the caller’s rights in meta', async () => {
      const { uid } = await save({ dashboard: { uid: 'rights', title: 'Rights' }, folderUid: 'team-a-sub' });
      expect((await app.request('GET', `/api/dashboards/uid/${uid}`)).status).to.equal(401);
      expect((await api(app, outsider).get(`/api/dashboards/uid/${uid}`)).status).to.equal(403);
      expect((await api(app, viewer).get('/api/dashboards/uid/nope')).status).to.equal(404);
      const rights = async (who: TestUser) => {
        const { canSave, canEdit, canAdmin, canDelete } = (await api(app, who).get(`/api/dashboards/uid/${uid}`)).body.meta;
        return { canSave, canEdit, canAdmin, canDelete };
      };
      expect(await rights(viewer)).to.deep.equal({ canSave: false, canEdit: false, canAdmin: false, canDelete: false });
      // the creator administers its dashboard; another Editor edits it
      expect(await rights(editor)).to.deep.equal({ canSave: true, canEdit: true, canAdmin: true, canDelete: true });
      expect(await rights(await createUser(app, { role: 'Editor' }))).to.deep.equal({ canSave: true, canEdit: true, canAdmin: false, canDelete: true });
      expect(await rights(admin)).to.deep.equal({ canSave: true, canEdit: true, canAdmin: true, canDelete: true });
    });

    it('inherits grants from every ancestor folder; a grant on one dashboard gives nothing on another', async () => {
      const { uid } = await save({ dashboard: { uid: 'deep-dash', title: 'Deep' }, folderUid: 'team-a-sub' });
      const { uid: sibling } = await save({ dashboard: { uid: 'root-dash', title: 'Root' } });
      const folderReader = await grantee([{ action: 'dashboards:read', scope: 'folders:uid:team-a' }]);
      expect((await api(app, folderReader).get(`/api/dashboards/uid/${uid}`)).status).to.equal(200);
      expect((await api(app, folderReader).get(`/api/dashboards/uid/${sibling}`)).status).to.equal(403);
      const oneDashboard = await grantee([{ action: 'dashboards:read', scope: `dashboards:uid:${sibling}` }]);
      expect((await api(app, oneDashboard).get(`/api/dashboards/uid/${sibling}`)).status).to.equal(200);
      expect((await api(app, oneDashboard).get(`/api/dashboards/uid/${uid}`)).status).to.equal(403);
    });
  });

  describe('DELETE /api/dashboards/uid/:uid', () => {
    it('401, 403 for a Viewer, 404; deletes with its grants, audited', async () => {
      const { uid } = await save({ dashboard: { uid: 'doomed', title: 'Doomed' } });
      const holder = await grantee([
        { action: 'dashboards:read', scope: 'dashboards:uid:doomed' },
        { action: 'dashboards:read', scope: 'dashboards:uid:kept' },
      ]);
      expect((await app.request('DELETE', `/api/dashboards/uid/${uid}`)).status).to.equal(401);
      expect((await api(app, viewer).delete(`/api/dashboards/uid/${uid}`)).status).to.equal(403);
      expect((await api(app, editor).delete('/api/dashboards/uid/nope')).status).to.equal(404);
      const res = await api(app, editor).delete(`/api/dashboards/uid/${uid}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ uid, title: 'Doomed', message: 'Dashboard Doomed deleted' });
      expect(await app.count('dashboards', { org_id: ORG, uid })).to.equal(0);
      const role = await app
        .db('roles')
        .where({ org_id: ORG, uid: `managed:users:${holder.id}:permissions` })
        .first('id');
      expect(await app.db('role_permissions').where('role_id', role.id).pluck('scope')).to.deep.equal(['dashboards:uid:kept']);
      // the same uid made again is a new dashboard: the old grant does not come back
      await save({ dashboard: { uid, title: 'Doomed again' } });
      expect((await api(app, holder).get(`/api/dashboards/uid/${uid}`)).status).to.equal(403);
      expect(await auditEntries(app, { action: 'dashboard.deleted', target_id: uid })).to.have.length(1);
    });
  });

  describe('quota', () => {
    it('QUOTA_DASHBOARDS_PER_ORG holds exactly under 10 concurrent creates (403)', async () => {
      const limited = await startTestApp({ env: { QUOTA_DASHBOARDS_PER_ORG: '3' } });
      try {
        const who = await createUser(limited, { role: 'Editor' });
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => limited.request('POST', '/api/dashboards/db', { cookie: who.cookie, body: { dashboard: { title: `d${i}` } } })),
        );
        expect(results.filter((r) => r.status === 200)).to.have.length(3);
        const refused = results.filter((r) => r.status !== 200);
        expect(refused.map((r) => r.status)).to.deep.equal(Array(7).fill(403));
        expect(refused[0]!.body.message).to.match(/quota exceeded for dashboards/);
        expect(await limited.count('dashboards')).to.equal(3);
        // an update is no new dashboard
        const [first] = await limited.db('dashboards').select('uid');
        expect(
          (
            await limited.request('POST', '/api/dashboards/db', {
              cookie: who.cookie,
              body: { dashboard: { uid: first.uid, title: 'renamed' }, overwrite: true },
            })
          ).status,
        ).to.equal(200);
      } finally {
        await limited.close();
      }
    });
  });
});
