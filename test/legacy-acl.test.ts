/**
 * The legacy dashboard ACL: imported by the admin CLI, read by the policy as a fallback unless
 * LEGACY_ACL_ENABLED=false, migrated into managed grants by a second command. The CLI runs as a
 * separate process on the test's database, as an operator would run it.
 */
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYSTEM_ACTOR } from '../src/audit/writer.ts';
import { importLegacyAcl, parseLegacyAclExport } from '../src/permissions/legacy-acl.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, buildTeam, createOrg, createUser, type TestUser } from './helpers/factories.ts';
import { runCli } from './helpers/cli.ts';

describe('legacy dashboard ACL (admin CLI)', function () {
  // each CLI run starts a process that opens and migrates the database
  this.timeout(60_000);
  let app: TestApp;
  let admin: TestUser;
  let reader: TestUser;
  let dir: string;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    reader = await createUser(app, { role: 'None' });
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-acl-'));
  });
  after(async () => {
    await app.close();
  });

  const cli = (...args: string[]) => runCli(app, args);
  function exportFile(content: unknown): string {
    const file = join(dir, `export-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  }
  async function folderWithDashboard(tag: string): Promise<{ folder: string; dashboard: string }> {
    expect((await api(app, admin).post('/api/folders', { uid: `acl-${tag}`, title: `acl ${tag}` })).status).to.equal(201);
    const saved = await api(app, admin).post('/api/dashboards/db', { dashboard: { uid: `acl-${tag}-d`, title: `acl ${tag}` }, folderUid: `acl-${tag}` });
    expect(saved.status).to.equal(200);
    return { folder: `acl-${tag}`, dashboard: `acl-${tag}-d` };
  }
  const read = (who: TestUser, uid: string) => api(app, who).get(`/api/dashboards/uid/${uid}`);
  const save = (who: TestUser, uid: string, folderUid: string) =>
    api(app, who).post('/api/dashboards/db', { dashboard: { uid, title: `saved ${uid}` }, folderUid, overwrite: true });
  /** The CLI wrote through another process: this instance hears of it on its next revision poll. */
  const followOtherInstance = () => app.services.engine.pollChanges();

  it('imports an export whole, the policy reads it, and importing again changes nothing', async () => {
    const { folder, dashboard } = await folderWithDashboard('import');
    const team = await buildTeam(app, { members: [reader.id] });
    const file = exportFile({
      entries: [
        { dashboardUid: dashboard, userId: reader.id, permission: 2 },
        { folderUid: folder, teamId: team.id, permission: 1 },
        { folderUid: folder, role: 'Viewer', permission: 1 },
      ],
    });
    expect((await read(reader, dashboard)).status).to.equal(403);
    for (let run = 0; run < 2; run += 1) {
      const result = await cli('import-legacy-acl', '--org', 'org_main', file);
      expect(result, result.stderr).to.include({ code: 0 });
      expect(result.stdout.trim()).to.equal('imported 3 legacy ACL entries into org org_main');
    }
    expect(await app.count('legacy_acl', { org_id: 'org_main' })).to.equal(3);
    await followOtherInstance();
    expect((await read(reader, dashboard)).status).to.equal(200);
    expect((await save(reader, dashboard, folder)).status).to.equal(200);
    const audit = await auditEntries(app, 'legacy_acl.imported');
    expect(audit.map((entry) => [entry.actor_type, entry.org_id, entry.metadata])).to.deep.equal([
      ['system', 'org_main', { entries: 3 }],
      ['system', 'org_main', { entries: 3 }],
    ]);
  });

  it('LEGACY_ACL_ENABLED=false makes the policy ignore it', async () => {
    const { dashboard } = await folderWithDashboard('disabled');
    const entries = [{ dashboardUid: dashboard, userId: reader.id, permission: 1 }];
    expect((await cli('import-legacy-acl', '--org', 'org_main', exportFile({ entries }))).code).to.equal(0);
    const off = await startTestApp({ database: { url: app.services.config.databaseUrl ?? '', drop: async () => {} }, env: { LEGACY_ACL_ENABLED: 'false' } });
    try {
      expect((await off.request('GET', `/api/dashboards/uid/${dashboard}`, { cookie: reader.cookie })).status).to.equal(403);
    } finally {
      await off.close();
    }
    await followOtherInstance();
    expect((await read(reader, dashboard)).status).to.equal(200);
  });

  it('migrates the entries into managed grants of the same level, once', async () => {
    const { folder, dashboard } = await folderWithDashboard('migrate');
    const editor = await createUser(app, { role: 'None' });
    const entries = [
      { dashboardUid: dashboard, userId: editor.id, permission: 2 },
      { folderUid: folder, userId: reader.id, permission: 1 },
    ];
    expect((await cli('import-legacy-acl', '--org', 'org_main', exportFile({ entries }))).code).to.equal(0);
    const first = await cli('migrate-legacy-acl', '--org', 'org_main');
    expect(first, first.stderr).to.include({ code: 0 });
    expect(first.stdout.trim()).to.equal('migrated 2 legacy ACL entries of org org_main into managed grants');
    expect(await app.count('legacy_acl', { org_id: 'org_main' })).to.equal(0);
    const again = await cli('migrate-legacy-acl', '--org', 'org_main');
    expect(again.stdout.trim()).to.equal('migrated 0 legacy ACL entries of org org_main into managed grants');
    await followOtherInstance();
    // the same rights as before, now as grants the permission endpoints show
    expect((await save(editor, dashboard, folder)).status).to.equal(200);
    expect((await read(reader, dashboard)).status).to.equal(200);
    expect((await save(reader, dashboard, folder)).status).to.equal(403);
    const dashboardGrants = (await api(app, admin).get(`/api/dashboards/uid/${dashboard}/permissions`)).body as Array<Record<string, unknown>>;
    expect(dashboardGrants.filter((grant) => !grant.inherited).map((grant) => [grant.userId, grant.permission])).to.deep.include([editor.id, 2]);
    const folderGrants = (await api(app, admin).get(`/api/folders/${folder}/permissions`)).body as Array<Record<string, unknown>>;
    expect(folderGrants.map((grant) => [grant.userId, grant.permission])).to.deep.include([reader.id, 1]);
    expect((await auditEntries(app, 'legacy_acl.migrated')).map((entry) => entry.metadata)).to.deep.equal([{ entries: 2 }]);
  });

  it('refuses a bad export with exit code 2 and a message naming the entry, importing nothing', async () => {
    const { dashboard } = await folderWithDashboard('bad');
    const other = await createOrg(app);
    const stranger = await createUser(app, { orgId: other });
    const before = await app.count('legacy_acl');
    const cases: Array<[unknown, RegExp]> = [
      ['{not json', /not JSON/],
      [{ items: [] }, /must have required property 'entries'/],
      [{ entries: [{ dashboardUid: dashboard, userId: reader.id, permission: 3 }] }, /entries\.0\.permission must be equal to one of the allowed values/],
      [{ entries: [{ userId: reader.id, permission: 1 }] }, /entries\[0\] must name exactly one of dashboardUid or folderUid/],
      [
        { entries: [{ dashboardUid: dashboard, userId: reader.id, role: 'Viewer', permission: 1 }] },
        /entries\[0\] must name exactly one of userId, teamId or role/,
      ],
      [{ entries: [{ dashboardUid: dashboard, userId: stranger.id, permission: 1 }] }, /entries\[0\]\.userId: .* is not in org org_main/],
      [{ entries: [{ dashboardUid: 'missing', userId: reader.id, permission: 1 }] }, /entries\[0\]\.dashboardUid: missing is not in org org_main/],
    ];
    for (const [content, message] of cases) {
      const text = typeof content === 'string' ? content : JSON.stringify(content);
      let failure: unknown;
      await (async () => importLegacyAcl(app.services, SYSTEM_ACTOR, 'org_main', parseLegacyAclExport(text)))().catch((err: unknown) => (failure = err));
      expect(String(failure), text).to.match(message);
    }
    // as an operator sees it: exit code 2 and the message, for bad files, options and commands
    const refused = await cli('import-legacy-acl', '--org', 'org_main', exportFile(cases[5]![0]));
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/^error: entries\[0\]\.userId: .* is not in org org_main$/m);
    expect((await cli('import-legacy-acl', '--org', 'org_nope', exportFile({ entries: [] }))).stderr).to.match(/org org_nope not found/);
    expect((await cli('import-legacy-acl', 'file.json')).stderr).to.match(/--org <orgId> is required/);
    expect((await cli('frobnicate')).code).to.equal(2);
    expect(await app.count('legacy_acl')).to.equal(before);
  });
});
