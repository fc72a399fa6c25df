/**
 * Reading, listing, creating and changing an alert rule also need `connectors:query` on every
 * connector its `data` reads (Grafana's expression pseudo-datasource `__expr__`/`-100` is none):
 * a connector whose list leaves Viewer and Editor out hides the rules that read it from those who may not query it.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, refusalEntries, createUser, type TestUser } from './helpers/factories.ts';

const PATH = '/api/v1/provisioning/alert-rules';
const FOLDER = 'rc-folder';
const REFUSED = 'permission denied: you need connectors:query on every connector the alert rule reads';

/** A rule querying each connector, with a threshold through Grafana's expression pseudo-datasource (either of its uids). */
function rule(title: string, connectorUids: string[], expression: '__expr__' | '-100' = '__expr__') {
  const queries = connectorUids.map((uid, i) => ({ refId: `Q${i}`, datasourceUid: uid, model: { expr: 'up' } }));
  return {
    title,
    folderUID: FOLDER,
    ruleGroup: 'rc',
    condition: 'T',
    data: [...queries, { refId: 'T', datasourceUid: expression, model: { type: 'threshold', expression: 'Q0' } }],
  };
}
describe('alert rules: query on their connectors', () => {
  let app: TestApp;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let granted: TestUser;
  let open: string;
  let restricted: string;
  let readsOpen: string;
  let readsRestricted: string;

  const as = (who: TestUser) => api(app, who);
  async function connector(name: string): Promise<string> {
    const res = await as(admin).post('/api/connectors', { name, type: 'tsmetrics', url: 'http://prometheus.example:9090' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  async function create(body: ReturnType<typeof rule>, who: TestUser = admin): Promise<string> {
    const res = await as(who).post(PATH, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  /** Makes the restricted connector's list View for these users (and for the org roles named), nothing else. */
  async function grantQuery(users: TestUser[], roles: string[] = []): Promise<void> {
    const items = [...users.map((user) => ({ userId: user.id, permission: 1 })), ...roles.map((role) => ({ role, permission: 1 }))];
    const res = await as(admin).post(`/api/connectors/${restricted}/permissions`, { items });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }
  const listed = async (who: TestUser) => {
    const res = await as(who).get(`${PATH}?folderUID=${FOLDER}&perpage=1000`);
    expect(res.status).to.equal(200);
    expect(res.body.totalCount).to.equal(res.body.alertRules.length);
    return res.body.alertRules.map((found: { uid: string }) => found.uid);
  };

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    granted = await createUser(app, { role: 'Viewer' });
    expect((await as(admin).post('/api/folders', { uid: FOLDER, title: 'rule connectors' })).status).to.equal(201);
    open = await connector('rc-open');
    restricted = await connector('rc-restricted');
    readsOpen = await create(rule('reads open', [open]));
    readsRestricted = await create(rule('reads restricted', [open, restricted], '-100'));
    await grantQuery([granted]);
  });
  after(async () => {
    await app.close();
  });

  it('GET one: 403 with a safe message when a connector it reads is restricted; 200 with a View grant, for an admin, and for open connectors', async () => {
    for (const who of [viewer, editor]) {
      const refused = await as(who).get(`${PATH}/${readsRestricted}`);
      expect(refused.status).to.equal(403);
      expect(refused.body).to.deep.equal({ message: REFUSED });
      expect((await as(who).get(`${PATH}/${readsOpen}`)).status).to.equal(200);
    }
    for (const who of [granted, admin]) expect((await as(who).get(`${PATH}/${readsRestricted}`)).status).to.equal(200);
  });

  it('the list leaves out the rules whose connectors the caller cannot query', async () => {
    expect(await listed(viewer)).to.deep.equal([readsOpen]);
    expect(await listed(granted)).to.have.members([readsOpen, readsRestricted]);
    expect(await listed(admin)).to.have.members([readsOpen, readsRestricted]);
  });

  it('create and update: 403 for a rule reading a connector one cannot query, nothing written, refusal audited', async () => {
    const before = await app.count('alert_rules', { folder_uid: FOLDER });
    const created = await as(editor).post(PATH, rule('editor restricted', [restricted]));
    expect(created.status).to.equal(403);
    expect(created.body).to.deep.equal({ message: REFUSED });
    expect(await app.count('alert_rules', { folder_uid: FOLDER })).to.equal(before);
    const [refusal] = (await refusalEntries(app, 'alert.rules:create', { actor_id: editor.id })).slice(-1);
    expect(refusal).to.include({ target_type: 'folders', target_id: FOLDER });

    const mine = await create(rule('editor open', [open]), editor);
    const changed = await as(editor).put(`${PATH}/${mine}`, rule('editor open', [open, restricted]));
    expect(changed.status).to.equal(403);
    expect(changed.body).to.deep.equal({ message: REFUSED });
    expect((await as(editor).get(`${PATH}/${mine}`)).body.data).to.have.length(2);
    // nor may one replace a rule reading such a connector, even by queries one may run
    const replaced = await as(editor).put(`${PATH}/${readsRestricted}`, rule('reads restricted', [open]));
    expect(replaced.status).to.equal(403);
    expect(replaced.body).to.deep.equal({ message: REFUSED });
  });

  it('a View grant on the connector lets an Editor read, list, create and change such rules; the Viewer role entry lets every member', async () => {
    await grantQuery([granted, editor]);
    expect((await as(editor).get(`${PATH}/${readsRestricted}`)).status).to.equal(200);
    expect(await listed(editor)).to.include(readsRestricted);
    const mine = await create(rule('editor restricted ok', [restricted]), editor);
    expect((await as(editor).put(`${PATH}/${mine}`, rule('editor restricted ok', [open, restricted]))).status).to.equal(200);
    expect((await as(viewer).get(`${PATH}/${mine}`)).status).to.equal(403);

    await grantQuery([], ['Viewer']);
    expect((await as(viewer).get(`${PATH}/${mine}`)).status).to.equal(200);
    expect(await listed(viewer)).to.include.members([readsOpen, readsRestricted, mine]);
    await grantQuery([granted]);
  });
});
