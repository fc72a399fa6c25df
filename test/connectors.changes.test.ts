/**
 * The entries of a `changes` connector: `POST /api/connectors/:uid/changes` (write on the
 * connector, e.g. a CI service account with an Edit grant) and `GET …/changes` (query), the
 * checks on what is recorded, the filters, and the entries going with their connector.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  buildOrg,
  buildServiceAccount,
  buildToken,
  createUser,
  DENIED,
  expectAuditEntry,
  refusalEntries,
  type TestUser,
} from './helpers/factories.ts';

const ORG = 'org_main';

describe('connectors: change entries', () => {
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
  let names = 0;
  async function connector(type = 'changes', who: TestUser = admin, orgId?: string): Promise<string> {
    const body = type === 'changes' ? { name: `changes-${++names}`, type } : { name: `prom-${++names}`, type, url: 'http://prometheus.example:9090' };
    const res = await as(who, orgId).post('/api/connectors', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  const changes = (uid: string) => `/api/connectors/${uid}/changes`;
  async function record(uid: string, body: Record<string, unknown>, who: TestUser = admin) {
    const res = await as(who).post(changes(uid), body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  describe('POST /api/connectors/:uid/changes', () => {
    it('401; 403 for an Editor and a Viewer (needs write on the connector), audited refusal', async () => {
      const uid = await connector();
      expect((await app.request('POST', changes(uid), { body: { kind: 'deploy', title: 'x' } })).status).to.equal(401);
      for (const who of [editor, viewer]) {
        const res = await as(who).post(changes(uid), { kind: 'deploy', title: 'x' });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
        expect((await refusalEntries(app, 'connectors:write', { actor_id: who.id })).at(-1)).to.include({ target_id: uid });
      }
      expect(await app.count('connector_changes', { connector_uid: uid })).to.equal(0);
    });

    it('201 with the entry, time now by default; every field kept; audited connector.change_recorded', async () => {
      const uid = await connector();
      const entry = await record(uid, { kind: 'deploy', title: '  checkout v1.4.2  ' });
      expect(entry).to.deep.include({
        connectorUid: uid,
        time: app.clock.now(),
        kind: 'deploy',
        title: 'checkout v1.4.2',
        service: null,
        environment: null,
        labels: {},
        url: null,
        createdBy: admin.id,
        created: app.clock.now(),
      });
      expect(entry.id).to.be.a('string').and.not.empty;
      const full = await record(uid, {
        time: 1_700_000_000_000,
        kind: 'config',
        title: 'raise pool size',
        service: 'checkout',
        environment: 'prod',
        labels: { team: 'payments', ticket: 'OPS-12' },
        url: 'https://ci.example/runs/42',
      });
      expect(full).to.deep.include({
        time: 1_700_000_000_000,
        kind: 'config',
        service: 'checkout',
        environment: 'prod',
        labels: { team: 'payments', ticket: 'OPS-12' },
        url: 'https://ci.example/runs/42',
      });
      await expectAuditEntry(
        app,
        { action: 'connector.change_recorded', target_id: uid },
        {
          actor_id: admin.id,
          outcome: 'success',
          metadata: { changeId: full.id, kind: 'config', time: 1_700_000_000_000, service: 'checkout', environment: 'prod' },
        },
        2,
      );
    });

    it('a CI service account records changes with its token once granted Edit on the connector', async () => {
      const uid = await connector();
      const ci = await buildServiceAccount(app, { role: 'Viewer', name: 'ci' });
      const { key } = await buildToken(app, ci);
      const body = { kind: 'deploy', title: 'pipeline 7', service: 'api' };
      expect((await app.request('POST', changes(uid), { token: key, body })).status).to.equal(403);
      const granted = await as(admin).post(`/api/connectors/${uid}/permissions`, { items: [{ userId: ci.id, permission: 2 }] });
      expect(granted.status, JSON.stringify(granted.body)).to.equal(200);
      const res = await app.request('POST', changes(uid), { token: key, body });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.createdBy).to.equal(ci.id);
      await expectAuditEntry(app, { action: 'connector.change_recorded', target_id: uid }, { actor_id: ci.id, actor_type: 'service_account' });
    });

    it('400 on a connector of another type; 404 on an unknown uid or one of another org', async () => {
      const metrics = await connector('tsmetrics');
      const res = await as(admin).post(changes(metrics), { kind: 'deploy', title: 'x' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal(`connector ${metrics} is of type tsmetrics: only a changes connector keeps change entries`);
      expect((await as(admin).get(changes(metrics))).status).to.equal(400);
      expect((await as(admin).post(changes('nope'), { kind: 'deploy', title: 'x' })).status).to.equal(404);
      const other = await buildOrg(app);
      await addMember(app, other, admin.id, 'Admin');
      const foreign = await connector('changes', admin, other);
      expect((await as(admin).post(changes(foreign), { kind: 'deploy', title: 'x' })).status).to.equal(404);
      expect((await as(admin).get(changes(foreign))).status).to.equal(404);
      expect((await as(admin, other).get(changes(foreign))).status).to.equal(200);
    });

    it('400 with a clear message for bad entries, and nothing is written', async () => {
      const uid = await connector();
      const labels = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ title: 'x' }, /^body\.kind is required$/],
        [{ kind: 'rollback', title: 'x' }, /^body\.kind must be equal to one of the allowed values$/],
        [{ kind: 'deploy' }, /^body\.title is required$/],
        [{ kind: 'deploy', title: '   ' }, /^title must not be blank$/],
        [{ kind: 'deploy', title: 'x'.repeat(501) }, /^body\.title must NOT have more than 500 characters$/],
        [{ kind: 'deploy', title: 'x', labels: labels(51) }, /^body\.labels must NOT have more than 50 properties$/],
        [{ kind: 'deploy', title: 'x', labels: { team: 7 } }, /^body\.labels\.team must be string$/],
        [{ kind: 'deploy', title: 'x', url: 'javascript:alert(1)' }, /^url must start with http:\/\/ or https:\/\/$/],
        [{ kind: 'deploy', title: 'x', url: 'not a url' }, /^url is not a valid URL$/],
        [{ kind: 'deploy', title: 'x', time: -1 }, /^body\.time must be >= 0$/],
        [{ kind: 'deploy', title: 'x', time: '2026-01-01' }, /^body\.time must be integer$/],
        [{ kind: 'deploy', title: 'x', author: 'me' }, /^body\.author is not allowed$/],
      ];
      for (const [body, message] of cases) {
        const res = await as(admin).post(changes(uid), body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message, JSON.stringify(body)).to.match(message);
      }
      expect(await app.count('connector_changes', { connector_uid: uid })).to.equal(0);
      await record(uid, { kind: 'deploy', title: 'x', labels: labels(50) });
    });
  });

  describe('GET /api/connectors/:uid/changes', () => {
    let uid: string;
    const T = 1_800_000_000_000;
    before(async () => {
      uid = await connector();
      await record(uid, { time: T, kind: 'deploy', title: 'first', service: 'api' });
      await record(uid, { time: T + 2000, kind: 'config', title: 'third', service: 'web' });
      await record(uid, { time: T + 1000, kind: 'deploy', title: 'second', service: 'web' });
    });
    const titles = async (query: string, who: TestUser = viewer) => {
      const res = await as(who).get(`${changes(uid)}${query}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return (res.body.changes as Array<{ title: string }>).map((entry) => entry.title);
    };

    it('401; every member queries by default, newest first', async () => {
      expect((await app.request('GET', changes(uid))).status).to.equal(401);
      for (const who of [viewer, editor, admin]) expect(await titles('', who)).to.deep.equal(['third', 'second', 'first']);
    });

    it('answers one page of them as every list does: {totalCount, changes, page, perPage}', async () => {
      const res = await as(viewer).get(`${changes(uid)}?kind=deploy&perpage=1&page=2`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(Object.keys(res.body)).to.deep.equal(['totalCount', 'changes', 'page', 'perPage']);
      expect(res.body).to.deep.include({ totalCount: 2, page: 2, perPage: 1 });
      expect(res.body.changes.map((entry: { title: string }) => entry.title)).to.deep.equal(['first']);
      expect(await titles('?perpage=2')).to.deep.equal(['third', 'second']);
      expect(await titles('?perpage=2&page=2')).to.deep.equal(['first']);
      expect(await titles('?perpage=2&page=3')).to.deep.equal([]);
      expect(await titles('?perpage=1000')).to.have.length(3);
    });

    it('filters by time range (inclusive), kind and service', async () => {
      expect(await titles(`?from=${T + 1000}`)).to.deep.equal(['third', 'second']);
      expect(await titles(`?to=${T + 1000}`)).to.deep.equal(['second', 'first']);
      expect(await titles(`?from=${T + 1000}&to=${T + 1000}`)).to.deep.equal(['second']);
      expect(await titles('?kind=deploy')).to.deep.equal(['second', 'first']);
      expect(await titles('?service=web&kind=deploy')).to.deep.equal(['second']);
    });

    it('at most 100 by default', async () => {
      const many = await connector();
      await app.db('connector_changes').insert(
        Array.from({ length: 101 }, (_, i) => ({
          org_id: ORG,
          connector_uid: many,
          id: `bulk-${i}`,
          time: T + i,
          kind: 'other',
          title: `bulk ${i}`,
          labels: '{}',
          created_at: T,
        })),
      );
      const res = await as(viewer).get(changes(many));
      expect(res.body).to.deep.include({ totalCount: 101, page: 1, perPage: 100 });
      expect(res.body.changes).to.have.length(100);
      expect(res.body.changes[0].title).to.equal('bulk 100');
    });

    it('400 for from after to, a perpage out of 1..1000, a page below 1, an unknown kind or parameter', async () => {
      const cases: Array<[string, RegExp]> = [
        [`?from=${T + 1}&to=${T}`, /^from must not be after to$/],
        ['?perpage=1001', /^query\.perpage must be <= 1000$/],
        ['?perpage=0', /^query\.perpage must be >= 1$/],
        ['?page=0', /^query\.page must be >= 1$/],
        ['?limit=10', /^query\.limit is not allowed$/],
        ['?kind=rollback', /^query\.kind must be equal to one of the allowed values$/],
        ['?from=yesterday', /^query\.from must be integer$/],
        ['?author=me', /^query\.author is not allowed$/],
      ];
      for (const [query, message] of cases) {
        const res = await as(viewer).get(`${changes(uid)}${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message, query).to.match(message);
      }
    });
  });

  it('deleting the connector deletes its entries', async () => {
    const uid = await connector();
    const kept = await connector();
    await record(uid, { kind: 'deploy', title: 'gone' });
    await record(kept, { kind: 'deploy', title: 'kept' });
    expect((await as(admin).delete(`/api/connectors/${uid}`)).status).to.equal(200);
    expect(await app.count('connector_changes', { connector_uid: uid })).to.equal(0);
    expect(await app.count('connector_changes', { connector_uid: kept })).to.equal(1);
  });

  it("deleting an org deletes its connectors' entries", async () => {
    const serverAdmin = await createUser(app, { role: 'Admin', svcAdmin: true });
    const doomed = await buildOrg(app);
    await addMember(app, doomed, serverAdmin.id, 'Admin');
    const uid = await connector('changes', serverAdmin, doomed);
    expect((await as(serverAdmin, doomed).post(changes(uid), { kind: 'deploy', title: 'last' })).status).to.equal(201);
    expect((await as(serverAdmin).delete(`/api/orgs/${doomed}`)).status).to.equal(200);
    expect(await app.count('connector_changes', { org_id: doomed })).to.equal(0);
  });
});
