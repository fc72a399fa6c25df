/**
 * Queries that try to escape a label rule, table-driven, against a real Prometheus holding two
 * teams' series (helpers/team-series.ts). The checkout team's member may read {namespace="checkout"}.
 * Each query is proved from the backend's answers: the service's answer on the full backend equals,
 * series for series and value for value, what the restricted query answers on a second Prometheus
 * that holds checkout's series alone, so nothing foreign took part in it; and it names no pod,
 * metric or value of payments. The proxy's rows (GET and form variants, match[] overrides) are
 * proved by their answers naming nothing of payments. The same queries and proxy requests against
 * a real VictoriaMetrics (MetricsQL reads some of them otherwise, so its statuses may differ) are
 * proved by their answers naming nothing of payments.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addTeamMember, api, buildTeam, createUser, type TestUser } from './helpers/factories.ts';
import { peerAvailable, requirePeer } from './helpers/peers.ts';
import { startPrometheus, T0, type RunningPrometheus } from './helpers/prometheus.ts';
import { CHECKOUT_SERIES, foreignIn, TEAM_SERIES } from './helpers/team-series.ts';
import { startVictoriaMetrics, VM_BEARER_TOKEN, type RunningVictoriaMetrics } from './helpers/victoria-metrics.ts';
import { parseSelector, restrictQuery } from '../src/connectors/label-rewrite.ts';

const RULE = '{namespace="checkout"}';
const AT = T0 + 300;

/** [query, expected status]: 200 (answered within the rule) or 400 (refused: named construct, or a parse error). */
const QUERY_ATTACKS: Array<[string, 200 | 400]> = [
  ['app_requests', 200],
  ['app_requests{namespace="payments"}', 200],
  ['app_requests{namespace!="checkout"}', 200],
  ['app_requests{namespace=~".*"}', 200],
  ['app_requests{namespace=~"checkout|payments"}', 200],
  ['app_requests{namespace=~"pay.*"}', 200],
  ['app_requests{namespace!~"checkout"}', 200],
  ['app_requests{namespace=""}', 200],
  ['app_requests{namespace="checkout", namespace="payments"}', 200],
  ['{__name__=~".+"}', 200],
  ['{__name__=~"app_.*|payments_.*"}', 200],
  ['{__name__="payments_secret"}', 200],
  ['{__name__!=""}', 200],
  ['{namespace=~".+"}', 200],
  ['payments_secret', 200],
  ['{__name__=~"payments_secret|app_requests", namespace="payments"}', 200],
  ['app_requests or payments_secret', 200],
  ['app_requests or {namespace="payments"}', 200],
  ['app_requests{namespace="checkout"} or app_requests{namespace="payments"}', 200],
  ['app_requests{namespace="payments"} or vector(1)', 200],
  ['payments_secret unless app_requests', 200],
  ['app_requests and on() payments_secret', 200],
  ['app_requests + on(pod) group_left payments_secret', 200],
  ['app_requests * ignoring(namespace, pod) group_left payments_secret', 200],
  ['app_requests / on() group_left() sum(payments_secret)', 200],
  ['vector(1) + on() group_left payments_secret', 200],
  ['app_requests or on(namespace) payments_secret', 200],
  ['sum(app_requests)', 200],
  ['sum by (namespace) (app_requests)', 200],
  ['count({__name__=~".+"})', 200],
  ['count by (namespace, __name__) ({__name__=~".+"})', 200],
  ['max(payments_secret)', 200],
  ['topk(10, {__name__=~".+"})', 200],
  ['count_values("namespace", payments_secret)', 200],
  ['group by (pod) ({namespace="payments"})', 200],
  ['label_replace(app_requests{namespace="payments"}, "namespace", "checkout", "", "")', 200],
  ['label_replace(payments_secret, "namespace", "checkout", "namespace", ".*")', 200],
  ['label_replace(app_requests, "namespace", "payments", "", "")', 200],
  ['label_join(payments_secret, "namespace", "", "env")', 200],
  ['absent(payments_secret)', 200],
  ['absent(app_requests{namespace="payments"})', 200],
  ['absent_over_time(payments_secret[10m])', 200],
  ['rate(app_requests{namespace="payments"}[5m])', 200],
  ['max_over_time(payments_secret[10m])', 200],
  // two metrics of one pod lose their names and collide: the backend refuses, as it does without the rule
  ['max_over_time({__name__=~".+"}[10m])', 400],
  ['max_over_time({__name__=~"app_.*"}[10m])', 200],
  ['max_over_time(payments_secret[10m:1m])', 200],
  ['max_over_time((sum(payments_secret))[10m:1m])', 200],
  ['sum_over_time(rate({__name__=~".+"}[2m])[10m:1m])', 400],
  ['sum_over_time(rate({__name__=~".+_requests"}[2m])[10m:1m])', 200],
  ['quantile_over_time(0.5, {namespace="payments"}[10m])', 200],
  [`payments_secret @ ${AT}`, 200],
  ['payments_secret offset 1m', 200],
  ['app_requests offset -1m', 200],
  [`max_over_time(payments_secret[5m] offset 1m @ ${AT})`, 200],
  ['{__name__=~".+", namespace="payments"} offset 1s', 200],
  ['app_requests # {namespace="payments"}', 200],
  ['app_requests # a comment\n or payments_secret', 200],
  ['app_requests{namespace="payments" # a comment\n}', 200],
  ['/* payments */ payments_secret', 400],
  ['app_requests{namespace="paymen\\u0074s"}', 200],
  ['app_requests{namespace="\\x70ayments"}', 200],
  ['app_requests{namespace=~"p\\x61yments"}', 200],
  ['app_requests{namespace=`payments`}', 200],
  ["app_requests{namespace='payments'}", 200],
  ['app_requests{namespace="ｐａｙｍｅｎｔｓ"}', 200],
  ['app_requests{namespáce="payments"}', 400],
  ['app_requests{namespace="payments"}\u2028or payments_secret', 400],
  ['scalar(payments_secret)', 200],
  ['timestamp(payments_secret)', 200],
  ['changes(payments_secret[10m])', 200],
  ['histogram_quantile(0.9, payments_secret)', 200],
  ['-payments_secret', 200],
  ['((payments_secret))', 200],
  ['payments_secret > bool 0', 200],
  ['sort_desc({namespace=~".+"})', 200],
  ['app_requests[5m]', 200],
  ['info(app_requests)', 400],
  ['app_requests{namespace="payments"', 400],
  ['app_requests} or {namespace="payments"', 400],
  ['sum(app_requests) by (namespace) or payments_secret', 200],
  [Array(200).fill('payments_secret').join(' or '), 200],
  // beyond what the parser reads (a few hundred chained operators): refused, never passed on unrestricted
  [Array(400).fill('payments_secret').join(' or '), 400],
  [`${'sum('.repeat(60)}payments_secret${')'.repeat(60)}`, 200],
  [Array(60).fill('sum(app_requests{namespace=~"payments|checkout"})').join(' + on() group_left '), 200],
];

/** Proxy requests: [method, path and query (GET) or form (POST), expected status]. */
const PROXY_ATTACKS: Array<['GET' | 'POST', string, string, 200 | 400]> = [
  ['GET', 'api/v1/query', `query=payments_secret&time=${AT}`, 200],
  ['GET', 'api/v1/query', `query=${encodeURIComponent('{namespace="payments"}')}&time=${AT}`, 200],
  ['GET', 'api/v1/query', `query=app_requests&query=payments_secret&time=${AT}`, 400],
  ['GET', 'api/v1/query', `query=payments_secret&match[]=${encodeURIComponent('{namespace="payments"}')}`, 400],
  ['GET', 'api/v1/query', 'query=payments_secret&extra_label=namespace%3Dpayments', 400],
  ['GET', 'api/v1/query', 'query=payments_secret;query=app_requests', 400],
  ['POST', 'api/v1/query', `query=payments_secret&time=${AT}`, 200],
  ['POST', 'api/v1/query', `query=${encodeURIComponent('app_requests or {namespace="payments"}')}&time=${AT}`, 200],
  ['POST', 'api/v1/query_range', `query=payments_secret&query=app_requests&start=${T0}&end=${AT}&step=60`, 400],
  ['GET', 'api/v1/query_range', `query=${encodeURIComponent('{__name__=~".+"}')}&start=${T0}&end=${AT}&step=60`, 200],
  ['POST', 'api/v1/query_range', `query=${encodeURIComponent('max_over_time(payments_secret[5m:1m])')}&start=${T0}&end=${AT}&step=60`, 200],
  ['GET', 'api/v1/labels', `start=${T0}&end=${AT}`, 200],
  ['GET', 'api/v1/label/namespace/values', `start=${T0}&end=${AT}`, 200],
  ['GET', 'api/v1/label/namespace/values', `match[]=${encodeURIComponent('{namespace="payments"}')}`, 200],
  ['GET', 'api/v1/label/pod/values', `match%5B%5D=${encodeURIComponent('{namespace=~".*"}')}`, 200],
  ['GET', 'api/v1/label/__name__/values', '', 200],
  ['GET', 'api/v1/label/__name__/values', `match[]=${encodeURIComponent('{__name__=~".+"}')}&match[]=payments_secret`, 200],
  ['GET', 'api/v1/series', 'match[]=payments_secret', 200],
  ['GET', 'api/v1/series', `match[]=${encodeURIComponent('{namespace=~".+"}')}&match[]=app_requests`, 200],
  ['POST', 'api/v1/series', `match[]=${encodeURIComponent('{__name__=~"payments.*"}')}&start=${T0}&end=${AT}`, 200],
  ['POST', 'api/v1/labels', `match[]=${encodeURIComponent('payments_secret or app_requests')}`, 400],
  ['GET', 'api/v1/series', `match[]=${encodeURIComponent('sum(payments_secret)')}`, 400],
  ['GET', 'api/v1/label/pod/values', 'match=payments_secret', 400],
  ['GET', 'api/v1/metadata', 'metric=payments_secret', 400],
];

describe('connectors: label rules under attack', function () {
  this.timeout(120_000);
  let app: TestApp;
  let full: RunningPrometheus;
  let checkoutOnly: RunningPrometheus;
  let admin: TestUser;
  let member: TestUser;
  let fullUid: string;
  let referenceUid: string;
  let victoria: RunningVictoriaMetrics | undefined;
  let victoriaUid: string;
  const rules = [parseSelector(RULE, 'the rule')];

  before(async function () {
    requirePeer(this, 'prometheus');
    full = await startPrometheus({ kind: 'none' }, { series: TEAM_SERIES });
    checkoutOnly = await startPrometheus({ kind: 'none' }, { series: CHECKOUT_SERIES });
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    member = await createUser(app, { role: 'Viewer' });
    const team = await buildTeam(app, { name: 'checkout-attackers' });
    await addTeamMember(app, team, member.id);
    for (const [name, url] of [
      ['attack-full', full.url],
      ['attack-reference', checkoutOnly.url],
    ] as const) {
      const created = await api(app, admin).post('/api/connectors', { name, type: 'tsmetrics', url });
      expect(created.status).to.equal(201);
      if (name === 'attack-full') fullUid = created.body.uid;
      else referenceUid = created.body.uid;
    }
    const saved = await api(app, admin).put(`/api/connectors/${fullUid}/label-rules`, { rules: [{ teamId: team.id, selector: RULE }] });
    expect(saved.status).to.equal(200);
    if (peerAvailable('victoria-metrics')) {
      victoria = await startVictoriaMetrics(TEAM_SERIES);
      const created = await api(app, admin).post('/api/connectors', {
        name: 'attack-victoria',
        type: 'tsmetrics',
        url: victoria.url,
        secureJsonData: { bearerToken: VM_BEARER_TOKEN },
      });
      victoriaUid = created.body.uid;
      expect((await api(app, admin).put(`/api/connectors/${victoriaUid}/label-rules`, { rules: [{ teamId: team.id, selector: RULE }] })).status).to.equal(200);
    }
  });
  after(async () => {
    await victoria?.stop();
    await app?.close();
    await full?.stop();
    await checkoutOnly?.stop();
  });

  const sorted = (body: { series?: unknown[] }) => ({ ...body, series: [...(body.series ?? [])].map((s) => JSON.stringify(s)).sort() });

  it(`${QUERY_ATTACKS.length} queries: each answers exactly what checkout's series alone answer, or is refused`, async () => {
    expect(QUERY_ATTACKS.length + PROXY_ATTACKS.length).to.be.at.least(60);
    const failures: string[] = [];
    for (const [query, expected] of QUERY_ATTACKS) {
      const label = query.length > 80 ? `${query.slice(0, 77)}... (${query.length} chars)` : query;
      const res = await api(app, member).post(`/api/connectors/${fullUid}/query`, { query, time: AT });
      if (res.status !== expected) {
        failures.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        continue;
      }
      if (expected === 400) {
        expect(res.body.message, label).to.be.a('string');
        continue;
      }
      const foreign = foreignIn(res.body);
      if (foreign.length > 0) failures.push(`${label}: foreign ${foreign.join(', ')}`);
      const reference = await api(app, admin).post(`/api/connectors/${referenceUid}/query`, { query: restrictQuery(query, rules), time: AT });
      if (reference.status !== 200 || JSON.stringify(sorted(reference.body)) !== JSON.stringify(sorted(res.body))) {
        failures.push(`${label}: differs from checkout alone: ${JSON.stringify(res.body).slice(0, 200)} vs ${JSON.stringify(reference.body).slice(0, 200)}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it(`${PROXY_ATTACKS.length} proxy requests (GET and form, match[] overrides): nothing of payments comes back`, async () => {
    const failures: string[] = [];
    for (const [method, path, params, expected] of PROXY_ATTACKS) {
      const label = `${method} ${path}?${params}`;
      const res =
        method === 'GET'
          ? await api(app, member).get(`/api/connectors/proxy/uid/${fullUid}/${path}${params ? `?${params}` : ''}`)
          : await app.request('POST', `/api/connectors/proxy/uid/${fullUid}/${path}`, {
              cookie: member.cookie,
              rawBody: params,
              contentType: 'application/x-www-form-urlencoded',
            });
      if (res.status !== expected) failures.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      else if (expected === 200) {
        const text = JSON.stringify(res.body);
        if (/payments/.test(text)) failures.push(`${label}: ${text.slice(0, 200)}`);
        if (res.body.status !== 'success') failures.push(`${label}: ${text.slice(0, 200)}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('VictoriaMetrics: every query and proxy request of the tables answers nothing of payments, or is refused', async function () {
    requirePeer(this, 'victoria-metrics');
    const failures: string[] = [];
    let answered = 0;
    for (const [query] of QUERY_ATTACKS) {
      const res = await api(app, member).post(`/api/connectors/${victoriaUid}/query`, { query, time: AT });
      const label = query.slice(0, 80);
      if (res.status === 200) {
        answered++;
        const foreign = foreignIn(res.body);
        if (foreign.length > 0) failures.push(`${label}: foreign ${foreign.join(', ')}`);
      } else if (res.status !== 400) failures.push(`${label}: ${res.status}`);
    }
    for (const [method, path, params] of PROXY_ATTACKS) {
      const res =
        method === 'GET'
          ? await api(app, member).get(`/api/connectors/proxy/uid/${victoriaUid}/${path}${params ? `?${params}` : ''}`)
          : await app.request('POST', `/api/connectors/proxy/uid/${victoriaUid}/${path}`, {
              cookie: member.cookie,
              rawBody: params,
              contentType: 'application/x-www-form-urlencoded',
            });
      if (res.status === 200 && /payments/.test(JSON.stringify(res.body)))
        failures.push(`${method} ${path}?${params}: ${JSON.stringify(res.body).slice(0, 200)}`);
      else if (res.status !== 200 && res.status !== 400) failures.push(`${method} ${path}?${params}: ${res.status}`);
    }
    expect(failures).to.deep.equal([]);
    // most of them are answered, not refused
    expect(answered).to.be.greaterThan(QUERY_ATTACKS.length / 2);
  });

  it('queries made to hold the service (garbage, deep nesting, long chains) are a 400 naming the query, by the route and the proxy', async () => {
    // each within the query route's 20,000 characters, so that both paths parse it
    const costly = [
      '{'.repeat(19_000),
      '('.repeat(19_000),
      `${'sum('.repeat(3_000)}app_requests${')'.repeat(3_000)}`,
      `${'-'.repeat(19_000)}app_requests`,
      `app_requests${'[5m:1m]'.repeat(2_700)}`,
      Array(1_000).fill('payments_secret').join(' or '),
    ];
    const refusal =
      /^(body\.query|the query|query) (does not parse at character \d+|is too complex: reading it takes over 100 ms|is nested too deeply to read)$/;
    for (const query of costly) {
      const label = `${query.slice(0, 40)}... (${query.length} chars)`;
      const routed = await api(app, member).post(`/api/connectors/${fullUid}/query`, { query, time: AT });
      expect(routed.status, label).to.equal(400);
      expect(routed.body.message, label).to.match(refusal);
      const proxied = await app.request('POST', `/api/connectors/proxy/uid/${fullUid}/api/v1/query`, {
        cookie: member.cookie,
        rawBody: `query=${encodeURIComponent(query)}&time=${AT}`,
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(proxied.status, label).to.equal(400);
      expect(proxied.body.message, label).to.match(refusal);
    }
  });

  it('a query longer than the limit is refused before it reaches the backend', async () => {
    const res = await api(app, member).post(`/api/connectors/${fullUid}/query`, { query: 'app_requests or '.repeat(1300) + 'payments_secret', time: AT });
    expect(res.status).to.equal(400);
  });
});
