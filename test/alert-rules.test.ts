/** `/api/v1/provisioning/alert-rules…`: Grafana's rule fields, folder-scoped permissions, moves, quota. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, createUser, DENIED, grantManagedPermissions, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';
const PATH = '/api/v1/provisioning/alert-rules';

function rule(overrides: Record<string, unknown> = {}) {
  return {
    title: 'High CPU',
    folderUID: 'alerts-a',
    ruleGroup: 'infra',
    condition: 'B',
    data: [
      { refId: 'A', datasourceUid: 'prom', relativeTimeRange: { from: 600, to: 0 }, model: { expr: 'rate(cpu[5m])' } },
      { refId: 'B', datasourceUid: '__expr__', model: { type: 'threshold', expression: 'A' } },
    ],
    for: '5m',
    labels: { severity: 'page' },
    annotations: { summary: 'CPU is high' },
    ...overrides,
  };
}

describe('alert rules', () => {
  let app: TestApp;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;

  before(async () => {
    app = await startTestApp();
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
    outsider = await createUser(app, { role: 'None' });
    // the connector the rules read, made as any is: its list lets every Viewer and Editor query it
    const admin = await createUser(app, { role: 'Admin' });
    expect((await api(app, admin).post('/api/connectors', { uid: 'prom', name: 'prom', type: 'changes' })).status).to.equal(201);
    for (const uid of ['alerts-a', 'alerts-b']) expect((await api(app, editor).post('/api/folders', { uid, title: uid })).status).to.equal(201);
    expect((await api(app, editor).post('/api/folders', { uid: 'alerts-a-sub', title: 'sub', parentUid: 'alerts-a' })).status).to.equal(201);
  });
  after(async () => {
    await app.close();
  });

  async function create(body: Record<string, unknown>, who: TestUser = editor) {
    const res = await api(app, who).post(PATH, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { uid: string };
  }
  /** A member of no org role holding `permissions`, and query on every connector (which a rule's reader needs too). */
  async function grantee(permissions: Array<{ action: string; scope: string }>): Promise<TestUser> {
    const user = await createUser(app, { role: 'None' });
    await grantManagedPermissions(app, ORG, { kind: 'user', userId: user.id }, [...permissions, { action: 'connectors:query', scope: 'connectors:*' }]);
    return user;
  }

  describe(`POST ${PATH}`, () => {
    it('401, 403 for a Viewer', async () => {
      expect((await app.request('POST', PATH, { body: rule() })).status).to.equal(401);
      const res = await api(app, viewer).post(PATH, rule());
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(DENIED);
    });

    it("creates a rule with Grafana's fields and defaults, audited", async () => {
      const res = await api(app, editor).post(PATH, rule({ uid: 'cpu-rule' }));
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({
        uid: 'cpu-rule',
        orgID: ORG,
        folderUID: 'alerts-a',
        ruleGroup: 'infra',
        title: 'High CPU',
        condition: 'B',
        for: '5m',
        labels: { severity: 'page' },
        annotations: { summary: 'CPU is high' },
        noDataState: 'NoData',
        execErrState: 'Error',
        isPaused: false,
        version: 1,
      });
      expect(res.body.data).to.deep.equal(rule().data);
      expect((await api(app, viewer).get(`${PATH}/cpu-rule`)).body).to.deep.equal(res.body);
      const [entry] = await auditEntries(app, { action: 'alert_rule.created', target_id: 'cpu-rule' });
      expect(entry).to.include({ actor_id: editor.id, target_name: 'High CPU', org_id: ORG });
    });

    it('refuses bad input (400): unsafe uid, missing fields, a condition naming no query, duplicate refIds, bad enums, no or unknown folder', async () => {
      const bad = [
        rule({ uid: '*' }),
        rule({ uid: '../x' }),
        rule({ uid: 'a:b' }),
        rule({ title: undefined }),
        rule({ title: '  ' }),
        rule({ data: [] }),
        rule({ condition: 'Z' }),
        rule({
          data: [
            { refId: 'B', datasourceUid: 'prom', model: {} },
            { refId: 'B', datasourceUid: 'prom', model: {} },
          ],
        }),
        rule({ data: [{ refId: 'B', model: {} }] }),
        rule({ noDataState: 'Maybe' }),
        rule({ for: 'soon' }),
        rule({ labels: { severity: 3 } }),
        rule({ orgID: 1 }),
        rule({ folderUID: 'general' }),
        rule({ folderUID: 'nope' }),
        rule({ folderUID: '' }),
      ];
      for (const body of bad) {
        const res = await api(app, editor).post(PATH, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect(await app.count('alert_rules', { org_id: ORG, folder_uid: 'nope' })).to.equal(0);
    });

    it('409 for a taken uid or a title taken in the folder', async () => {
      await create(rule({ uid: 'taken-rule', title: 'Taken' }));
      expect((await api(app, editor).post(PATH, rule({ uid: 'taken-rule', title: 'Other' }))).status).to.equal(409);
      expect((await api(app, editor).post(PATH, rule({ title: 'Taken' }))).status).to.equal(409);
      await create(rule({ title: 'Taken', folderUID: 'alerts-b' }));
    });

    it('folder-scoped: a grant on a folder lets one create there (and in its subfolders) only', async () => {
      const folderWriter = await grantee(['alert.rules:read', 'alert.rules:create'].map((action) => ({ action, scope: 'folders:uid:alerts-a' })));
      await create(rule({ title: 'Scoped', folderUID: 'alerts-a-sub' }), folderWriter);
      const res = await api(app, folderWriter).post(PATH, rule({ title: 'Scoped', folderUID: 'alerts-b' }));
      expect(res.status).to.equal(403);
      expect(res.body.message).to.include('alert.rules:create');
    });
  });

  describe(`GET ${PATH} and ${PATH}/:uid`, () => {
    it('401, 403 for a member without rule rights, 404', async () => {
      const { uid } = await create(rule({ title: 'Readable' }));
      expect((await app.request('GET', PATH)).status).to.equal(401);
      expect((await app.request('GET', `${PATH}/${uid}`)).status).to.equal(401);
      expect((await api(app, outsider).get(PATH)).status).to.equal(403);
      expect((await api(app, outsider).get(`${PATH}/${uid}`)).status).to.equal(403);
      expect((await api(app, viewer).get(`${PATH}/nope`)).status).to.equal(404);
    });

    it('lists only the rules whose folder the caller may read, paged, by folder when asked', async () => {
      const inA = await create(rule({ title: 'List A', folderUID: 'alerts-a-sub' }));
      const inB = await create(rule({ title: 'List B', folderUID: 'alerts-b' }));
      const reader = await grantee([{ action: 'alert.rules:read', scope: 'folders:uid:alerts-a' }]);
      const mine = await api(app, reader).get(`${PATH}?perpage=1000`);
      const uids = mine.body.alertRules.map((r: { uid: string }) => r.uid);
      expect(uids).to.include(inA.uid);
      expect(uids).not.to.include(inB.uid);
      expect(mine.body.totalCount).to.equal(uids.length);
      expect((await api(app, reader).get(`${PATH}/${inB.uid}`)).status).to.equal(403);
      expect((await api(app, reader).get(`${PATH}/${inA.uid}`)).status).to.equal(200);
      const all = await api(app, viewer).get(`${PATH}?folderUID=alerts-b&perpage=1`);
      expect(all.body).to.include({ page: 1, perPage: 1 });
      expect(all.body.alertRules).to.have.length(1);
      expect(all.body.alertRules[0].folderUID).to.equal('alerts-b');
      expect(all.body.totalCount).to.equal(await app.count('alert_rules', { org_id: ORG, folder_uid: 'alerts-b' }));
    });
  });

  describe(`PUT ${PATH}/:uid`, () => {
    it('401, 403 for a Viewer, 404, 400', async () => {
      const { uid } = await create(rule({ title: 'To change' }));
      expect((await app.request('PUT', `${PATH}/${uid}`, { body: rule({ title: 'To change' }) })).status).to.equal(401);
      expect((await api(app, viewer).put(`${PATH}/${uid}`, rule({ title: 'To change' }))).status).to.equal(403);
      expect((await api(app, editor).put(`${PATH}/nope`, rule({ title: 'x' }))).status).to.equal(404);
      expect((await api(app, editor).put(`${PATH}/${uid}`, rule({ title: 'To change', condition: 'Q' }))).status).to.equal(400);
      expect((await api(app, editor).put(`${PATH}/${uid}`, rule({ title: 'To change', uid: 'other' }))).status).to.equal(400);
    });

    it('replaces the rule and bumps its version, audited', async () => {
      const { uid } = await create(rule({ title: 'Replace me' }));
      const res = await api(app, editor).put(`${PATH}/${uid}`, rule({ title: 'Replaced', for: '1h', labels: {}, noDataState: 'OK' }));
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ uid, title: 'Replaced', for: '1h', labels: {}, noDataState: 'OK', version: 2 });
      const [entry] = await auditEntries(app, { action: 'alert_rule.updated', target_id: uid });
      expect(entry).to.include({ target_name: 'Replaced' });
      expect(entry!.metadata).to.deep.equal({ folderUid: 'alerts-a', ruleGroup: 'infra', version: 2 });
    });

    it('a move needs write on the rule and create in the destination; the policy follows it', async () => {
      const { uid } = await create(rule({ title: 'Mover' }));
      const folderWriter = await grantee(
        ['alert.rules:read', 'alert.rules:write', 'alert.rules:create'].map((action) => ({ action, scope: 'folders:uid:alerts-a' })),
      );
      expect((await api(app, folderWriter).put(`${PATH}/${uid}`, rule({ title: 'Mover', for: '10m' }))).status).to.equal(200);
      const out = await api(app, folderWriter).put(`${PATH}/${uid}`, rule({ title: 'Mover', folderUID: 'alerts-b' }));
      expect(out.status).to.equal(403);
      expect(out.body.message).to.include('alert.rules:create');
      const foreign = await create(rule({ title: 'Foreign', folderUID: 'alerts-b' }));
      expect((await api(app, folderWriter).put(`${PATH}/${foreign.uid}`, rule({ title: 'Foreign', folderUID: 'alerts-a' }))).status).to.equal(403);
      expect((await api(app, editor).put(`${PATH}/${uid}`, rule({ title: 'Mover', folderUID: 'alerts-b' }))).body.folderUID).to.equal('alerts-b');
      expect((await api(app, folderWriter).get(`${PATH}/${uid}`)).status).to.equal(403);
      const [entry] = (await auditEntries(app, { action: 'alert_rule.updated', target_id: uid })).slice(-1);
      expect(entry!.metadata).to.deep.include({ folderUid: 'alerts-b', previousFolderUid: 'alerts-a' });
    });
  });

  describe(`DELETE ${PATH}/:uid`, () => {
    it('401, 403 for a Viewer, 404; deletes with its grants (204), audited', async () => {
      const { uid } = await create(rule({ title: 'Doomed' }));
      const holder = await grantee([{ action: 'alert.rules:read', scope: `alert.rules:uid:${uid}` }]);
      expect((await api(app, holder).get(`${PATH}/${uid}`)).status).to.equal(200);
      expect((await app.request('DELETE', `${PATH}/${uid}`)).status).to.equal(401);
      expect((await api(app, viewer).delete(`${PATH}/${uid}`)).status).to.equal(403);
      expect((await api(app, editor).delete(`${PATH}/nope`)).status).to.equal(404);
      expect((await api(app, editor).delete(`${PATH}/${uid}`)).status).to.equal(204);
      expect(await app.count('alert_rules', { org_id: ORG, uid })).to.equal(0);
      const role = await app
        .db('roles')
        .where({ org_id: ORG, uid: `managed:users:${holder.id}:permissions` })
        .first('id');
      expect(await app.db('role_permissions').where({ role_id: role.id }).pluck('scope')).to.deep.equal(['connectors:*']);
      expect(await auditEntries(app, { action: 'alert_rule.deleted', target_id: uid })).to.have.length(1);
    });
  });

  describe('quota', () => {
    it('QUOTA_ALERT_RULES_PER_ORG holds exactly under 10 concurrent creates (403)', async () => {
      const limited = await startTestApp({ env: { QUOTA_ALERT_RULES_PER_ORG: '3' } });
      try {
        const who = await createUser(limited, { role: 'Editor' });
        const admin = await createUser(limited, { role: 'Admin' });
        expect((await api(limited, admin).post('/api/connectors', { uid: 'prom', name: 'prom', type: 'changes' })).status).to.equal(201);
        expect((await limited.request('POST', '/api/folders', { cookie: who.cookie, body: { uid: 'alerts-a', title: 'a' } })).status).to.equal(201);
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => limited.request('POST', PATH, { cookie: who.cookie, body: rule({ title: `r${i}` }) })),
        );
        expect(results.filter((r) => r.status === 201)).to.have.length(3);
        const refused = results.filter((r) => r.status !== 201);
        expect(refused.map((r) => r.status)).to.deep.equal(Array(7).fill(403));
        expect(refused[0]!.body.message).to.match(/quota exceeded for alert_rules/);
        expect(await limited.count('alert_rules')).to.equal(3);
      } finally {
        await limited.close();
      }
    });
  });
});
