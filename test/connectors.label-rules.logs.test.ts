/**
 * Label rules on logs connectors, against a real VictoriaLogs and the Loki double (Loki is not
 * run here), each holding the streams of two teams (`namespace` checkout and payments) and a
 * third (`checkout-eu`) that only an unanchored regex would let in: every read path (query, range
 * and metric or stats queries, the proxy's query, label, series and stream paths in GET and form
 * POST, the chat tool `logs_query`) gives each member only its own streams; a member no rule names
 * gets 403; org and connector Admins read everything; a rule change shows on the next request. A
 * table of attacking queries, asked also by a reader with two rules on different labels (their
 * union: on Loki one query per rule, merged), proves from the backend's own answers that no
 * foreign line comes back.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addTeamMember, api, buildTeam, createUser, type TestTeam, type TestUser } from './helpers/factories.ts';
import { startLokiDouble, type DoubleStream, type RunningLokiDouble } from './helpers/loki-double.ts';
import { peerAvailable, requirePeer } from './helpers/peers.ts';
import { startVictoriaLogs, type RunningVictoriaLogs } from './helpers/victoria-logs.ts';

const HEADER = 'x-gatehouse-label-rules';
const LOKI_TENANT = 'label-rules-tenant';
const NO_RULE_APPLIES = 'permission denied: this connector has label rules, and none of them applies to you';

/** The streams: each line names its own stream; what marks payments' and checkout-eu's lines never appears in a query below. */
const STREAMS = [
  { namespace: 'checkout', app: 'shop', lines: ['checkout order 1 placed', 'checkout order 2 paid'] },
  { namespace: 'payments', app: 'vault-7q', lines: ['payments card 4242-SECRET charged', 'payments card 4242-SECRET refunded'] },
  { namespace: 'checkout-eu', app: 'shop-eu', lines: ['checkout-eu order 9931-OTHER placed'] },
] as const;
/** What shows a line or a stream of another team than checkout's. */
const FOREIGN_TO_CHECKOUT = ['4242-SECRET', 'vault-7q', '9931-OTHER', 'shop-eu'];
/** What shows a line that is no team's own answer to any query (never in a query's text). */
const FOREIGN_LINES = ['4242-SECRET', '9931-OTHER'];

interface Backend {
  name: string;
  uid: string;
  language: 'logql' | 'logsql';
  /** A query for every line. */
  everything: string;
  /** A metric or stats query counting lines by app. */
  countByApp: string;
  /** Proxy paths: a range query of `q`, label values of namespace, series/streams. */
  rangePath(q: string): string;
  namespaceValuesPath: string;
  streamsPath: string;
}

describe('connectors: label rules on logs connectors', function () {
  this.timeout(90_000);
  let app: TestApp;
  let victoria: RunningVictoriaLogs | undefined;
  let loki: RunningLokiDouble;
  let admin: TestUser;
  let checkoutMember: TestUser;
  let paymentsMember: TestUser;
  let noRule: TestUser;
  let connectorAdmin: TestUser;
  /** Two rules of its own on different labels: `{namespace="checkout"}` and `{app="shop-eu"}`. */
  let unionMember: TestUser;
  let checkoutTeam: TestTeam;
  /** A whole minute shortly before now; line i of a stream is at t0 + i. */
  const t0 = Math.floor(Date.now() / 60_000) * 60 - 60;
  const window = () => ({ start: t0 - 60, end: t0 + 120 });
  const backends: Backend[] = [];

  before(async () => {
    loki = await startLokiDouble({
      [LOKI_TENANT]: STREAMS.map((stream): DoubleStream => ({
        labels: { namespace: stream.namespace, app: stream.app },
        entries: stream.lines.map((line, i): [bigint, string] => [BigInt(t0 + i) * 1_000_000_000n, line]),
      })),
    });
    if (peerAvailable('victoria-logs')) {
      victoria = await startVictoriaLogs();
      await victoria.ingest(
        STREAMS.flatMap((stream) =>
          stream.lines.map((msg, i) => ({ ts: new Date((t0 + i) * 1000).toISOString(), msg, namespace: stream.namespace, app: stream.app })),
        ),
        { streamFields: ['namespace', 'app'] },
      );
    }
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    checkoutMember = await createUser(app, { role: 'Viewer' });
    paymentsMember = await createUser(app, { role: 'Viewer' });
    noRule = await createUser(app, { role: 'Viewer' });
    connectorAdmin = await createUser(app, { role: 'Viewer' });
    unionMember = await createUser(app, { role: 'Viewer' });
    checkoutTeam = await buildTeam(app, { name: 'checkout-logs' });
    await addTeamMember(app, checkoutTeam, checkoutMember.id);
    const { start, end } = window();
    const made: Array<Omit<Backend, 'uid'> & { settings: Record<string, unknown> }> = [
      {
        name: 'lr-loki',
        language: 'logql',
        settings: { url: loki.url, jsonData: { httpHeaderName1: 'X-Scope-OrgID' }, secureJsonData: { httpHeaderValue1: LOKI_TENANT } },
        everything: '{app=~".+"}',
        countByApp: 'sum by (app) (count_over_time({app=~".+"}[1h]))',
        rangePath: (q) => `loki/api/v1/query_range?query=${encodeURIComponent(q)}&start=${start}&end=${end}`,
        namespaceValuesPath: `loki/api/v1/label/namespace/values?start=${start}&end=${end}`,
        streamsPath: `loki/api/v1/series?match[]=${encodeURIComponent('{app=~".+"}')}&start=${start}&end=${end}`,
      },
    ];
    if (victoria)
      made.push({
        name: 'lr-victorialogs',
        language: 'logsql',
        settings: { url: victoria.url, jsonData: { backend: 'victorialogs' } },
        everything: '*',
        countByApp: '* | stats by (app) count() lines',
        rangePath: (q) => `select/logsql/query?query=${encodeURIComponent(q)}&start=${start}&end=${end}`,
        namespaceValuesPath: `select/logsql/stream_field_values?field=namespace&query=*&start=${start}&end=${end}`,
        streamsPath: `select/logsql/streams?query=*&start=${start}&end=${end}`,
      });
    for (const { settings, ...backend } of made) {
      const created = await api(app, admin).post('/api/connectors', { name: backend.name, type: 'logstore', ...settings });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      backends.push({ ...backend, uid: created.body.uid });
      const granted = await api(app, admin).post(`/api/connectors/${created.body.uid}/permissions`, {
        items: [
          { role: 'Viewer', permission: 1 },
          { userId: connectorAdmin.id, permission: 4 },
        ],
      });
      expect(granted.status, JSON.stringify(granted.body)).to.equal(200);
      await putRules(created.body.uid, defaultRules());
    }
  });
  after(async () => {
    await app?.close();
    await loki?.stop();
    await victoria?.stop();
  });

  const defaultRules = () => [
    { teamId: checkoutTeam.id, selector: '{namespace="checkout"}' },
    { userId: paymentsMember.id, selector: '{namespace="payments"}' },
  ];

  async function putRules(uid: string, rules: unknown[]) {
    const res = await api(app, admin).put(`/api/connectors/${uid}/label-rules`, { rules });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  const query = (who: TestUser, backend: Backend, q: string, extra: Record<string, unknown> = {}) =>
    api(app, who).post(`/api/connectors/${backend.uid}/query`, { query: q, type: 'range', ...window(), step: 60, ...extra });
  const proxy = (who: TestUser, backend: Backend, rest: string) => api(app, who).get(`/api/connectors/proxy/uid/${backend.uid}/${rest}`);
  const proxyForm = (who: TestUser, backend: Backend, path: string, form: string) =>
    app.request('POST', `/api/connectors/proxy/uid/${backend.uid}/${path}`, {
      cookie: who.cookie,
      rawBody: form,
      contentType: 'application/x-www-form-urlencoded',
    });

  /** The lines of a query route answer. */
  const linesOf = (body: { streams: Array<{ entries: Array<[string, string]> }> }) =>
    body.streams.flatMap((stream) => stream.entries.map(([, line]) => line)).sort();
  const appsOf = (body: { series: Array<{ labels: Record<string, string> }> }) => body.series.map((series) => series.labels.app).sort();
  // an empty answer (VictoriaLogs' to a query without lines) has no body
  const textOf = (res: { body: unknown }) => (typeof res.body === 'string' ? res.body : (JSON.stringify(res.body) ?? ''));
  const ownLines = (namespace: string) => [...STREAMS.find((stream) => stream.namespace === namespace)!.lines].sort();

  for (const index of [0, 1]) {
    describe(`on ${index === 0 ? 'Loki (LogQL)' : 'VictoriaLogs (LogsQL)'}`, () => {
      let backend: Backend;
      before(function () {
        if (index === 1) requirePeer(this, 'victoria-logs');
        backend = backends[index]!;
      });

      it('the query route: each team reads only its own lines and counts, with the header applied', async () => {
        for (const [who, namespace, app_] of [
          [checkoutMember, 'checkout', 'shop'],
          [paymentsMember, 'payments', 'vault-7q'],
        ] as const) {
          const lines = await query(who, backend, backend.everything);
          expect(lines.status, JSON.stringify(lines.body)).to.equal(200);
          expect(lines.headers.get(HEADER)).to.equal('applied');
          expect(linesOf(lines.body)).to.deep.equal(ownLines(namespace));
          const counts = await query(who, backend, backend.countByApp);
          expect(counts.status, JSON.stringify(counts.body)).to.equal(200);
          expect(appsOf(counts.body)).to.deep.equal([app_]);
        }
      });

      it('the proxy: range query (GET and form POST), label values and series or streams', async () => {
        const got = await proxy(checkoutMember, backend, backend.rangePath(backend.everything));
        expect(got.status, textOf(got)).to.equal(200);
        expect(got.headers.get(HEADER)).to.equal('applied');
        expect(textOf(got)).to.include('checkout order 1 placed');
        for (const marker of FOREIGN_TO_CHECKOUT) expect(textOf(got)).to.not.include(marker);
        const [path, form] = backend.rangePath(backend.everything).split('?') as [string, string];
        const posted = await proxyForm(paymentsMember, backend, path, form);
        expect(posted.status, textOf(posted)).to.equal(200);
        expect(textOf(posted)).to.include('4242-SECRET').and.not.include('checkout order');
        const values = await proxy(checkoutMember, backend, backend.namespaceValuesPath);
        expect(values.status, textOf(values)).to.equal(200);
        expect(textOf(values)).to.include('checkout').and.not.include('payments').and.not.include('checkout-eu');
        const streams = await proxy(paymentsMember, backend, backend.streamsPath);
        expect(streams.status, textOf(streams)).to.equal(200);
        expect(textOf(streams)).to.include('vault-7q').and.not.include('shop');
      });

      it('the chat tool logs_query is bound by the caller’s rules', async () => {
        const call = (who: TestUser, q: string) =>
          api(app, who).post('/api/chat/tools/logs_query', {
            agentType: 'investigator',
            permissionMode: 'read_only',
            args: { connector: backend.name, query: q, ...window() },
          });
        const res = await call(checkoutMember, backend.everything);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(linesOf(res.body)).to.deep.equal(ownLines('checkout'));
        const refused = await call(noRule, backend.everything);
        expect(refused.status).to.equal(403);
        expect(refused.body.message).to.equal(NO_RULE_APPLIES);
      });

      it('a member no rule names gets 403 on every path; org and connector Admins read everything (bypass)', async () => {
        const [path, form] = backend.rangePath(backend.everything).split('?') as [string, string];
        for (const res of [
          await query(noRule, backend, backend.everything),
          await proxy(noRule, backend, backend.rangePath(backend.everything)),
          await proxyForm(noRule, backend, path, form),
          await proxy(noRule, backend, backend.namespaceValuesPath),
          await proxy(noRule, backend, backend.streamsPath),
        ]) {
          expect(res.status).to.equal(403);
          expect(res.body.message).to.equal(NO_RULE_APPLIES);
        }
        for (const who of [admin, connectorAdmin]) {
          const all = await query(who, backend, backend.everything);
          expect(all.status).to.equal(200);
          expect(all.headers.get(HEADER)).to.equal('bypass');
          expect(linesOf(all.body)).to.deep.equal(STREAMS.flatMap((stream) => stream.lines).sort());
        }
      });

      it('a rule change is seen on the next request: narrowed, a union of two rules, none left', async () => {
        await putRules(backend.uid, [{ teamId: checkoutTeam.id, selector: '{namespace="checkout", app="none-such"}' }, ...defaultRules().slice(1)]);
        expect(linesOf((await query(checkoutMember, backend, backend.everything)).body)).to.deep.equal([]);
        // two rules for the checkout member, on the same label: one regex matcher, exact
        await putRules(backend.uid, [...defaultRules(), { userId: checkoutMember.id, selector: '{namespace="checkout-eu"}' }]);
        const union = await query(checkoutMember, backend, backend.everything);
        expect(union.status, JSON.stringify(union.body)).to.equal(200);
        expect(linesOf(union.body)).to.deep.equal([...ownLines('checkout'), ...ownLines('checkout-eu')].sort());
        // on different labels: VictoriaLogs' stream filter ORs them exactly; on Loki one query per rule, the lines merged
        await putRules(backend.uid, [...defaultRules(), { userId: checkoutMember.id, selector: '{app="shop-eu"}' }]);
        const mixed = await query(checkoutMember, backend, backend.everything);
        expect(mixed.status, JSON.stringify(mixed.body)).to.equal(200);
        expect(linesOf(mixed.body)).to.deep.equal([...ownLines('checkout'), ...ownLines('checkout-eu')].sort());
        await putRules(backend.uid, []);
        const open = await query(noRule, backend, backend.everything);
        expect(open.status).to.equal(200);
        expect(open.headers.get(HEADER)).to.equal('none');
        await putRules(backend.uid, defaultRules());
        expect((await query(noRule, backend, backend.everything)).status).to.equal(403);
      });
    });
  }

  describe('explained: evaluate and who-can', () => {
    it('evaluate shows the label rules of a connectors:query: applied with the selectors, bypass, denied; none for other actions', async () => {
      const { uid } = backends[0]!;
      const evaluate = (who: TestUser, body: Record<string, unknown>) => api(app, who).post('/api/access-control/evaluate', body);
      const asked = { action: 'connectors:query', resource: { kind: 'connectors', uid } };
      const checkout = await evaluate(admin, { ...asked, userId: checkoutMember.id });
      expect(checkout.status, JSON.stringify(checkout.body)).to.equal(200);
      expect(checkout.body.allow).to.equal(true);
      expect(checkout.body.labelRules).to.deep.equal({ mode: 'applied', selectors: ['{namespace="checkout"}'] });
      expect((await evaluate(paymentsMember, asked)).body.labelRules).to.deep.equal({ mode: 'applied', selectors: ['{namespace="payments"}'] });
      expect((await evaluate(admin, asked)).body.labelRules).to.deep.equal({ mode: 'bypass', selectors: [] });
      expect((await evaluate(admin, { ...asked, userId: connectorAdmin.id })).body.labelRules).to.deep.equal({ mode: 'bypass', selectors: [] });
      expect((await evaluate(admin, { ...asked, userId: noRule.id })).body.labelRules).to.deep.equal({ mode: 'denied', selectors: [] });
      expect((await evaluate(admin, { ...asked, action: 'connectors:read' })).body).to.not.have.property('labelRules');
      // asking about another user still needs the right to read their permissions
      expect((await evaluate(checkoutMember, { ...asked, userId: paymentsMember.id })).status).to.equal(403);
      expect((await app.request('POST', '/api/access-control/evaluate', { body: asked })).status).to.equal(401);
    });

    it('who-can lists each holder of connectors:query with its label rules, and the selectors naming each team and org role', async () => {
      const { uid } = backends[0]!;
      const res = await api(app, admin).get(`/api/access-control/resources/connectors/${uid}/principals?action=connectors:query`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const ruleOf = (user: TestUser) => res.body.users.find((holder: { userId: string }) => holder.userId === user.id)?.labelRules;
      expect(ruleOf(checkoutMember)).to.deep.equal({ mode: 'applied', selectors: ['{namespace="checkout"}'] });
      expect(ruleOf(paymentsMember)).to.deep.equal({ mode: 'applied', selectors: ['{namespace="payments"}'] });
      expect(ruleOf(noRule)).to.deep.equal({ mode: 'denied', selectors: [] });
      expect(ruleOf(admin)).to.deep.equal({ mode: 'bypass', selectors: [] });
      expect(res.body.orgRoles.find((entry: { role: string }) => entry.role === 'Viewer').labelSelectors).to.deep.equal([]);
      // a rule naming the Viewer role: shown on the role, and applied to the Viewer no other rule names
      await putRules(uid, [...defaultRules(), { role: 'Viewer', selector: '{app="shop"}' }]);
      const withRole = await api(app, admin).get(`/api/access-control/resources/connectors/${uid}/principals?action=connectors:query`);
      expect(withRole.body.orgRoles.find((entry: { role: string }) => entry.role === 'Viewer').labelSelectors).to.deep.equal(['{app="shop"}']);
      expect(withRole.body.users.find((holder: { userId: string }) => holder.userId === noRule.id).labelRules).to.deep.equal({
        mode: 'applied',
        selectors: ['{app="shop"}'],
      });
      await putRules(uid, defaultRules());
      const read = await api(app, admin).get(`/api/access-control/resources/connectors/${uid}/principals?action=connectors:read`);
      expect(read.body.users.every((holder: object) => !('labelRules' in holder))).to.equal(true);
      expect((await api(app, checkoutMember).get(`/api/access-control/resources/connectors/${uid}/principals?action=connectors:query`)).status).to.equal(403);
    });
  });

  /** Queries that try to read payments' or checkout-eu's lines as the checkout member; none has a foreign marker in its text. */
  const LOGQL_ATTACKS = [
    '{namespace="payments"}',
    '{namespace=~".+"}',
    '{namespace=~"pay.*"}',
    '{namespace!="checkout"}',
    '{namespace!~"checkout"}',
    '{namespace=~"checkout.*"}',
    '{namespace=~"checkout|payments"}',
    '{namespace=~"(?i)PAYMENTS"}',
    '{namespace="checkout", namespace="payments"}',
    '{namespace=`payments`}',
    '{namespace="pay\\u006dents"}',
    '{namespace="ｐayments"}',
    '{app=~"vault.*"}',
    '{namespace="payments"} | label_format namespace="checkout"',
    '{namespace="payments"} | line_format "{{.namespace}}"',
    '{namespace="payments"} | json | namespace="checkout"',
    '{namespace="checkout"} or {namespace="payments"}',
    '{namespace="checkout"}} {namespace="payments"',
    '{namespace="checkout"} |= "\\"} or {namespace=\\"payments"',
    '{namespace="payments"}\n# {namespace="checkout"}',
    '{namespace="checkout" # }\n, namespace="payments"}',
    '{namespace="payments"} |~ "42.2"',
    'count_over_time({namespace="payments"}[1h])',
    'sum by (app) (count_over_time({namespace=~".+"}[1h]))',
    'sum by (app) (rate({app=~".+"}[5m]))',
    'count_over_time({namespace="payments"}[1h]) / count_over_time({namespace="checkout"}[1h])',
    'vector(1) or count_over_time({namespace="payments"}[1h])',
    'sum by (app) (count_over_time({namespace="checkout"}[1h])) or sum by (app) (count_over_time({namespace="payments"}[1h]))',
    'label_replace(count_over_time({namespace="payments"}[1h]), "namespace", "checkout", "namespace", ".*")',
    'max_over_time({namespace="payments"} | unwrap bytes [1h])',
    `{namespace="payments"}${' != "zzz"'.repeat(400)}`,
  ];
  /** Rows for a reader with two rules on different labels (`{namespace="checkout"}`, `{app="shop-eu"}`), beside the table above. */
  const MULTI_RULE_LOGQL_ATTACKS = [
    '{app=~"shop.*"}',
    '{namespace!="checkout"}',
    '{namespace=~"checkout-.*"} or {app=~"vault.*"}',
    '{app="shop-eu", namespace="payments"}',
    '{app!="shop-eu"}',
    '{namespace="payments"} | label_format app="shop-eu"',
    '{app=~".+"} | json | app="shop-eu"',
    'sum by (app) (count_over_time({namespace=~".+"}[1h]))',
    'sum by (namespace) (count_over_time({app=~".+"}[1h])) or sum by (namespace) (count_over_time({namespace="payments"}[1h]))',
    '(sum(count_over_time({namespace="payments"}[1h])))',
    'count_over_time({app="shop-eu"}[1h]) or count_over_time({namespace="payments"}[1h])',
    '{namespace="checkout"}\n) or (\n{namespace="payments"}',
    'count_over_time({namespace="payments"}[1h])\n) or (\ncount_over_time({namespace="payments"}[1h])',
    '{app="shop-eu"} # ) or ({namespace="payments"}',
  ];
  const LOGSQL_ATTACKS = [
    '*',
    '_stream:{namespace="payments"}',
    '_stream:{namespace=~".*"}',
    'namespace:payments',
    'namespace:=payments or namespace:=checkout-eu',
    '{namespace="payments"}',
    '* | union (_stream:{namespace="payments"})',
    '* | union (*)',
    '* | join by (namespace) (namespace:payments) inner',
    'namespace:in(* | fields namespace)',
    '_stream:{namespace="checkout"} or _stream:{namespace="payments"}',
    '* | stats by (app) count() lines',
    '* | stats by (namespace) count_uniq(_msg) lines',
    'card',
    '~"42.2"',
    '_msg:~"SECRET"',
    '* | extract "card <n> " from _msg',
    '* | stream_context before 10 after 10',
    '* | format "checkout" as namespace',
    '* # a comment\n| union (namespace:payments)',
    'namespace:"ｐayments"',
    'namespace:~"(?i)PAYMENTS"',
    '* | filter namespace:payments',
    '* | field_values app',
    '* | top 5 by (app)',
    '* | facets',
    `namespace:payments${' AND -zzz'.repeat(300)}`,
  ];
  /** Proxy requests beyond the query route: [path and query string, or a form POST's path and body]. */
  const lokiProxyAttacks = (start: number, end: number): Array<{ get: string } | { post: string; form: string }> => [
    { get: `loki/api/v1/query_range?query=${encodeURIComponent('{namespace="payments"}')}&start=${start}&end=${end}` },
    { get: `loki/api/v1/query_range?query=${encodeURIComponent('{namespace="checkout"}')}&query=${encodeURIComponent('{namespace="payments"}')}` },
    { post: 'loki/api/v1/query_range', form: `query=${encodeURIComponent('{namespace=~".+"}')}&start=${start}&end=${end}` },
    { post: 'loki/api/v1/query_range', form: `query=${encodeURIComponent('{namespace="checkout"}')}&query=${encodeURIComponent('{namespace="payments"}')}` },
    { get: `loki/api/v1/query_range?query=${encodeURIComponent('{namespace="checkout"}')}&start=${start}&end=${end}&tenant=other` },
    { get: `loki/api/v1/label/app/values?query=${encodeURIComponent('{namespace="payments"}')}&start=${start}&end=${end}` },
    { get: `loki/api/v1/label/app/values?query=${encodeURIComponent('{namespace="checkout"} |= "x"')}` },
    { get: `loki/api/v1/labels?query=${encodeURIComponent('{namespace=~".+"}')}&start=${start}&end=${end}` },
    { get: `loki/api/v1/series?match[]=${encodeURIComponent('{namespace="payments"}')}&start=${start}&end=${end}` },
    { get: `loki/api/v1/series?match[]=${encodeURIComponent('{app="shop"}')}&match[]=${encodeURIComponent('{app=~"vault.*"}')}&start=${start}&end=${end}` },
    { post: 'loki/api/v1/series', form: `match[]=${encodeURIComponent('count_over_time({namespace="payments"}[1h])')}` },
  ];
  const victoriaProxyAttacks = (start: number, end: number): Array<{ get: string } | { post: string; form: string }> => [
    { get: `select/logsql/query?query=*&start=${start}&end=${end}&extra_stream_filters=${encodeURIComponent('{namespace="payments"}')}` },
    { get: `select/logsql/query?query=*&extra_filters=${encodeURIComponent('namespace:payments')}` },
    { get: `select/logsql/query?query=*&extra_stream_filters=` },
    { post: 'select/logsql/query', form: `query=*&extra_stream_filters=${encodeURIComponent('{namespace=~".*"}')}` },
    { post: 'select/logsql/query', form: `query=${encodeURIComponent('_stream:{namespace="payments"}')}&start=${start}&end=${end}` },
    { get: `select/logsql/query?query=*&Extra_Stream_Filters=${encodeURIComponent('{namespace="payments"}')}` },
    { get: `select/logsql/field_values?field=app&query=*&start=${start}&end=${end}` },
    { get: `select/logsql/field_names?query=*&start=${start}&end=${end}` },
    { get: `select/logsql/streams?query=${encodeURIComponent('namespace:payments')}&start=${start}&end=${end}` },
    { get: `select/logsql/stream_ids?query=*&start=${start}&end=${end}` },
    { get: `select/logsql/hits?query=*&step=1h&field=app&start=${start}&end=${end}` },
    { get: `select/logsql/facets?query=*&start=${start}&end=${end}` },
    { get: `select/logsql/stats_query?query=${encodeURIComponent('* | stats by (app) count() lines')}&time=${end}` },
    { post: 'select/logsql/stats_query_range', form: `query=${encodeURIComponent('* | stats by (app) count() lines')}&start=${start}&end=${end}&step=1h` },
  ];

  for (const index of [0, 1]) {
    describe(`attacks on ${index === 0 ? 'Loki' : 'VictoriaLogs'}, as the checkout member`, () => {
      let backend: Backend;
      before(function () {
        if (index === 1) requirePeer(this, 'victoria-logs');
        backend = backends[index]!;
      });

      it('no query of the table brings back a line or stream of another team, by the query route or the proxy', async () => {
        const attacks = backend.language === 'logql' ? LOGQL_ATTACKS : LOGSQL_ATTACKS;
        expect(attacks.length).to.be.at.least(25);
        const statuses: number[] = [];
        for (const q of attacks) {
          for (const marker of FOREIGN_TO_CHECKOUT) expect(q, 'the table itself').to.not.include(marker);
          for (const res of [await query(checkoutMember, backend, q), await proxy(checkoutMember, backend, backend.rangePath(q))]) {
            statuses.push(res.status);
            expect([200, 400], `${q}: ${textOf(res)}`).to.include(res.status);
            const foreign = res.status === 200 ? FOREIGN_TO_CHECKOUT : FOREIGN_LINES;
            for (const marker of foreign) expect(textOf(res), q).to.not.include(marker);
          }
        }
        // most are answered, restricted: the table tests the backends' answers, not only refusals
        expect(statuses.filter((status) => status === 200).length).to.be.at.least(attacks.length / 2);
      });

      it('with two rules on different labels: no row of the table, nor of the multi-rule rows, brings back payments’ lines', async () => {
        await putRules(backend.uid, [
          ...defaultRules(),
          { userId: unionMember.id, selector: '{namespace="checkout"}' },
          { userId: unionMember.id, selector: '{app="shop-eu"}' },
        ]);
        const foreignToUnion = ['4242-SECRET', 'vault-7q'];
        const attacks = backend.language === 'logql' ? [...LOGQL_ATTACKS, ...MULTI_RULE_LOGQL_ATTACKS] : LOGSQL_ATTACKS;
        const statuses: number[] = [];
        try {
          for (const q of attacks) {
            for (const marker of foreignToUnion) expect(q, 'the table itself').to.not.include(marker);
            for (const res of [await query(unionMember, backend, q), await proxy(unionMember, backend, backend.rangePath(q))]) {
              statuses.push(res.status);
              expect([200, 400], `${q}: ${textOf(res)}`).to.include(res.status);
              for (const marker of foreignToUnion) expect(textOf(res), q).to.not.include(marker);
            }
          }
          const { start, end } = window();
          for (const path of [
            backend.namespaceValuesPath,
            backend.streamsPath,
            ...(backend.language === 'logql'
              ? [`loki/api/v1/labels?start=${start}&end=${end}`, `loki/api/v1/label/app/values?query=${encodeURIComponent('{namespace=~"pay.*"}')}`]
              : []),
          ]) {
            const res = await proxy(unionMember, backend, path);
            expect([200, 400], `${path}: ${textOf(res)}`).to.include(res.status);
            expect(textOf(res), path).to.not.include('payments').and.not.include('vault-7q');
          }
          // the union is read: both rules' lines come back
          const all = await query(unionMember, backend, backend.everything);
          expect(linesOf(all.body)).to.deep.equal([...ownLines('checkout'), ...ownLines('checkout-eu')].sort());
        } finally {
          await putRules(backend.uid, defaultRules());
        }
        expect(statuses.filter((status) => status === 200).length).to.be.at.least(attacks.length / 2);
      });

      it('no proxy variant (parameters, forms, label, series and stream paths, caller-given filters) does either', async () => {
        const { start, end } = window();
        const attacks = backend.language === 'logql' ? lokiProxyAttacks(start, end) : victoriaProxyAttacks(start, end);
        for (const attack of attacks) {
          const res = 'get' in attack ? await proxy(checkoutMember, backend, attack.get) : await proxyForm(checkoutMember, backend, attack.post, attack.form);
          const named = JSON.stringify(attack);
          expect([200, 400], `${named}: ${textOf(res)}`).to.include(res.status);
          for (const marker of res.status === 200 ? FOREIGN_TO_CHECKOUT : FOREIGN_LINES) expect(textOf(res), named).to.not.include(marker);
          if (/extra_(stream_)?filters=/i.test(named)) expect(res.status, named).to.equal(400);
        }
        // the bypassing Admin reads the same paths whole: the markers are there to be found
        const all = await proxy(admin, backend, backend.rangePath(backend.everything));
        for (const marker of FOREIGN_TO_CHECKOUT) expect(textOf(all)).to.include(marker);
      });
    });
  }
});
