/**
 * The chat tools (`POST /api/chat/tools/:tool`) against a real Prometheus (Debian `prometheus`,
 * started by the test on a free loopback port, data backfilled with promtool): each of the three
 * checks refusing on its own (the agent type's tools, the permission mode, RBAC on the
 * connector), connectors_list's choices (default, only one, ambiguous, none, by name), and
 * metrics_query's connector choice and 20-series cap. Without prometheus the suite is skipped,
 * except in CI.
 */
import { expect } from 'chai';
import { DEFAULT_CHAT_AGENTS } from '../src/authz/chat-agents.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, refusalEntries, buildOrgWithPeople, createUser, DENIED, expectAuditEntry, type TestUser } from './helpers/factories.ts';
import { LINES, lineTimestamp, startLoki, TENANT, type RunningLoki } from './helpers/loki.ts';
import { BASIC_PASSWORD, BASIC_USER, ROOMS, startPrometheus, T0, type RunningPrometheus } from './helpers/prometheus.ts';
import { requirePeer } from './helpers/peers.ts';

const ORG = 'org_main';
const HOSTS = 25;
const LAST_MINUTE = T0 + 9 * 60;

describe('chat tools', function () {
  let app: TestApp;
  let prometheus: RunningPrometheus | undefined;
  let admin: TestUser;
  let viewer: TestUser;
  /** A member without a basic role: the chat (fixed:chat:user) and what managed grants give (read and query on prom-narrow). */
  let narrowed: TestUser;
  /** A member who may use the chat and read connectors, but query none. */
  let reader: TestUser;
  /** A member without a basic role whose grants reach a connector, but who may not use the chat. */
  let noChat: TestUser;
  const uids: Record<string, string> = {};

  before(async function () {
    requirePeer(this, 'prometheus');
    prometheus = await startPrometheus({ kind: 'none' }, { hosts: HOSTS });
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    narrowed = await createUser(app, { role: 'None' });
    reader = await createUser(app, { role: 'None' });
    noChat = await createUser(app, { role: 'None' });
    await assignRole(app, ORG, reader.id, 'fixed:connectors:reader');
    for (const member of [narrowed, reader]) await assignRole(app, ORG, member.id, 'fixed:chat:user');
    const connectors = [
      { name: 'prom-main', type: 'tsmetrics', url: prometheus.url, isDefault: true },
      {
        name: 'prom-narrow',
        type: 'tsmetrics',
        url: prometheus.url,
        jsonData: { basicAuthUser: BASIC_USER },
        secureJsonData: { basicAuthPassword: BASIC_PASSWORD },
      },
      { name: 'logs-only', type: 'logstore', url: prometheus.url },
      { name: 'changes-a', type: 'changes' },
      { name: 'changes-b', type: 'changes' },
    ];
    for (const body of connectors) {
      const res = await api(app, admin).post('/api/connectors', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      uids[body.name] = res.body.uid;
    }
    // prom-narrow's list gives View to these two and no longer to Viewer and Editor: only they (and Admins) query it.
    const narrowedList = await api(app, admin).post(`/api/connectors/${uids['prom-narrow']}/permissions`, {
      items: [narrowed, noChat].map((member) => ({ userId: member.id, permission: 1 })),
    });
    expect(narrowedList.status, JSON.stringify(narrowedList.body)).to.equal(200);
  });
  after(async () => {
    await prometheus?.stop();
    await app?.close();
  });

  /** A chat tool call as `who`; reads run in read_only mode, as an agent that may not write would. */
  const call = (who: TestUser, tool: string, args: Record<string, unknown> = {}, chat: Record<string, unknown> = {}) =>
    api(app, who).post(`/api/chat/tools/${tool}`, { agentType: 'investigator', permissionMode: 'read_only', args, ...chat });

  const choice = (name: string, signalType: string, isDefault = false) => ({
    uid: uids[name],
    name,
    type: { metrics: 'tsmetrics', logs: 'logstore', changes: 'changes' }[signalType],
    signalType,
    isDefault,
  });

  describe('the route and the chat checks', () => {
    it('401 without credentials', async () => {
      const res = await app.request('POST', '/api/chat/tools/connectors_list', { body: { agentType: 'investigator', permissionMode: 'read_only' } });
      expect(res.status).to.equal(401);
    });

    it('an unknown tool is a 404 naming the tools to who may use chat, a 403 to who may not', async () => {
      const res = await call(viewer, 'dashboards_search');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({
        message:
          'no chat tool dashboards_search: the tools are connectors_list, metrics_query, logs_query, changes_list, changes_record, ops_read, ops_plan_create',
      });
      const refused = await call(noChat, 'dashboards_search');
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal('permission denied: you need chat:use to do this');
    });

    it('a member whose grants reach a connector, without chat:use, may query it but not through the chat: 403, audited', async () => {
      const direct = await api(app, noChat).get(`/api/connectors/${uids['prom-narrow']}`);
      expect(direct.status).to.equal(200);
      const refused = await call(noChat, 'metrics_query', { connector: 'prom-narrow', query: 'up' });
      expect(refused.status).to.equal(403);
      expect(refused.body).to.deep.equal({ message: 'permission denied: you need chat:use to do this' });
      expect(await refusalEntries(app, 'connectors:query', { actor_id: noChat.id }), 'the refusal is in the audit log').to.have.length(1);
      await assignRole(app, ORG, noChat.id, 'fixed:chat:user');
      expect((await call(noChat, 'metrics_query', { connector: 'prom-narrow', query: 'up' })).status, 'with chat:user').to.equal(200);
    });

    it('bad input is a 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ permissionMode: 'read_only', args: { query: 'up' } }, 'body.agentType is required'],
        [{ agentType: 'investigator', args: { query: 'up' } }, 'body.permissionMode is required'],
        [{ agentType: 'investigator', permissionMode: 'read_only', args: 'up' }, 'body.args must be object'],
        [{ agentType: 'investigator', permissionMode: 'read_only', args: {} }, 'body.args.query is required'],
        [{ agentType: 'investigator', permissionMode: 'read_only', args: { query: 'up', limit: 3 } }, 'body.args.limit is not allowed'],
        [{ agentType: 'investigator', permissionMode: 'read_only', args: { query: 'up', maxSeries: 1001 } }, 'body.args.maxSeries must be <= 1000'],
        [
          { agentType: 'investigator', permissionMode: 'read_only', args: { query: 'up', type: 'stream' } },
          'body.args.type must be equal to one of the allowed values',
        ],
      ];
      for (const [body, message] of cases) {
        const res = await api(app, viewer).post('/api/chat/tools/metrics_query', body);
        expect(res.status, message).to.equal(400);
        expect(res.body).to.deep.equal({ message });
      }
      const badSignal = await call(viewer, 'connectors_list', { signalType: 'traces' });
      expect(badSignal.status).to.equal(400);
      expect(badSignal.body.message).to.equal('body.args.signalType must be equal to one of the allowed values');
    });

    it('every agent type may call its tools; an agent type not allowed the tool is refused by the policy, saying why', async () => {
      expect(Object.fromEntries(Object.entries(DEFAULT_CHAT_AGENTS).map(([agentType, { tools }]) => [agentType, Object.keys(tools)]))).to.deep.equal({
        investigator: ['connectors_list', 'metrics_query', 'logs_query', 'changes_list', 'ops_read'],
        dashboard_builder: ['connectors_list', 'metrics_query', 'logs_query'],
        operator: ['connectors_list', 'metrics_query', 'logs_query', 'changes_list', 'changes_record', 'ops_read', 'ops_plan_create'],
      });
      for (const agentType of Object.keys(DEFAULT_CHAT_AGENTS)) {
        expect((await call(viewer, 'connectors_list', {}, { agentType })).status, agentType).to.equal(200);
        const res = await call(viewer, 'metrics_query', { query: 'demo_temperature', time: LAST_MINUTE }, { agentType });
        expect(res.status, agentType).to.equal(200);
      }
      const notAllowed = await call(viewer, 'changes_list', { connector: 'changes-a' }, { agentType: 'dashboard_builder' });
      expect(notAllowed.status).to.equal(403);
      expect(notAllowed.body).to.deep.equal({ message: 'chat: tool changes_list is not allowed for agent type dashboard_builder' });
      for (const [tool, args] of [
        ['connectors_list', {}],
        ['metrics_query', { query: 'up' }],
      ] as const) {
        const res = await call(admin, tool, args, { agentType: 'ghost' });
        expect(res.status, tool).to.equal(403);
        expect(res.body).to.deep.equal({ message: `chat: tool ${tool} is not allowed for agent type ghost` });
      }
    });

    it('read tools run in any permission mode, read_only included', async () => {
      for (const permissionMode of ['read_only', 'default', 'auto']) {
        const res = await call(viewer, 'metrics_query', { query: 'demo_temperature', time: LAST_MINUTE }, { permissionMode });
        expect(res.status, permissionMode).to.equal(200);
      }
    });

    it('RBAC: without connectors:query on the connector the call is refused, whatever the agent may do', async () => {
      const query = { query: 'demo_temperature', time: LAST_MINUTE };
      const refusals: Array<[TestUser, Record<string, unknown>]> = [
        [reader, query], // may read connectors, query none
        [viewer, { ...query, connector: 'prom-narrow' }], // a narrowed connector: the viewer holds no grant on it
        [narrowed, query], // the default, prom-main: its grant is on prom-narrow only
      ];
      for (const [who, args] of refusals) {
        const res = await call(who, 'metrics_query', args, { agentType: 'operator', permissionMode: 'default' });
        expect(res.status, JSON.stringify(args)).to.equal(403);
        expect(res.body.message).to.match(DENIED).and.to.contain('connectors:query');
      }
      const allowed = await call(narrowed, 'metrics_query', { ...query, connector: 'prom-narrow' });
      expect(allowed.status, JSON.stringify(allowed.body)).to.equal(200);
      expect(allowed.body.connector).to.deep.equal(choice('prom-narrow', 'metrics'));
    });
  });

  describe('connectors_list', () => {
    it('without a signal type: the readable connectors by signal, defaults marked, no settings or secrets', async () => {
      const res = await call(viewer, 'connectors_list');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        status: 'ok',
        bySignal: {
          metrics: [choice('prom-main', 'metrics', true), choice('prom-narrow', 'metrics')],
          logs: [choice('logs-only', 'logs')],
          changes: [choice('changes-a', 'changes'), choice('changes-b', 'changes')],
          ops: [],
        },
      });
      expect(JSON.stringify(res.body)).not.to.contain(BASIC_PASSWORD).and.not.to.contain(prometheus!.url);
      const narrow = await call(narrowed, 'connectors_list');
      expect(narrow.body).to.deep.equal({ status: 'ok', bySignal: { metrics: [choice('prom-narrow', 'metrics')], logs: [], changes: [], ops: [] } });
    });

    it('with a signal type: the default, else the only readable one, else ambiguous with the candidates, else none', async () => {
      expect((await call(viewer, 'connectors_list', { signalType: 'metrics' })).body).to.deep.equal({
        status: 'ok',
        connector: choice('prom-main', 'metrics', true),
      });
      expect((await call(viewer, 'connectors_list', { signalType: 'logs' })).body).to.deep.equal({ status: 'ok', connector: choice('logs-only', 'logs') });
      expect((await call(viewer, 'connectors_list', { signalType: 'changes' })).body).to.deep.equal({
        status: 'ambiguous',
        message: '2 changes connectors and none is the default: ask the user which one to use',
        candidates: [choice('changes-a', 'changes'), choice('changes-b', 'changes')],
      });
      // the default is not readable to this caller: the only connector it may read is the choice
      expect((await call(narrowed, 'connectors_list', { signalType: 'metrics' })).body).to.deep.equal({
        status: 'ok',
        connector: choice('prom-narrow', 'metrics'),
      });
      expect((await call(narrowed, 'connectors_list', { signalType: 'logs' })).body).to.deep.equal({
        status: 'none',
        message: 'there is no logs connector you may read',
      });
    });

    it('with a name: that connector; 404 for an unknown one, 400 for another signal, 403 for one the caller may not read', async () => {
      for (const named of ['changes-b', uids['changes-b']!]) {
        const res = await call(viewer, 'connectors_list', { name: named });
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal({ status: 'ok', connector: choice('changes-b', 'changes') });
      }
      const unknown = await call(viewer, 'connectors_list', { name: 'prom-nowhere' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.equal({ message: 'connector prom-nowhere not found (connectors_list shows the connectors you may use)' });
      const wrongSignal = await call(viewer, 'connectors_list', { name: 'logs-only', signalType: 'metrics' });
      expect(wrongSignal.status).to.equal(400);
      expect(wrongSignal.body).to.deep.equal({ message: 'connector logs-only is a logs connector, not a metrics one' });
      const refused = await call(narrowed, 'connectors_list', { name: 'prom-main' });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal('permission denied: you need connectors:read to do this');
    });
  });

  describe('metrics_query', () => {
    const temperatures = (body: { series: Array<{ labels: Record<string, string>; values: unknown[] }> }) =>
      Object.fromEntries(body.series.map((series) => [series.labels.room, series.values]));

    it('without a connector: the org default; by name or uid: that one; normalised series, nothing truncated', async () => {
      for (const connector of [undefined, 'prom-main', uids['prom-main']]) {
        const res = await call(viewer, 'metrics_query', { query: 'demo_temperature', time: LAST_MINUTE, ...(connector && { connector }) });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body).to.include({ resultType: 'vector', truncated: false, totalSeries: 2 });
        expect(res.body.connector).to.deep.equal(choice('prom-main', 'metrics', true));
        expect(temperatures(res.body)).to.deep.equal({ kitchen: [[LAST_MINUTE, ROOMS.kitchen + 9]], cellar: [[LAST_MINUTE, ROOMS.cellar + 9]] });
      }
    });

    it('a range query', async () => {
      const res = await call(viewer, 'metrics_query', { query: 'demo_temperature{room="cellar"}', type: 'range', start: T0, end: LAST_MINUTE, step: 60 });
      expect(res.status).to.equal(200);
      expect(res.body.resultType).to.equal('matrix');
      expect(temperatures(res.body).cellar).to.deep.equal(Array.from({ length: 10 }, (_, minute) => [T0 + minute * 60, ROOMS.cellar + minute]));
    });

    it('at most 20 series, saying how many there were; maxSeries asks for fewer or more', async () => {
      const limited = await call(viewer, 'metrics_query', { query: 'demo_up', time: T0 });
      expect(limited.status).to.equal(200);
      expect(limited.body).to.include({ truncated: true, totalSeries: HOSTS });
      expect(limited.body.series).to.have.length(20);
      for (const [maxSeries, shown, truncated] of [
        [HOSTS, HOSTS, false],
        [1000, HOSTS, false],
        [5, 5, true],
      ] as const) {
        const res = await call(viewer, 'metrics_query', { query: 'demo_up', time: T0, maxSeries });
        expect(res.body, String(maxSeries)).to.include({ truncated, totalSeries: HOSTS });
        expect(res.body.series, String(maxSeries)).to.have.length(shown);
      }
    });

    it('404 for an unknown connector, 400 for one of another signal, for a bad query and for a range without its bounds', async () => {
      const cases: Array<[Record<string, unknown>, number, string | RegExp]> = [
        [{ connector: 'prom-nowhere', query: 'up' }, 404, 'connector prom-nowhere not found (connectors_list shows the connectors you may use)'],
        [{ connector: 'changes-a', query: 'up' }, 400, 'connector changes-a is a changes connector, not a metrics one'],
        [{ query: 'sum(' }, 400, /^backend answered 400: .*parse error/],
        [{ query: 'up', type: 'range', start: T0 }, 400, 'a range query needs start, end and step'],
      ];
      for (const [args, status, message] of cases) {
        const res = await call(viewer, 'metrics_query', args);
        expect(res.status, JSON.stringify(args)).to.equal(status);
        if (typeof message === 'string') expect(res.body).to.deep.equal({ message });
        else expect(res.body.message).to.match(message);
      }
    });

    it('in an org without a default metrics connector, a call must name one', async () => {
      const org = await buildOrgWithPeople(app);
      const res = await api(app, org.viewer, org.orgId).post('/api/chat/tools/metrics_query', {
        agentType: 'investigator',
        permissionMode: 'read_only',
        args: { query: 'up' },
      });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ message: 'body.args.connector is required: the org has no default metrics connector (connectors_list shows them)' });
    });
  });

  describe('changes_record and changes_list', () => {
    const change = { kind: 'deploy', title: 'checkout v42', service: 'checkout', environment: 'prod' };
    const operator = { agentType: 'operator', permissionMode: 'default' };

    it('changes_record is a write: each check refuses it on its own, and nothing is recorded', async () => {
      const cases: Array<[TestUser, Record<string, unknown>, string]> = [
        [admin, { agentType: 'operator', permissionMode: 'read_only' }, 'chat: permission mode read_only forbids writes'],
        [admin, { agentType: 'investigator', permissionMode: 'default' }, 'chat: tool changes_record is not allowed for agent type investigator'],
        [viewer, operator, 'permission denied: you need connectors:write to do this'],
      ];
      for (const [who, chat, message] of cases) {
        const res = await call(who, 'changes_record', { connector: 'changes-a', ...change }, chat);
        expect(res.status, message).to.equal(403);
        expect(res.body).to.deep.equal({ message });
      }
      expect(await app.count('connector_changes')).to.equal(0);
      expect((await refusalEntries(app, 'connectors:write', { actor_id: viewer.id })).length).to.equal(1);
      // each refusal keeps the call's tool, agent type and permission mode
      const refusals = (await refusalEntries(app, 'connectors:write', { actor_id: admin.id })).slice(-2);
      expect(refusals.map((entry) => entry.metadata!.chat)).to.deep.equal([
        { tool: 'changes_record', agentType: 'operator', permissionMode: 'read_only' },
        { tool: 'changes_record', agentType: 'investigator', permissionMode: 'default' },
      ]);
      expect(refusals[0]!.metadata).to.include({ permission: 'connectors:write', request: 'POST /api/chat/tools/:tool' });
    });

    it('an operator records a change (audited) and an investigator reads it back', async () => {
      const res = await call(admin, 'changes_record', { connector: 'changes-a', ...change }, operator);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.connector).to.deep.equal(choice('changes-a', 'changes'));
      expect(res.body.change).to.deep.include({ ...change, connectorUid: uids['changes-a'], createdBy: admin.id, labels: {}, url: null });
      await expectAuditEntry(app, { action: 'connector.change_recorded', actor_id: admin.id }, { target_id: uids['changes-a']!, outcome: 'success' }, 1);
      const list = await call(viewer, 'changes_list', { connector: 'changes-a' });
      expect(list.status).to.equal(200);
      expect(list.body).to.deep.equal({ connector: choice('changes-a', 'changes'), totalCount: 1, changes: [res.body.change], page: 1, perPage: 100 });
      const pastTheEnd = await call(viewer, 'changes_list', { connector: 'changes-a', perpage: 1, page: 2 });
      expect(pastTheEnd.body).to.deep.equal({ connector: choice('changes-a', 'changes'), totalCount: 1, changes: [], page: 2, perPage: 1 });
      expect((await call(viewer, 'changes_list', { connector: 'changes-b', kind: 'deploy' })).body.changes).to.deep.equal([]);
    });

    it('a grant of Edit on one connector lets its grantee record there only; a grant narrows who lists it', async () => {
      const granted = await api(app, admin).post(`/api/connectors/${uids['changes-b']}/permissions`, { items: [{ userId: reader.id, permission: 2 }] });
      expect(granted.status, JSON.stringify(granted.body)).to.equal(200);
      const recorded = await call(reader, 'changes_record', { connector: 'changes-b', ...change, kind: 'config' }, operator);
      expect(recorded.status, JSON.stringify(recorded.body)).to.equal(200);
      const refused = await call(reader, 'changes_record', { connector: 'changes-a', ...change }, operator);
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal('permission denied: you need connectors:write to do this');
      // changes-b is narrowed now: the viewer, who holds no grant on it, may not read its entries
      const narrowedList = await call(viewer, 'changes_list', { connector: 'changes-b' });
      expect(narrowedList.status).to.equal(403);
      expect(narrowedList.body.message).to.equal('permission denied: you need connectors:query to do this');
      expect((await call(reader, 'changes_list', { connector: 'changes-b' })).body.changes.map((c: { kind: string }) => c.kind)).to.deep.equal(['config']);
    });

    it('bad input is a 400 naming the field; without a default changes connector, one must be named', async () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['changes_record', { connector: 'changes-a', kind: 'deploy' }, 'body.args.title is required'],
        ['changes_record', { connector: 'changes-a', kind: 'rollout', title: 'x' }, 'body.args.kind must be equal to one of the allowed values'],
        ['changes_record', { connector: 'prom-main', kind: 'deploy', title: 'x' }, 'connector prom-main is a metrics connector, not a changes one'],
        [
          'changes_record',
          { kind: 'deploy', title: 'x' },
          'body.args.connector is required: the org has no default changes connector (connectors_list shows them)',
        ],
        ['changes_list', { connector: 'changes-a', perpage: 0 }, 'body.args.perpage must be >= 1'],
        ['changes_list', {}, 'body.args.connector is required: the org has no default changes connector (connectors_list shows them)'],
      ];
      for (const [tool, args, message] of cases) {
        const res = await call(admin, tool, args, operator);
        expect(res.status, message).to.equal(400);
        expect(res.body).to.deep.equal({ message });
      }
    });
  });

  describe("logs_query (Loki's API, helpers/loki-double.ts)", () => {
    let loki: RunningLoki | undefined;
    let lokiUid: string;

    before(async () => {
      loki = await startLoki();
      const res = await api(app, admin).post('/api/connectors', {
        name: 'loki-tenant',
        type: 'logstore',
        url: loki.url,
        jsonData: { httpHeaderName1: 'X-Scope-OrgID' },
        secureJsonData: { httpHeaderValue1: TENANT },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      lokiUid = res.body.uid;
    });
    after(async () => {
      await loki?.stop();
    });

    // a range query: logs_query's default type (Loki answers log lines to range queries only)
    const range = () => ({ connector: 'loki-tenant', start: loki!.t0 - 1, end: loki!.t0 + LINES.length + 1 });

    it('log lines of the connector named, newest first, bounded by limit; forward on request', async () => {
      const res = await call(viewer, 'logs_query', { ...range(), query: '{job="checkout", level="error"}' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.connector).to.deep.equal({ uid: lokiUid, name: 'loki-tenant', type: 'logstore', signalType: 'logs', isDefault: false });
      expect(res.body.resultType).to.equal('streams');
      expect(res.body.streams).to.deep.equal([
        {
          labels: { job: 'checkout', level: 'error' },
          entries: [
            [lineTimestamp(loki!.t0, 3), 'order 1004 payment declined'],
            [lineTimestamp(loki!.t0, 1), 'order 1002 payment declined'],
          ],
        },
      ]);
      const first = await call(viewer, 'logs_query', { ...range(), query: '{job="checkout"}', limit: 1, direction: 'forward' });
      expect(first.body.streams.flatMap((stream: { entries: unknown[] }) => stream.entries)).to.deep.equal([[lineTimestamp(loki!.t0, 0), 'order 1001 placed']]);
    });

    it('a metric query answers series, capped as metrics_query is', async () => {
      const query = { ...range(), query: 'sum by (level) (count_over_time({job="checkout"}[1m]))', step: 60 };
      const all = await call(viewer, 'logs_query', query);
      expect(all.status, JSON.stringify(all.body)).to.equal(200);
      expect(all.body).to.include({ resultType: 'matrix', truncated: false, totalSeries: 2 });
      const one = await call(viewer, 'logs_query', { ...query, maxSeries: 1 });
      expect(one.body).to.include({ truncated: true, totalSeries: 2 });
      expect(one.body.series).to.have.length(1);
    });

    it('without a default logs connector one must be named; another signal, a bad query, a range without bounds and too large a limit are 400', async () => {
      const cases: Array<[Record<string, unknown>, string | RegExp]> = [
        [{ query: '{job="checkout"}' }, 'body.args.connector is required: the org has no default logs connector (connectors_list shows them)'],
        [{ connector: 'prom-main', query: '{job="checkout"}' }, 'connector prom-main is a metrics connector, not a logs one'],
        [{ ...range(), query: '{job=' }, /^backend answered 400: .*parse error/],
        [{ connector: 'loki-tenant', query: '{job="checkout"}' }, 'a range query needs start and end'],
        [{ connector: 'loki-tenant', query: '{job="checkout"}', limit: 5001 }, 'body.args.limit must be <= 5000'],
      ];
      for (const [args, message] of cases) {
        const res = await call(viewer, 'logs_query', args);
        expect(res.status, JSON.stringify(args)).to.equal(400);
        if (typeof message === 'string') expect(res.body).to.deep.equal({ message });
        else expect(res.body.message).to.match(message);
      }
    });

    it('RBAC: a caller without connectors:query on it is refused', async () => {
      const res = await call(reader, 'logs_query', { ...range(), query: '{job="checkout"}' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('permission denied: you need connectors:query to do this');
    });
  });
});
