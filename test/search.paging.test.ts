/**
 * `/api/search` and `/api/folders` page in SQL by the sets the policy answers (authz/visible):
 * every page equals the same page of the list the policy's filter keeps item by item, for a
 * member whose grants mix folders at several levels (their own and a team's), the Viewer role
 * entry and dashboards granted directly, and for a member who may read everything.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, buildTeam, createUser, grantManagedPermissions, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';

describe('search and folder lists: pages filtered in SQL', () => {
  let app: TestApp;
  let editor: TestUser;
  let mixed: TestUser;

  // folders a..h: b and c in a, d in b, f in e; dashboards spread over them and the root
  const FOLDERS: Array<[uid: string, title: string, parent?: string]> = [
    ['fa', 'Alpha'],
    ['fb', 'Beta', 'fa'],
    ['fc', 'Gamma', 'fa'],
    ['fd', 'Delta', 'fb'],
    ['fe', 'Epsilon'],
    ['ff', 'Zeta', 'fe'],
    ['fg', 'Eta'],
    ['fh', 'Theta'],
  ];
  const DASHBOARDS: Array<[uid: string, folder?: string]> = [];
  for (let i = 0; i < 40; i++) DASHBOARDS.push([`d${String(i).padStart(2, '0')}`, i % 9 === 0 ? undefined : FOLDERS[i % FOLDERS.length]![0]]);

  interface SearchBody {
    totalCount: number;
    hits: Array<{ uid: string; type: string }>;
  }

  /** What the policy's filter keeps of every match, in the search's order (folders, then dashboards, each by title and uid). */
  async function filteredAnswer(who: TestUser): Promise<string[]> {
    const subject = { id: who.id, kind: 'user' as const, server_admin: false, disabled: false };
    const titled = <T extends { title: string; uid: string }>(rows: T[]) =>
      rows.sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : a.uid < b.uid ? -1 : 1)).map((row) => row.uid);
    const folders = titled(await app.db('folders').where('org_id', ORG).select('uid', 'title'));
    const dashboards = titled(await app.db('dashboards').where('org_id', ORG).select('uid', 'title'));
    const keep = async (action: string, kind: string, uids: string[]) =>
      (await app.services.engine.filter({ subject, org_id: ORG, action, resources: uids.map((uid) => ({ kind, uid })) })).map((index) => uids[index]!);
    return [...(await keep('folders:read', 'folders', folders)), ...(await keep('dashboards:read', 'dashboards', dashboards))];
  }

  before(async function () {
    // 8 folders and 40 dashboards through the API: a while on a loaded MariaDB
    this.timeout(120_000);
    app = await startTestApp();
    editor = await createUser(app, { role: 'Editor' });
    const as = api(app, editor);
    for (const [uid, title, parentUid] of FOLDERS) expect((await as.post('/api/folders', { uid, title, parentUid })).status).to.equal(201);
    // titles repeat, so the order falls back to the uid
    for (const [uid, folderUid] of DASHBOARDS) {
      const title = `Board ${Number(uid.slice(1)) % 13}`;
      expect((await as.post('/api/dashboards/db', { dashboard: { uid, title }, folderUid })).status, uid).to.equal(200);
    }
    mixed = await createUser(app, { role: 'None' });
    const team = await buildTeam(app, { members: [mixed.id] });
    // their own grant on a top folder, the team's on a nested one, direct dashboards inside and outside them
    await grantManagedPermissions(app, ORG, { kind: 'user', userId: mixed.id }, [
      { action: 'folders:read', scope: 'folders:uid:fb' },
      { action: 'dashboards:read', scope: 'folders:uid:fb' },
      { action: 'dashboards:read', scope: 'dashboards:uid:d00' },
      { action: 'dashboards:read', scope: 'dashboards:uid:d07' },
      { action: 'folders:read', scope: 'folders:uid:fh' },
    ]);
    await grantManagedPermissions(app, ORG, { kind: 'team', teamId: team.id }, [
      { action: 'dashboards:read', scope: 'folders:uid:ff' },
      { action: 'folders:read', scope: 'folders:uid:fe' },
      { action: 'dashboards:read', scope: 'dashboards:uid:d10' },
    ]);
  });
  after(async () => {
    await app.close();
  });

  for (const who of ['mixed', 'editor'] as const) {
    it(`every page of /api/search is the same page of what filter keeps (${who})`, async () => {
      const user = who === 'mixed' ? mixed : editor;
      const expected = await filteredAnswer(user);
      expect(expected.length, 'the list spans several pages').to.be.greaterThan(who === 'mixed' ? 10 : 40);
      for (const perPage of [3, 7]) {
        const pages = Math.ceil(expected.length / perPage) + 1;
        for (let page = 1; page <= pages; page++) {
          const res = await api(app, user).get(`/api/search?perpage=${perPage}&page=${page}`);
          expect(res.status, JSON.stringify(res.body)).to.equal(200);
          const body = res.body as SearchBody;
          expect(body.totalCount).to.equal(expected.length);
          expect(
            body.hits.map((hit) => hit.uid),
            `page ${page} of ${perPage}`,
          ).to.deep.equal(expected.slice((page - 1) * perPage, page * perPage));
        }
      }
    });
  }

  it('a member with grants at several levels sees their folders, the team’s, their subfolders’ dashboards and direct dashboards', async () => {
    const res = await api(app, mixed).get('/api/search?perpage=100');
    const hits = (res.body as SearchBody).hits;
    expect(hits.filter((hit) => hit.type === 'dash-folder').map((hit) => hit.uid)).to.have.members(['fb', 'fd', 'fe', 'ff', 'fh']);
    const dashboards = hits.filter((hit) => hit.type === 'dash-db').map((hit) => hit.uid);
    const expected = DASHBOARDS.filter(([uid, folder]) => ['fb', 'fd', 'ff'].includes(folder ?? '') || ['d00', 'd07', 'd10'].includes(uid)).map(([uid]) => uid);
    expect(dashboards).to.have.members(expected);
    expect(dashboards).to.include('d00'); // at the root
  });

  it('narrows by title and folder in SQL alongside the visible sets', async () => {
    const res = await api(app, mixed).get('/api/search?type=dash-db&query=board%201&folderUIDs=fb,general');
    const hits = (res.body as SearchBody).hits.map((hit) => hit.uid);
    const expected = DASHBOARDS.filter(
      ([uid, folder]) => (folder === 'fb' || (folder === undefined && uid === 'd00')) && /^Board 1/.test(`Board ${Number(uid.slice(1)) % 13}`),
    ).map(([uid]) => uid);
    expect(hits).to.have.members(expected);
  });

  it('GET /api/folders pages one level of the tree by what the member may read', async () => {
    const root = await api(app, mixed).get('/api/folders?perpage=1&page=2');
    expect(root.status).to.equal(200);
    // readable at the root: Epsilon (fe, the team's) and Theta (fh); fb is readable but not at the root
    expect(root.body).to.deep.include({ totalCount: 2 });
    expect((root.body as { folders: Array<{ uid: string }> }).folders.map((folder) => folder.uid)).to.deep.equal(['fh']);
    const inAlpha = await api(app, mixed).get('/api/folders?parentUid=fa');
    expect((inAlpha.body as { folders: Array<{ uid: string }> }).folders.map((folder) => folder.uid)).to.deep.equal(['fb']);
    const everything = await api(app, editor).get('/api/folders?perpage=2&page=2');
    expect(everything.body).to.deep.include({ totalCount: 4 });
    expect((everything.body as { folders: Array<{ uid: string }> }).folders.map((folder) => folder.uid)).to.deep.equal(['fg', 'fh']);
  });
});
