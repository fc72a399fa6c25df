/**
 * GET /metrics: Prometheus text with requests by route template and status, authorize()
 * decisions and latency, logins and lockouts, policy documents, the database pool and the
 * statements sent; behind METRICS_TOKEN when one is set.
 */
import { expect } from 'chai';
import { api, buildTeam, createUser, DEFAULT_PASSWORD, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

/** The value of one series (name and exact labels) in Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = (match[2] ?? '')
      .split(/,(?=\w+=")/)
      .filter(Boolean)
      .sort()
      .join(',');
    if (found === wanted) return Number(match[3]);
  }
  return 0;
}

describe('metrics', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  const scrape = async () => (await app.request<string>('GET', '/metrics')).body;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app.close();
  });

  it('is Prometheus text, public when no METRICS_TOKEN is set', async () => {
    const res = await app.request<string>('GET', '/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    expect(res.body).to.match(/^# HELP gatehouse_http_requests_total /m);
  });

  it('counts requests by route template and status, and gives unmatched paths one label', async () => {
    const team = await buildTeam(app);
    const before = await scrape();
    await api(app, admin).get(`/api/teams/${team.id}`);
    await api(app, admin).get('/api/teams/999999999');
    await app.request('GET', `/api/no/such/${team.id}`);
    const after = await scrape();
    const route = (status: string) => ({ method: 'GET', route: '/api/teams/:id', status });
    expect(sample(after, 'gatehouse_http_requests_total', route('200')) - sample(before, 'gatehouse_http_requests_total', route('200'))).to.equal(1);
    expect(sample(after, 'gatehouse_http_requests_total', route('404')) - sample(before, 'gatehouse_http_requests_total', route('404'))).to.equal(1);
    expect(sample(after, 'gatehouse_http_request_duration_seconds_count', route('200'))).to.be.at.least(1);
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    expect(sample(after, 'gatehouse_http_requests_total', unmatched) - sample(before, 'gatehouse_http_requests_total', unmatched)).to.equal(1);
    expect(after).to.not.include(`/api/teams/${team.id}`);
  });

  it('counts authorize() decisions by outcome and times them', async () => {
    const before = await scrape();
    expect((await api(app, admin).post('/api/teams', { name: 'metrics team' })).status).to.equal(201);
    expect((await api(app, viewer).post('/api/teams', { name: 'refused' })).status).to.equal(403);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('gatehouse_authorize_decisions_total', { outcome: 'allow' })).to.be.at.least(1);
    expect(delta('gatehouse_authorize_decisions_total', { outcome: 'deny' })).to.equal(1);
    expect(delta('gatehouse_authorize_duration_seconds_count')).to.equal(
      delta('gatehouse_authorize_decisions_total', { outcome: 'allow' }) + delta('gatehouse_authorize_decisions_total', { outcome: 'deny' }),
    );
  });

  it('counts logins by provider and outcome, and lockouts', async () => {
    const user = await createUser(app);
    const before = await scrape();
    const login = (password: string) => app.request('POST', '/api/login', { body: { user: user.login, password } });
    expect((await login(DEFAULT_PASSWORD)).status).to.equal(200);
    for (let attempt = 0; attempt < 5; attempt++) expect((await login('wrong password')).status).to.equal(401);
    expect((await login('wrong password')).status).to.equal(429);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('gatehouse_logins_total', { provider: 'local', outcome: 'success' })).to.equal(1);
    expect(delta('gatehouse_logins_total', { provider: 'local', outcome: 'failure' })).to.equal(5);
    expect(delta('gatehouse_logins_total', { provider: 'local', outcome: 'locked_out' })).to.equal(1);
    expect(delta('gatehouse_login_lockouts_total')).to.equal(1);
  });

  it('reports loaded policy documents, their rebuilds and the database pool', async () => {
    const text = await scrape();
    expect(sample(text, 'gatehouse_policy_documents_loaded')).to.be.at.least(1);
    expect(sample(text, 'gatehouse_policy_document_rebuilds_total')).to.be.at.least(1);
    expect(sample(text, 'gatehouse_db_pool_max')).to.be.at.least(1);
    expect(text).to.match(/^gatehouse_db_pool_connections\{state="used"\} \d+$/m);
    expect(text).to.match(/^gatehouse_db_pool_connections\{state="free"\} \d+$/m);
  });

  it('counts the statements sent to the database: a write sends some, a warm GET /api/user none', async () => {
    await app.request('GET', '/api/user', { cookie: viewer.cookie });
    const before = sample(await scrape(), 'gatehouse_db_queries_total');
    for (let i = 0; i < 5; i++) expect((await app.request('GET', '/api/user', { cookie: viewer.cookie })).status).to.equal(200);
    const afterReads = sample(await scrape(), 'gatehouse_db_queries_total');
    expect(afterReads).to.equal(before);
    await buildTeam(app);
    expect(sample(await scrape(), 'gatehouse_db_queries_total')).to.be.above(afterReads);
  });

  describe('with METRICS_TOKEN', () => {
    let guarded: TestApp;
    const token = 'metrics-token-0123456789abcdef';
    before(async () => {
      guarded = await startTestApp({ env: { METRICS_TOKEN: token } });
    });
    after(async () => {
      await guarded.close();
    });

    it('answers 401 without the token, with another token or with a server admin session, and 200 with it', async () => {
      const serverAdmin = await createUser(guarded, { svcAdmin: true, role: 'Admin' });
      for (const options of [{}, { token: 'metrics-token-wrong' }, { cookie: serverAdmin.cookie }, { headers: { authorization: `Basic ${token}` } }]) {
        const res = await guarded.request('GET', '/metrics', options);
        expect(res.status, JSON.stringify(options)).to.equal(401);
        expect(res.body).to.deep.equal({ message: 'the metrics need Authorization: Bearer <METRICS_TOKEN>' });
        expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="metrics"');
      }
      const res = await guarded.request<string>('GET', '/metrics', { token });
      expect(res.status).to.equal(200);
      expect(res.body).to.match(/^# TYPE gatehouse_authorize_decisions_total counter$/m);
    });
  });
});
