/** `/api/search`: folders and dashboards by title, type and folder, filtered by the policy, paged. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, grantManagedPermissions, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';

describe('search', () => {
  let app: TestApp;
  let editor: TestUser;
  let viewer: TestUser;
  let folderReader: TestUser;

  const search = async (who: TestUser, params = '') => {
    const res = await api(app, who).get(`/api/search${params}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as {
      totalCount: number;
      page: number;
      perPage: number;
      hits: Array<{ uid: string; type: string; folderUid?: string; folderTitle?: string; url: string }>;
    };
  };
  const uids = (body: { hits: Array<{ uid: string }> }) => body.hits.map((hit) => hit.uid);

  before(async () => {
    app = await startTestApp();
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    const as = api(app, editor);
    for (const [uid, title, parentUid] of [
      ['ops', 'Ops', undefined],
      ['ops-db', 'Ops databases', 'ops'],
      ['sales', 'Sales', undefined],
    ] as const) {
      expect((await as.post('/api/folders', { uid, title, parentUid })).status).to.equal(201);
    }
    for (const [uid, title, folderUid] of [
      ['d-ops', 'Ops overview', 'ops'],
      ['d-ops-db', 'Ops DB latency', 'ops-db'],
      ['d-sales', 'Sales funnel', 'sales'],
      ['d-root', 'Home', undefined],
    ] as const) {
      expect((await as.post('/api/dashboards/db', { dashboard: { uid, title }, folderUid })).status).to.equal(200);
    }
    folderReader = await createUser(app, { role: 'None' });
    await grantManagedPermissions(app, ORG, { kind: 'user', userId: folderReader.id }, [
      { action: 'folders:read', scope: 'folders:uid:ops' },
      { action: 'dashboards:read', scope: 'folders:uid:ops' },
    ]);
  });
  after(async () => {
    await app.close();
  });

  it('401 without credentials, 403 for a member who may read no dashboard, 400 on a bad type', async () => {
    expect((await app.request('GET', '/api/search')).status).to.equal(401);
    const nobody = await createUser(app, { role: 'None' });
    expect((await api(app, nobody).get('/api/search')).status).to.equal(403);
    expect((await api(app, viewer).get('/api/search?type=dash-panel')).status).to.equal(400);
  });

  it('finds folders first, then dashboards, each by title, with their folders', async () => {
    const body = await search(viewer);
    expect(uids(body)).to.deep.equal(['ops', 'ops-db', 'sales', 'd-root', 'd-ops-db', 'd-ops', 'd-sales']);
    expect(body.totalCount).to.equal(7);
    const latency = body.hits.find((hit) => hit.uid === 'd-ops-db')!;
    expect(latency).to.deep.include({ type: 'dash-db', folderUid: 'ops-db', folderTitle: 'Ops databases', url: '/d/d-ops-db/ops-db-latency' });
    expect(body.hits.find((hit) => hit.uid === 'ops-db')).to.deep.include({ type: 'dash-folder', folderUid: 'ops', url: '/dashboards/f/ops-db/' });
  });

  it('narrows by query, type and folderUIDs (general is the root)', async () => {
    expect(uids(await search(viewer, '?query=ops'))).to.deep.equal(['ops', 'ops-db', 'd-ops-db', 'd-ops']);
    expect(uids(await search(viewer, '?type=dash-folder'))).to.deep.equal(['ops', 'ops-db', 'sales']);
    expect(uids(await search(viewer, '?type=dash-db&query=OPS'))).to.deep.equal(['d-ops-db', 'd-ops']);
    expect(uids(await search(viewer, '?folderUIDs=ops,sales'))).to.deep.equal(['ops-db', 'd-ops', 'd-sales']);
    expect(uids(await search(viewer, '?folderUIDs=general&type=dash-db'))).to.deep.equal(['d-root']);
  });

  it('pages across folders and dashboards', async () => {
    const first = await search(viewer, '?perpage=2&page=2');
    expect(first).to.deep.include({ totalCount: 7, page: 2, perPage: 2 });
    expect(uids(first)).to.deep.equal(['sales', 'd-root']);
    expect(uids(await search(viewer, '?perpage=2&page=1'))).to.deep.equal(['ops', 'ops-db']);
    expect(uids(await search(viewer, '?perpage=5&page=2'))).to.deep.equal(['d-ops', 'd-sales']);
  });

  it('shows a member only what the policy lets them read: a folder grant covers its subfolders and dashboards', async () => {
    const body = await search(folderReader);
    expect(uids(body)).to.deep.equal(['ops', 'ops-db', 'd-ops-db', 'd-ops']);
    expect(body.totalCount).to.equal(4);
    expect(uids(await search(folderReader, '?query=sales'))).to.deep.equal([]);
  });

  it('follows a move at once: a dashboard moved out of the granted folder leaves the results', async () => {
    expect(
      (await api(app, editor).post('/api/dashboards/db', { dashboard: { uid: 'd-ops', title: 'Ops overview', version: 1 }, folderUid: 'sales' })).status,
    ).to.equal(200);
    expect(uids(await search(folderReader, '?type=dash-db'))).to.deep.equal(['d-ops-db']);
  });
});
