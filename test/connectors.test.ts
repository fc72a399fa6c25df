/**
 * `/api/connectors…` CRUD: who may do what, sealed secrets that never come back (responses,
 * lists, audit, errors), one default per org and signal type, optimistic locking, the quota,
 * and lists filtered by the policy.
 */
import { expect } from 'chai';
import { writeQuota } from '../src/quotas/store.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, auditEntries, refusalEntries, buildOrg, createUser, DENIED, type TestUser } from './helpers/factories.ts';

const ORG = 'org_main';
const SECRET = 's3cr3t-value-that-must-not-leak';

describe('connectors', () => {
  let app: TestApp;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app.close();
  });

  const as = (who: TestUser, orgId?: string) => api(app, who, orgId);
  async function create(body: Record<string, unknown>, who: TestUser = admin) {
    const res = await as(who).post('/api/connectors', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }
  let names = 0;
  const prom = (extra: Record<string, unknown> = {}) => ({ name: `prom-${++names}`, type: 'tsmetrics', url: 'http://prometheus.example:9090', ...extra });

  describe('POST /api/connectors', () => {
    it('401, 403 for an Editor and a Viewer (only admins create), audited refusal', async () => {
      expect((await app.request('POST', '/api/connectors', { body: prom() })).status).to.equal(401);
      for (const who of [editor, viewer]) {
        const res = await as(who).post('/api/connectors', prom());
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
      }
      expect((await refusalEntries(app, 'connectors:create', { actor_id: editor.id })).length).to.equal(1);
    });

    it('creates each type with its signal type; a changes connector has no URL', async () => {
      const metrics = await create(prom({ uid: 'metrics-1', jsonData: { httpMethod: 'POST' } }));
      expect(metrics).to.deep.include({
        uid: 'metrics-1',
        orgId: ORG,
        type: 'tsmetrics',
        signalType: 'metrics',
        url: 'http://prometheus.example:9090/',
        access: 'proxy',
        isDefault: false,
        jsonData: { httpMethod: 'POST' },
        secureJsonFields: {},
        version: 1,
      });
      expect((await create({ name: 'loki', type: 'logstore', url: 'https://loki.example' })).signalType).to.equal('logs');
      const changes = await create({ name: 'deploys', type: 'changes' });
      expect(changes).to.include({ signalType: 'changes', url: '' });
      const withUrl = await as(admin).post('/api/connectors', { name: 'deploys-2', type: 'changes', url: 'http://x.example' });
      expect(withUrl.status).to.equal(400);
      expect(withUrl.body.message).to.match(/not used by a changes connector/);
    });

    it('400 for an unknown type, a missing or non-http URL, a blank name; 409 for a taken name or uid', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ name: 'x', type: 'graphite', url: 'http://g.example' }, /body\.type/],
        [{ name: 'x', type: 'tsmetrics' }, /body\.url is required/],
        [{ name: 'x', type: 'tsmetrics', url: 'file:///etc/passwd' }, /http:\/\/ or https:\/\//],
        [{ name: 'x', type: 'tsmetrics', url: 'http://u:p@h.example' }, /must not carry credentials/],
        [{ name: '  ', type: 'tsmetrics', url: 'http://h.example' }, /must not be blank/],
        [{ name: 'x', type: 'tsmetrics', url: 'http://h.example', access: 'direct' }, /body\.access/],
      ];
      for (const [body, message] of cases) {
        const res = await as(admin).post('/api/connectors', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.match(message);
      }
      const first = await create(prom());
      expect((await as(admin).post('/api/connectors', prom({ name: first.name.toUpperCase() }))).status).to.equal(409);
      expect((await as(admin).post('/api/connectors', prom({ uid: first.uid }))).status).to.equal(409);
    });

    it('seals secureJsonData: never in a response, a list, the audit log or an error; the stored value is ciphertext', async () => {
      const created = await create(prom({ uid: 'sealed', jsonData: { basicAuthUser: 'ada' }, secureJsonData: { basicAuthPassword: SECRET } }));
      expect(created.secureJsonFields).to.deep.equal({ basicAuthPassword: true });
      const responses = [created, (await as(admin).get('/api/connectors/sealed')).body, (await as(admin).get('/api/connectors')).body];
      const invalid = await as(admin).post('/api/connectors', prom({ jsonData: { tlsAuth: true }, secureJsonData: { tlsClientCert: SECRET } }));
      expect(invalid.status).to.equal(400);
      responses.push(invalid.body);
      const audit = await auditEntries(app, { target_id: 'sealed' });
      expect(audit.map((entry) => entry.action)).to.deep.equal(['connector.created']);
      for (const shown of [...responses, audit]) expect(JSON.stringify(shown)).not.to.contain(SECRET);
      const row = await app.db('connectors').where({ org_id: ORG, uid: 'sealed' }).first('secure_json_data');
      expect(row.secure_json_data).to.match(/^v1:/);
      expect(row.secure_json_data).not.to.contain(SECRET);
      expect(JSON.parse(app.services.secretBox.open(row.secure_json_data))).to.deep.equal({ basicAuthPassword: SECRET });
    });

    it('refuses auth settings that cannot work, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ jsonData: { basicAuthUser: 'ada' } }, /secureJsonData\.basicAuthPassword is required/],
        [{ jsonData: { basicAuthUser: 'ada' }, secureJsonData: { basicAuthPassword: 'p', bearerToken: 't' } }, /only one of basic auth, a bearer token/],
        [
          { jsonData: { httpHeaderName1: 'Cookie' }, secureJsonData: { httpHeaderValue1: 'a=b' } },
          /jsonData\.httpHeaderName1: the header Cookie cannot be set/,
        ],
        [{ jsonData: { httpHeaderName1: 'Host' }, secureJsonData: { httpHeaderValue1: 'internal' } }, /Host cannot be set/],
        [{ jsonData: { httpHeaderName1: 'Connection' }, secureJsonData: { httpHeaderValue1: 'close' } }, /Connection cannot be set/],
        [{ jsonData: { httpHeaderName1: 'X-A' }, secureJsonData: { httpHeaderValue1: 'a\r\nX-B: b' } }, /control character/],
        [{ secureJsonData: { httpHeaderValue2: 'v' } }, /has no jsonData\.httpHeaderName2/],
        [{ jsonData: { tlsAuth: true }, secureJsonData: { tlsClientCert: 'x', tlsClientKey: 'y' } }, /not valid PEM/],
      ];
      for (const [extra, message] of cases) {
        const res = await as(admin).post('/api/connectors', prom(extra));
        expect(res.status, JSON.stringify(extra)).to.equal(400);
        expect(res.body.message).to.match(message);
      }
    });

    it('keeps ${...} placeholders as written', async () => {
      const created = await create(prom({ jsonData: { httpHeaderName1: 'X-Scope-OrgID' }, secureJsonData: { httpHeaderValue1: '${TENANT}' } }));
      const row = await app.db('connectors').where({ org_id: ORG, uid: created.uid }).first('secure_json_data');
      expect(JSON.parse(app.services.secretBox.open(row.secure_json_data))).to.deep.equal({ httpHeaderValue1: '${TENANT}' });
    });

    it('counts against the connectors quota', async () => {
      const orgId = await buildOrg(app);
      const orgAdmin = await createUser(app, { orgId, role: 'Admin' });
      await writeQuota(app.db, 'org', orgId, 'connectors', 1, app.clock.now());
      expect((await as(orgAdmin, orgId).post('/api/connectors', prom())).status).to.equal(201);
      const over = await as(orgAdmin, orgId).post('/api/connectors', prom());
      expect(over.status).to.equal(403);
      expect(over.body.message).to.equal('quota exceeded for connectors: the limit is 1');
      expect(await app.count('connectors', { org_id: orgId })).to.equal(1);
    });
  });

  describe('isDefault', () => {
    it('at most one default per org and signal type: setting one clears the other, other signal types keep theirs', async () => {
      const orgId = await buildOrg(app);
      const orgAdmin = await createUser(app, { orgId, role: 'Admin' });
      const make = async (body: Record<string, unknown>) => {
        const res = await as(orgAdmin, orgId).post('/api/connectors', body);
        expect(res.status).to.equal(201);
        return res.body.uid as string;
      };
      const a = await make(prom({ isDefault: true }));
      const logs = await make({ name: 'logs', type: 'logstore', url: 'http://l.example', isDefault: true });
      const b = await make(prom({ isDefault: true }));
      const defaults = async () =>
        ((await as(orgAdmin, orgId).get('/api/connectors')).body.connectors as Array<{ uid: string; isDefault: boolean }>)
          .filter((c) => c.isDefault)
          .map((c) => c.uid)
          .sort();
      expect(await defaults()).to.deep.equal([b, logs].sort());
      expect((await as(orgAdmin, orgId).put(`/api/connectors/${a}`, { isDefault: true })).status).to.equal(200);
      expect(await defaults()).to.deep.equal([a, logs].sort());
    });

    it('concurrent defaults of one signal type leave exactly one, and none fails', async () => {
      const orgId = await buildOrg(app);
      const orgAdmin = await createUser(app, { orgId, role: 'Admin' });
      const results = await Promise.all(Array.from({ length: 6 }, () => as(orgAdmin, orgId).post('/api/connectors', prom({ isDefault: true }))));
      expect(results.map((res) => res.status)).to.deep.equal(Array(6).fill(201));
      expect(await app.count('connectors', { org_id: orgId, default_for: 'metrics' })).to.equal(1);
    });
  });

  describe('GET /api/connectors', () => {
    it('401; lists by name with paging and filters by signalType, type and query', async () => {
      expect((await app.request('GET', '/api/connectors')).status).to.equal(401);
      const orgId = await buildOrg(app);
      const orgAdmin = await createUser(app, { orgId, role: 'Admin' });
      for (const body of [
        prom({ name: 'b-metrics' }),
        prom({ name: 'a-metrics' }),
        { name: 'c-logs', type: 'logstore', url: 'http://l.example' },
        { name: 'd-changes', type: 'changes' },
      ]) {
        expect((await as(orgAdmin, orgId).post('/api/connectors', body)).status).to.equal(201);
      }
      const list = async (query: string) => {
        const res = await as(orgAdmin, orgId).get(`/api/connectors${query}`);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return { total: res.body.totalCount, names: res.body.connectors.map((c: { name: string }) => c.name) };
      };
      expect(await list('')).to.deep.equal({ total: 4, names: ['a-metrics', 'b-metrics', 'c-logs', 'd-changes'] });
      expect(await list('?perpage=2&page=2')).to.deep.equal({ total: 4, names: ['c-logs', 'd-changes'] });
      expect(await list('?signalType=metrics')).to.deep.equal({ total: 2, names: ['a-metrics', 'b-metrics'] });
      expect(await list('?type=changes')).to.deep.equal({ total: 1, names: ['d-changes'] });
      expect(await list('?query=LOGS')).to.deep.equal({ total: 1, names: ['c-logs'] });
      expect((await as(orgAdmin, orgId).get('/api/connectors?signalType=traces')).status).to.equal(400);
    });

    it('shows only the connectors the caller may read', async () => {
      const orgId = await buildOrg(app);
      const orgAdmin = await createUser(app, { orgId, role: 'Admin' });
      for (const uid of ['seen', 'unseen']) expect((await as(orgAdmin, orgId).post('/api/connectors', prom({ uid: `${uid}-${orgId}` }))).status).to.equal(201);
      const reader = await createUser(app, { orgId, role: 'None' });
      await assignRole(app, orgId, reader.id, `managed:users:${reader.id}:permissions`, [{ action: 'connectors:read', scope: `connectors:uid:seen-${orgId}` }]);
      const res = await as(reader, orgId).get('/api/connectors');
      expect(res.status).to.equal(200);
      expect(res.body.totalCount).to.equal(1);
      expect(res.body.connectors.map((c: { uid: string }) => c.uid)).to.deep.equal([`seen-${orgId}`]);
      expect((await as(reader, orgId).get(`/api/connectors/unseen-${orgId}`)).status).to.equal(403);
      const none = await createUser(app, { orgId, role: 'None' });
      expect((await as(none, orgId).get('/api/connectors')).status).to.equal(403);
    });
  });

  describe('GET/PUT/DELETE /api/connectors/:uid', () => {
    it('a Viewer reads; 404 for a missing one and for one of another org', async () => {
      const created = await create(prom());
      expect((await as(viewer).get(`/api/connectors/${created.uid}`)).body).to.deep.equal(created);
      expect((await as(viewer).get('/api/connectors/nope')).status).to.equal(404);
      const orgId = await buildOrg(app);
      const elsewhere = await createUser(app, { orgId, role: 'Admin' });
      expect((await as(elsewhere, orgId).get(`/api/connectors/${created.uid}`)).status).to.equal(404);
    });

    it('PUT: 403 for an Editor; an admin updates, the version moves, secrets stay unless given again', async () => {
      const created = await create(prom({ jsonData: { basicAuthUser: 'ada' }, secureJsonData: { basicAuthPassword: SECRET } }));
      const denied = await as(editor).put(`/api/connectors/${created.uid}`, { name: 'renamed' });
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
      const res = await as(admin).put(`/api/connectors/${created.uid}`, { name: `${created.name}-renamed`, url: 'https://prom2.example/', version: 1 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({
        name: `${created.name}-renamed`,
        url: 'https://prom2.example/',
        version: 2,
        secureJsonFields: { basicAuthPassword: true },
      });
      const row = await app.db('connectors').where({ org_id: ORG, uid: created.uid }).first('secure_json_data');
      expect(JSON.parse(app.services.secretBox.open(row.secure_json_data))).to.deep.equal({ basicAuthPassword: SECRET });
      const removed = await as(admin).put(`/api/connectors/${created.uid}`, { jsonData: {}, secureJsonData: { basicAuthPassword: '' } });
      expect(removed.body.secureJsonFields).to.deep.equal({});
      const [entry] = (await auditEntries(app, { action: 'connector.updated', target_id: created.uid })).slice(-1);
      expect(entry!.metadata).to.deep.equal({ version: 3, changed: ['jsonData', 'secureJsonData'] });
      expect(JSON.stringify(await auditEntries(app, { target_id: created.uid }))).not.to.contain(SECRET);
    });

    it('PUT: 409 on a stale version, 400 on a type change, 409 on a taken name', async () => {
      const created = await create(prom());
      const other = await create(prom());
      const stale = await as(admin).put(`/api/connectors/${created.uid}`, { name: 'x', version: 7 });
      expect(stale.status).to.equal(409);
      expect(stale.body.message).to.match(/changed by someone else/);
      expect((await as(admin).put(`/api/connectors/${created.uid}`, { type: 'logstore' })).status).to.equal(400);
      expect((await as(admin).put(`/api/connectors/${created.uid}`, { name: other.name })).status).to.equal(409);
      expect((await as(admin).get(`/api/connectors/${created.uid}`)).body.version).to.equal(1);
    });

    it('DELETE: 403 for an Editor; an admin deletes it with its grants, audited', async () => {
      const created = await create(prom());
      const grantee = await createUser(app, { role: 'None' });
      await assignRole(app, ORG, grantee.id, `managed:users:${grantee.id}:permissions`, [
        { action: 'connectors:query', scope: `connectors:uid:${created.uid}` },
      ]);
      expect((await as(editor).delete(`/api/connectors/${created.uid}`)).status).to.equal(403);
      const res = await as(admin).delete(`/api/connectors/${created.uid}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ uid: created.uid, name: created.name, message: `Connector ${created.name} deleted` });
      expect((await as(admin).get(`/api/connectors/${created.uid}`)).status).to.equal(404);
      expect(await app.count('role_permissions', { scope: `connectors:uid:${created.uid}` })).to.equal(0);
      const [entry] = await auditEntries(app, { action: 'connector.deleted', target_id: created.uid });
      expect(entry).to.include({ actor_id: admin.id, target_name: created.name, outcome: 'success' });
      expect((await as(admin).delete(`/api/connectors/${created.uid}`)).status).to.equal(404);
    });
  });
});
