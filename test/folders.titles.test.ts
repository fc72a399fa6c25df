/**
 * Folder titles are unique among siblings, ignoring case (as dashboard titles within a folder):
 * a create, a rename or a move that would give a parent (or the root) two children of one title
 * is 409, under concurrency too; a database that already holds such siblings is migrated by
 * renaming the later ones, audited.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import { createDb } from '../src/db/knex.ts';
import { migrateTo, migrateToLatest } from '../src/db/migrate.ts';
import { createTestDatabase, startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, type TestUser } from './helpers/factories.ts';

const TAKEN = /^a folder titled ".+" already exists (in folder \S+|at the root): folder titles are unique among siblings, ignoring case$/;

describe('folder titles among siblings', () => {
  let app: TestApp;
  let editor: TestUser;

  before(async () => {
    app = await startTestApp();
    editor = await createUser(app, { role: 'Editor' });
  });
  after(async () => {
    await app.close();
  });

  const create = (body: Record<string, unknown>) => api(app, editor).post('/api/folders', body);
  const update = (uid: string, body: Record<string, unknown>) => api(app, editor).put(`/api/folders/${uid}`, body);
  const titleOf = async (uid: string) => (await app.db('folders').where({ org_id: 'org_main', uid }).first('title')).title as string;
  async function folder(uid: string, title: string, parentUid?: string): Promise<string> {
    const res = await create({ uid, title, ...(parentUid && { parentUid }) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return uid;
  }
  function expectTaken(res: { status: number; body: { message?: string } }) {
    expect(res.status, JSON.stringify(res.body)).to.equal(409);
    expect(res.body).to.have.keys('message');
    expect(res.body.message).to.match(TAKEN);
  }

  it('refuses a second child of one title in a parent, ignoring case and blanks (409); another parent may have it', async () => {
    const parent = await folder('tp-parent', 'Titles parent');
    const other = await folder('tp-other', 'Titles other');
    await folder('tp-ops', 'Ops', parent);
    for (const title of ['Ops', 'ops', '  OPS  ']) {
      const res = await create({ title, parentUid: parent });
      expectTaken(res);
      expect(res.body.message).to.include(`in folder ${parent}`);
    }
    expect(await app.count('folders', { parent_uid: parent })).to.equal(1);
    expect((await create({ title: 'Ops', parentUid: other })).status).to.equal(201);
  });

  it('refuses a second root folder of one title (the root is a parent too)', async () => {
    await folder('root-finance', 'Finance');
    const res = await create({ title: 'FINANCE' });
    expectTaken(res);
    expect(res.body.message).to.include('at the root');
    const titles: string[] = await app.db('folders').where({ org_id: 'org_main', parent_uid: null }).pluck('title');
    expect(titles.filter((title) => title.toLowerCase() === 'finance')).to.deep.equal(['Finance']);
  });

  it("refuses a rename to a sibling's title (409), and lets a folder change the case of its own", async () => {
    const parent = await folder('rn-parent', 'Rename parent');
    await folder('rn-a', 'Alpha', parent);
    await folder('rn-b', 'Beta', parent);
    expectTaken(await update('rn-b', { title: 'ALPHA' }));
    expect(await titleOf('rn-b')).to.equal('Beta');
    const recased = await update('rn-b', { title: 'BETA' });
    expect(recased.status).to.equal(200);
    expect(recased.body.title).to.equal('BETA');
  });

  it('refuses a move into a parent that has a child of that title, or to a root that has one (409); the folder stays', async () => {
    const from = await folder('mv-from', 'Move from');
    const to = await folder('mv-to', 'Move to');
    await folder('mv-there', 'Reports', to);
    await folder('mv-here', 'reports', from);
    expectTaken(await update('mv-here', { parentUid: to }));
    await folder('mv-root-twin', 'Move from twin');
    await folder('mv-nested-twin', 'Move from twin', from);
    expectTaken(await update('mv-nested-twin', { parentUid: null }));
    // a move with a rename is judged by where it lands and what it is called there
    expect((await update('mv-here', { parentUid: to, title: 'Reports 2' })).status).to.equal(200);
    expect(await app.db('folders').where({ org_id: 'org_main', uid: 'mv-nested-twin' }).first('parent_uid')).to.deep.equal({ parent_uid: from });
  });

  it('lets 50 concurrent creates of one title in one parent make exactly one folder, the rest 409', async () => {
    const parent = await folder('race-parent', 'Race parent');
    const answers = await Promise.all(Array.from({ length: 50 }, () => create({ title: 'Raced', parentUid: parent })));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).to.have.length(1);
    expect(statuses.filter((status) => status === 409)).to.have.length(49);
    for (const res of answers.filter((answer) => answer.status === 409)) expect(res.body.message).to.match(TAKEN);
    expect(await app.count('folders', { parent_uid: parent, title: 'Raced' })).to.equal(1);
  });

  it('lets 20 concurrent renames of root folders to one title give it to exactly one, the rest 409', async () => {
    const uids = [];
    for (let i = 0; i < 20; i += 1) uids.push(await folder(`race-root-${i}`, `Race root ${i}`));
    const answers = await Promise.all(uids.map((uid) => update(uid, { title: 'Root winner' })));
    expect(answers.filter((res) => res.status === 200)).to.have.length(1);
    const refused = answers.filter((res) => res.status === 409);
    expect(refused).to.have.length(19);
    for (const res of refused) expect(res.body.message).to.match(TAKEN);
    expect(await app.count('folders', { org_id: 'org_main', title: 'Root winner' })).to.equal(1);
  });
});

describe('the migration to unique sibling titles', () => {
  const MIGRATION = '20261127100000-folder-sibling-titles.ts';
  const before = fs
    .readdirSync(new URL('../migrations/', import.meta.url))
    .filter((file) => /^\d{14}-.+\.ts$/.test(file) && file < MIGRATION)
    .sort()
    .at(-1)!;

  it('renames the later of siblings that share a title, ignoring case, with the first free "(n)", audited', async () => {
    const database = await createTestDatabase();
    const db = createDb({ databaseUrl: database.url, sqliteFile: '' });
    try {
      await migrateTo(db, before);
      await db('orgs').insert({ id: 'org_dup', name: 'Duplicates', created_at: 1, updated_at: 1 });
      const row = (uid: string, title: string, parentUid: string | null, createdAt: number) => ({
        org_id: 'org_dup',
        uid,
        title,
        description: '',
        parent_uid: parentUid,
        created_at: createdAt,
        updated_at: createdAt,
      });
      await db('folders').insert([
        row('ops-1', 'Ops', null, 1),
        row('ops-2', 'ops', null, 2),
        row('ops-3', 'OPS', null, 3),
        // a title of the "(n)" shape already there keeps it; the renames skip it
        row('ops-n', 'Ops (2)', null, 4),
        row('child-1', 'Ops', 'ops-1', 5),
        row('child-2', 'Ops', 'ops-1', 6),
        row('elsewhere', 'Ops', 'ops-2', 7),
      ]);

      await migrateToLatest(db);

      const titles = Object.fromEntries((await db('folders').where('org_id', 'org_dup').select('uid', 'title')).map((f) => [f.uid, f.title]));
      expect(titles).to.deep.equal({
        'ops-1': 'Ops',
        'ops-2': 'ops (3)',
        'ops-3': 'OPS (4)',
        'ops-n': 'Ops (2)',
        'child-1': 'Ops',
        'child-2': 'Ops (2)',
        elsewhere: 'Ops',
      });
      const audited = await db('audit_log').where({ action: 'folder.updated', org_id: 'org_dup' }).orderBy('id').select('*');
      expect(audited.map((entry) => [entry.actor_type, entry.target_id, entry.target_name, JSON.parse(entry.metadata).previousTitle])).to.deep.equal([
        ['system', 'ops-2', 'ops (3)', 'ops'],
        ['system', 'ops-3', 'OPS (4)', 'OPS'],
        ['system', 'child-2', 'Ops (2)', 'Ops'],
      ]);
      let refused: unknown = null;
      await db('folders')
        .insert({ ...row('ops-4', 'oPs', null, 8), parent_key: '', title_key: 'ops' })
        .catch((err: unknown) => (refused = err));
      expect(refused, 'the unique index holds').to.not.equal(null);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});
