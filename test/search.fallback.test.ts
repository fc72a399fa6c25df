/**
 * A caller whose visible sets hold more uids than one statement binds (MAX_BOUND_VISIBLE_UIDS)
 * is listed through the policy's filter over every match instead of in SQL: `/api/search` and
 * `/api/folders` still answer exactly the folders and dashboards the policy lets them read, paged
 * and counted as the SQL path pages and counts. The org (20,100 folders, 20,200 dashboards, a
 * member granted 20,050 of each directly) is filled through the stores' and the policy writer's
 * bulk paths.
 */
import { expect } from 'chai';
import { grantManagedToEach } from '../src/accesscontrol/policy-writer.ts';
import { insertDashboardsInBulk } from '../src/dashboards/store.ts';
import { MAX_BOUND_VISIBLE_UIDS } from '../src/db/search.ts';
import { insertFoldersInBulk } from '../src/folders/store.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';
const ROOT_FOLDERS = 20_100;
const DASHBOARDS = 20_200;
const GRANTED = 20_050;
const PER_PAGE = 1000;

interface Listed {
  uid: string;
  title: string;
}

/** By title, then uid: the order of both lists. */
const ordered = (rows: Listed[]) => [...rows].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : a.uid < b.uid ? -1 : 1)).map((row) => row.uid);

describe('search and folder lists past the bound visible set: the filter fallback', function () {
  // filling 40,000 rows and asking 40,000 decisions a page takes a while on a loaded MariaDB
  this.timeout(120_000);

  let app: TestApp;
  let member: TestUser;
  /** What the member may read, in list order: folders (any level), root folders, dashboards. */
  let readableFolders: string[];
  let readableRootFolders: string[];
  let readableDashboards: string[];
  let allDashboards: Listed[];

  before(async function () {
    this.timeout(180_000);
    app = await startTestApp();
    const owner = await createUser(app, { role: 'Admin' });
    member = await createUser(app, { role: 'None' });

    // root folders f00000…, and three folders nested in the first: readable through its grant, not their own
    const folders = Array.from({ length: ROOT_FOLDERS }, (_, i) => ({
      uid: `f${String(i).padStart(5, '0')}`,
      title: `Folder ${i % 1000} ${i}`,
      parentUid: null as string | null,
    }));
    const nested = ['n1', 'n2', 'n3'].map((uid) => ({ uid, title: `Nested ${uid}`, parentUid: 'f00000' }));
    // titles repeat, so the order falls back to the uid; one in ten at the root, the others spread over the folders
    allDashboards = Array.from({ length: DASHBOARDS }, (_, i) => ({ uid: `d${String(i).padStart(5, '0')}`, title: `Board ${i % 97}` }));
    const folderOf = (i: number) => (i % 10 === 0 ? null : i % 50 === 1 ? 'n2' : folders[(i * 7) % ROOT_FOLDERS]!.uid);
    const dashboards = allDashboards.map((dashboard, i) => ({ ...dashboard, folderUid: folderOf(i) }));

    // every root folder but one in 400, and every dashboard past the first 150, directly; and the dashboards of f00000's tree
    const grantedFolders = folders.filter((_, i) => i % 400 !== 399);
    const grantedDashboards = allDashboards.slice(DASHBOARDS - GRANTED);
    expect(grantedFolders).to.have.length(GRANTED);
    const now = Date.now();
    await app.services.transact(async (tx) => {
      await insertFoldersInBulk(tx, ORG, [...folders, ...nested], owner.id, now);
      await insertDashboardsInBulk(tx, ORG, dashboards, owner.id, now);
      await grantManagedToEach(
        tx,
        ORG,
        [
          {
            holder: { kind: 'user', userId: member.id },
            permissions: [
              ...grantedFolders.map((folder) => ({ action: 'folders:read', scope: `folders:uid:${folder.uid}` })),
              ...grantedDashboards.map((dashboard) => ({ action: 'dashboards:read', scope: `dashboards:uid:${dashboard.uid}` })),
              { action: 'dashboards:read', scope: 'folders:uid:f00000' },
            ],
          },
        ],
        now,
      );
    });

    const granted = new Set(grantedFolders.map((folder) => folder.uid));
    // f00000 is granted: its nested folders are readable through it
    const readableFolderRows = [...folders.filter((folder) => granted.has(folder.uid)), ...nested];
    readableFolders = ordered(readableFolderRows);
    readableRootFolders = ordered(folders.filter((folder) => granted.has(folder.uid)));
    const direct = new Set(grantedDashboards.map((dashboard) => dashboard.uid));
    const inGrantedTree = new Set(['f00000', 'n1', 'n2', 'n3']);
    readableDashboards = ordered(dashboards.filter((dashboard) => direct.has(dashboard.uid) || inGrantedTree.has(dashboard.folderUid ?? '')));
  });
  after(async () => {
    await app.close();
  });

  const subject = () => ({ id: member.id, kind: 'user' as const, server_admin: false, disabled: false });

  it('the member’s visible sets are too many uids to bind: the lists take the fallback', async () => {
    for (const [action, kind] of [
      ['folders:read', 'folders'],
      ['dashboards:read', 'dashboards'],
    ] as const) {
      const visible = await app.services.engine.visible({ subject: subject(), org_id: ORG, action, kind });
      expect(visible.all, kind).to.equal(false);
      if (!visible.all) expect(visible.folders.length + visible.items.length, kind).to.be.greaterThan(MAX_BOUND_VISIBLE_UIDS);
    }
    expect(readableDashboards.length).to.be.greaterThan(GRANTED);
  });

  it('the expected lists are what the policy decides, item by item', async () => {
    const decide = async (action: string, kind: 'folders' | 'dashboards', uid: string) =>
      (await app.services.engine.authorize({ subject: subject(), org_id: ORG, action, resource: { kind, uid } })).allow;
    const readable = { folders: new Set(readableFolders), dashboards: new Set(readableDashboards) };
    // every 97th item of each kind, readable or not, and the nested ones
    const sample = (uids: string[]) => uids.filter((_, i) => i % 97 === 0);
    const folderUids = [...sample(Array.from({ length: ROOT_FOLDERS }, (_, i) => `f${String(i).padStart(5, '0')}`)), 'n1', 'n2', 'n3'];
    for (const uid of folderUids) expect(await decide('folders:read', 'folders', uid), uid).to.equal(readable.folders.has(uid));
    for (const uid of sample(allDashboards.map((dashboard) => dashboard.uid)))
      expect(await decide('dashboards:read', 'dashboards', uid), uid).to.equal(readable.dashboards.has(uid));
  });

  it('/api/search: every page of dashboards, counted', async () => {
    const seen: string[] = [];
    const pages = Math.ceil(readableDashboards.length / PER_PAGE) + 1;
    for (let page = 1; page <= pages; page++) {
      const res = await api(app, member).get(`/api/search?type=dash-db&perpage=${PER_PAGE}&page=${page}`);
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(200);
      expect(res.body.totalCount, `page ${page}`).to.equal(readableDashboards.length);
      seen.push(...(res.body.hits as Array<{ uid: string }>).map((hit) => hit.uid));
    }
    expect(seen).to.deep.equal(readableDashboards);
  });

  it('/api/search: folders then dashboards, across the seam and at the end', async () => {
    const all = [...readableFolders, ...readableDashboards];
    const seam = readableFolders.length;
    for (const [perPage, page] of [
      [PER_PAGE, 1],
      [PER_PAGE, Math.ceil(seam / PER_PAGE)],
      [7, Math.floor(seam / 7) + 1],
      [PER_PAGE, Math.ceil(all.length / PER_PAGE)],
      [PER_PAGE, Math.ceil(all.length / PER_PAGE) + 1],
    ] as const) {
      const res = await api(app, member).get(`/api/search?perpage=${perPage}&page=${page}`);
      expect(res.status).to.equal(200);
      expect(res.body.totalCount).to.equal(all.length);
      expect(
        (res.body.hits as Array<{ uid: string }>).map((hit) => hit.uid),
        `page ${page} of ${perPage}`,
      ).to.deep.equal(all.slice((page - 1) * perPage, page * perPage));
    }
  });

  it('/api/search: narrowed by title and folder', async () => {
    const res = await api(app, member).get(`/api/search?type=dash-db&query=board%201&folderUIDs=n2,general&perpage=${PER_PAGE}`);
    expect(res.status).to.equal(200);
    const inN2OrRoot = new Set(allDashboards.filter((_, i) => i % 10 === 0 || i % 50 === 1).map((dashboard) => dashboard.uid));
    const titles = new Map(allDashboards.map((dashboard) => [dashboard.uid, dashboard.title]));
    const expected = readableDashboards.filter((uid) => inN2OrRoot.has(uid) && titles.get(uid)!.toLowerCase().includes('board 1'));
    expect(expected.length).to.be.greaterThan(50);
    expect(res.body.totalCount).to.equal(expected.length);
    expect((res.body.hits as Array<{ uid: string }>).map((hit) => hit.uid)).to.deep.equal(expected);
  });

  it('/api/folders: every page of the root, counted, and a nested level', async () => {
    const seen: string[] = [];
    const pages = Math.ceil(readableRootFolders.length / PER_PAGE) + 1;
    for (let page = 1; page <= pages; page++) {
      const res = await api(app, member).get(`/api/folders?perpage=${PER_PAGE}&page=${page}`);
      expect(res.status).to.equal(200);
      expect(res.body.totalCount, `page ${page}`).to.equal(readableRootFolders.length);
      seen.push(...(res.body.folders as Array<{ uid: string }>).map((folder) => folder.uid));
    }
    expect(seen).to.deep.equal(readableRootFolders);
    const nested = await api(app, member).get('/api/folders?parentUid=f00000');
    expect(nested.body.totalCount).to.equal(3);
    expect((nested.body.folders as Array<{ uid: string }>).map((folder) => folder.uid)).to.deep.equal(['n1', 'n2', 'n3']);
  });
});
