/**
 * Label rules on a Loki connector (the Loki double: Loki is not run here) when a reader's rules are
 * not one matcher on the same label: a member of the checkout team (`{namespace="checkout"}`) who
 * also holds `{app="ledger"}` of payments reads exactly the union of the two, on every read path:
 * log queries (query route, proxy GET and form POST, chat tool `logs_query`) sent once per rule
 * and merged, with no line twice when a stream matches both rules, the request's limit and
 * direction kept; metric queries joined with `or`; label names, values and series the union of
 * the rules' answers; more than 10 such rules refused; nothing foreign ever.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addTeamMember, api, buildTeam, createUser, type TestTeam, type TestUser } from './helpers/factories.ts';
import { startLokiDouble, type DoubleStream, type RunningLokiDouble } from './helpers/loki-double.ts';

const TENANT = 'union-tenant';
const HEADER = 'x-gatehouse-label-rules';

/** Streams with their lines' offsets (seconds after t0): interleaved, so that a limit cuts across streams. */
const STREAMS = [
  { labels: { namespace: 'checkout', app: 'shop' }, at: [0, 3], text: 'checkout shop' },
  // matched by both rules: its lines must come back once
  { labels: { namespace: 'checkout', app: 'ledger' }, at: [1, 4], text: 'checkout ledger' },
  { labels: { namespace: 'payments', app: 'ledger' }, at: [2, 5], text: 'payments ledger' },
  { labels: { namespace: 'payments', app: 'vault-7q' }, at: [6, 7], text: 'payments card 4242-SECRET' },
  { labels: { namespace: 'checkout-eu', app: 'shop-eu' }, at: [8], text: 'checkout-eu order 9931-OTHER' },
] as const;
const FOREIGN = ['4242-SECRET', 'vault-7q', '9931-OTHER', 'shop-eu', 'checkout-eu'];
const lineOf = (stream: (typeof STREAMS)[number], i: number) => `${stream.text} ${i}`;
/** The union's lines, oldest first, as [offset, line]. */
const UNION: Array<[number, string]> = STREAMS.slice(0, 3)
  .flatMap((stream) => stream.at.map((offset, i): [number, string] => [offset, lineOf(stream, i)]))
  .sort(([a], [b]) => a - b);

describe('connectors: Loki label rules on different labels, answered as their union', function () {
  this.timeout(60_000);
  let app: TestApp;
  let loki: RunningLokiDouble;
  let admin: TestUser;
  let member: TestUser;
  let team: TestTeam;
  let uid: string;
  const t0 = Math.floor(Date.now() / 60_000) * 60 - 60;
  const window = { start: t0 - 60, end: t0 + 120 };

  const unionRules = () => [
    { teamId: team.id, selector: '{namespace="checkout"}' },
    { userId: member.id, selector: '{app="ledger"}' },
  ];
  async function putRules(rules: unknown[]) {
    const res = await api(app, admin).put(`/api/connectors/${uid}/label-rules`, { rules });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  before(async () => {
    loki = await startLokiDouble({
      [TENANT]: STREAMS.map((stream): DoubleStream => ({
        labels: { ...stream.labels },
        entries: stream.at.map((offset, i): [bigint, string] => [BigInt(t0 + offset) * 1_000_000_000n, lineOf(stream, i)]),
      })),
    });
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    member = await createUser(app, { role: 'Viewer' });
    team = await buildTeam(app, { name: 'checkout-union' });
    await addTeamMember(app, team, member.id);
    const created = await api(app, admin).post('/api/connectors', {
      name: 'loki-union',
      type: 'logstore',
      url: loki.url,
      jsonData: { httpHeaderName1: 'X-Scope-OrgID' },
      secureJsonData: { httpHeaderValue1: TENANT },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    uid = created.body.uid;
    await putRules(unionRules());
  });
  after(async () => {
    await app?.close();
    await loki?.stop();
  });

  type Streams = Array<{ labels: Record<string, string>; entries: Array<[string, string]> }>;
  const query = (body: Record<string, unknown>) => api(app, member).post(`/api/connectors/${uid}/query`, { type: 'range', ...window, ...body });
  const proxy = (rest: string) => api(app, member).get(`/api/connectors/proxy/uid/${uid}/${rest}`);
  const textOf = (res: { body: unknown }) => (typeof res.body === 'string' ? res.body : JSON.stringify(res.body));
  /** [offset, line] of each entry, in the answer's order, stream after stream. */
  const entriesOf = (streams: Streams) =>
    streams.flatMap((stream) => stream.entries.map(([ns, line]): [number, string] => [Number(BigInt(ns) / 1_000_000_000n) - t0, line]));
  const sortedByTime = (entries: Array<[number, string]>) => [...entries].sort(([a], [b]) => a - b);
  const expectNoForeign = (res: { body: unknown }) => {
    for (const marker of FOREIGN) expect(textOf(res)).to.not.include(marker);
  };
  const expectDirection = (streams: Streams, forward: boolean) => {
    for (const stream of streams) {
      const times = stream.entries.map(([ns]) => BigInt(ns));
      expect(times).to.deep.equal([...times].sort((a, b) => (a === b ? 0 : a < b === forward ? -1 : 1)));
    }
  };

  it('a log query on the query route: exactly the union, each stream once and each line once, with the header applied', async () => {
    const res = await query({ query: '{app=~".+"}' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.get(HEADER)).to.equal('applied');
    expect(res.body.resultType).to.equal('streams');
    const streams = res.body.streams as Streams;
    expect(streams.map((stream) => `${stream.labels.namespace}/${stream.labels.app}`).sort()).to.deep.equal([
      'checkout/ledger',
      'checkout/shop',
      'payments/ledger',
    ]);
    expect(sortedByTime(entriesOf(streams))).to.deep.equal(UNION);
    expectDirection(streams, false);
    expectNoForeign(res);
    // the caller's own selector narrows the union further
    const narrowed = await query({ query: '{namespace="payments"} |= "ledger"' });
    expect(narrowed.status, JSON.stringify(narrowed.body)).to.equal(200);
    expect(sortedByTime(entriesOf(narrowed.body.streams))).to.deep.equal(UNION.filter(([, line]) => line.startsWith('payments')));
  });

  it('the limit cuts the union in the request’s direction: the oldest lines forward, the newest backward', async () => {
    const forward = await query({ query: '{app=~".+"}', limit: 4, direction: 'forward' });
    expect(forward.status, JSON.stringify(forward.body)).to.equal(200);
    expect(sortedByTime(entriesOf(forward.body.streams))).to.deep.equal(UNION.slice(0, 4));
    expectDirection(forward.body.streams, true);
    const backward = await query({ query: '{app=~".+"}', limit: 4, direction: 'backward' });
    expect(sortedByTime(entriesOf(backward.body.streams))).to.deep.equal(UNION.slice(-4));
    expectDirection(backward.body.streams, false);
    // the line both rules read is counted once against the limit
    const two = await query({ query: '{app="ledger", namespace="checkout"}', limit: 2 });
    expect(entriesOf(two.body.streams)).to.have.length(2);
  });

  it('the proxy’s query_range (GET and form POST): Loki’s envelope with the union’s streams, limit and direction kept, statistics added up', async () => {
    const q = encodeURIComponent('{app=~".+"}');
    const got = await proxy(`loki/api/v1/query_range?query=${q}&start=${window.start}&end=${window.end}&limit=3&direction=forward`);
    expect(got.status, textOf(got)).to.equal(200);
    expect(got.headers.get(HEADER)).to.equal('applied');
    expect(got.body.status).to.equal('success');
    expect(got.body.data.resultType).to.equal('streams');
    const streams = (got.body.data.result as Array<{ stream: Record<string, string>; values: Array<[string, string]> }>).map(({ stream, values }) => ({
      labels: stream,
      entries: values,
    }));
    expect(sortedByTime(entriesOf(streams))).to.deep.equal(UNION.slice(0, 3));
    expectDirection(streams, true);
    // each rule's query returned its first 3 lines
    expect(got.body.data.stats).to.deep.equal({ summary: { totalEntriesReturned: 6 } });
    expectNoForeign(got);
    const posted = await app.request('POST', `/api/connectors/proxy/uid/${uid}/loki/api/v1/query_range`, {
      cookie: member.cookie,
      rawBody: `query=${q}&start=${window.start}&end=${window.end}`,
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(posted.status, textOf(posted)).to.equal(200);
    const values = (posted.body.data.result as Array<{ values: Array<[string, string]> }>).flatMap((stream) => stream.values.map(([, line]) => line));
    expect(values.sort()).to.deep.equal(UNION.map(([, line]) => line).sort());
    expectNoForeign(posted);
    // a refusal of the backend comes back as it came
    const refused = await proxy(`loki/api/v1/query_range?query=${encodeURIComponent('{app="shop"} | json')}`);
    expect(refused.status).to.equal(400);
    expect(textOf(refused)).to.match(/parse error/);
  });

  it('the chat tool logs_query reads the same union', async () => {
    const res = await api(app, member).post('/api/chat/tools/logs_query', {
      agentType: 'investigator',
      permissionMode: 'read_only',
      args: { connector: 'loki-union', query: '{app=~".+"}', ...window },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(sortedByTime(entriesOf(res.body.streams))).to.deep.equal(UNION);
    expectNoForeign(res);
  });

  it('a metric query: one query per rule joined with or, each series of the union once', async () => {
    const countBy = 'sum by (namespace, app) (count_over_time({app=~".+"}[1h]))';
    const series = (body: { series: Array<{ labels: Record<string, string>; values: Array<[number, number]> }> }) =>
      body.series.map((one) => `${one.labels.namespace}/${one.labels.app}=${one.values.at(-1)![1]}`).sort();
    const instant = await api(app, member).post(`/api/connectors/${uid}/query`, { query: countBy, type: 'instant', time: t0 + 60 });
    expect(instant.status, JSON.stringify(instant.body)).to.equal(200);
    expect(series(instant.body)).to.deep.equal(['checkout/ledger=2', 'checkout/shop=2', 'payments/ledger=2']);
    const range = await query({ query: countBy, step: 60 });
    expect(range.status, JSON.stringify(range.body)).to.equal(200);
    expect(series(range.body)).to.deep.equal(['checkout/ledger=2', 'checkout/shop=2', 'payments/ledger=2']);
    const proxied = await proxy(`loki/api/v1/query?query=${encodeURIComponent(countBy)}&time=${t0 + 60}`);
    expect(proxied.status, textOf(proxied)).to.equal(200);
    expect(proxied.body.data.result).to.have.length(3);
    expectNoForeign(proxied);
  });

  it('label names, label values and series: the union of the rules’ answers, sorted, each once', async () => {
    const range = `start=${window.start}&end=${window.end}`;
    const namespaces = await proxy(`loki/api/v1/label/namespace/values?${range}`);
    expect(namespaces.status, textOf(namespaces)).to.equal(200);
    expect(namespaces.headers.get(HEADER)).to.equal('applied');
    expect(namespaces.body).to.deep.equal({ status: 'success', data: ['checkout', 'payments'] });
    const apps = await proxy(`loki/api/v1/label/app/values?${range}&query=${encodeURIComponent('{app=~".+"}')}`);
    expect(apps.body).to.deep.equal({ status: 'success', data: ['ledger', 'shop'] });
    const narrowed = await proxy(`loki/api/v1/label/namespace/values?${range}&query=${encodeURIComponent('{app="shop"}')}`);
    expect(narrowed.body).to.deep.equal({ status: 'success', data: ['checkout'] });
    const labels = await proxy(`loki/api/v1/labels?${range}`);
    expect(labels.body).to.deep.equal({ status: 'success', data: ['app', 'namespace'] });
    const none = await proxy(`loki/api/v1/label/namespace/values?${range}&query=${encodeURIComponent('{app="none-such"}')}`);
    expect(none.status).to.equal(200);
    expect(none.body).to.deep.equal({ status: 'success' });
    const series = await proxy(`loki/api/v1/series?${range}&match[]=${encodeURIComponent('{app=~".+"}')}`);
    expect(series.status, textOf(series)).to.equal(200);
    const found = (series.body.data as Array<Record<string, string>>).map((labels_) => `${labels_.namespace}/${labels_.app}`).sort();
    expect(found).to.deep.equal(['checkout/ledger', 'checkout/shop', 'payments/ledger']);
    for (const res of [namespaces, apps, labels, series]) expectNoForeign(res);
  });

  it('more than 10 rules that are not one matcher on the same label are refused, naming the limit; 10 are answered', async () => {
    const many = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ userId: member.id, selector: i === 0 ? '{namespace="checkout"}' : `{app="ledger", env="e${i}"}` }));
    await putRules(many(11));
    const message =
      '11 label rules apply to you on this Loki connector, and a read is answered as the union of at most 10 rules that are not one matcher on the same label';
    for (const res of [
      await query({ query: '{app=~".+"}' }),
      await query({ query: 'sum(count_over_time({app=~".+"}[1h]))' }),
      await proxy(`loki/api/v1/label/app/values?start=${window.start}&end=${window.end}`),
    ]) {
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal(message);
    }
    await putRules(many(10));
    const ten = await query({ query: '{app=~".+"}' });
    expect(ten.status, JSON.stringify(ten.body)).to.equal(200);
    expect(sortedByTime(entriesOf(ten.body.streams))).to.deep.equal(UNION.filter(([, line]) => line.startsWith('checkout')));
    await putRules(unionRules());
  });
});
