/**
 * Label rules on metrics connectors, against a real Prometheus and a real VictoriaMetrics holding
 * the series of two teams (helpers/team-series.ts): the rules API (401, 403, bad input, audit,
 * the policy data and `opa eval` on it), and every read path (query, range query, the proxy's
 * query, label and series paths, the chat tool) restricted to each team's own series; no rule:
 * 403; org and connector Admins: everything; a rule change shows on the next request.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addTeamMember, api, auditEntries, buildServiceAccount, buildTeam, createUser, DENIED, type TestTeam, type TestUser } from './helpers/factories.ts';
import { findOpa, REPO_ROOT } from './helpers/opa.ts';
import { peerAvailable, requirePeer } from './helpers/peers.ts';
import { startPrometheus, T0, type RunningPrometheus } from './helpers/prometheus.ts';
import { foreignIn, TEAM_SERIES } from './helpers/team-series.ts';
import { startVictoriaMetrics, VM_BEARER_TOKEN, type RunningVictoriaMetrics } from './helpers/victoria-metrics.ts';

const HEADER = 'x-gatehouse-label-rules';
const CHECKOUT = '{namespace="checkout"}';
const PAYMENTS = '{namespace="payments"}';

describe('connectors: label rules', function () {
  this.timeout(60_000);
  let app: TestApp;
  let prometheus: RunningPrometheus;
  let victoria: RunningVictoriaMetrics | undefined;
  let admin: TestUser;
  let editor: TestUser;
  let checkoutMember: TestUser;
  let paymentsMember: TestUser;
  let noRule: TestUser;
  let connectorAdmin: TestUser;
  let checkoutTeam: TestTeam;
  const backends: Array<{ name: string; uid: string }> = [];

  before(async function () {
    requirePeer(this, 'prometheus');
    prometheus = await startPrometheus({ kind: 'none' }, { series: TEAM_SERIES });
    if (peerAvailable('victoria-metrics')) victoria = await startVictoriaMetrics(TEAM_SERIES);
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    checkoutMember = await createUser(app, { role: 'Viewer' });
    paymentsMember = await createUser(app, { role: 'Viewer' });
    noRule = await createUser(app, { role: 'Viewer' });
    connectorAdmin = await createUser(app, { role: 'Viewer' });
    checkoutTeam = await buildTeam(app, { name: 'checkout' });
    await addTeamMember(app, checkoutTeam, checkoutMember.id);
    const made = [{ name: 'lr-prometheus', url: prometheus.url, extra: {} }];
    if (victoria) made.push({ name: 'lr-victoria', url: victoria.url, extra: { secureJsonData: { bearerToken: VM_BEARER_TOKEN } } });
    for (const { name, url, extra } of made) {
      const created = await api(app, admin).post('/api/connectors', { name, type: 'tsmetrics', url, ...extra });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      backends.push({ name, uid: created.body.uid });
      // Viewers keep View (query); connectorAdmin is the connector's Admin
      const granted = await api(app, admin).post(`/api/connectors/${created.body.uid}/permissions`, {
        items: [
          { role: 'Viewer', permission: 1 },
          { userId: connectorAdmin.id, permission: 4 },
        ],
      });
      expect(granted.status, JSON.stringify(granted.body)).to.equal(200);
      await putRules(admin, created.body.uid, defaultRules());
    }
  });
  after(async () => {
    await app?.close();
    await prometheus?.stop();
    await victoria?.stop();
  });

  const defaultRules = () => [
    { teamId: checkoutTeam.id, selector: CHECKOUT },
    { userId: paymentsMember.id, selector: PAYMENTS },
  ];

  async function putRules(who: TestUser, uid: string, rules: unknown[]) {
    const res = await api(app, who).put(`/api/connectors/${uid}/label-rules`, { rules });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res;
  }

  const namespacesOf = (body: { series: Array<{ labels: Record<string, string> }> }) => [...new Set(body.series.map((s) => s.labels.namespace))].sort();
  const query = (who: TestUser, uid: string, q: string, extra: Record<string, unknown> = {}) =>
    api(app, who).post(`/api/connectors/${uid}/query`, { query: q, time: T0 + 300, ...extra });
  const proxy = (who: TestUser, uid: string, rest: string) => api(app, who).get(`/api/connectors/proxy/uid/${uid}/${rest}`);
  const proxyForm = (who: TestUser, uid: string, rest: string, form: string) =>
    app.request('POST', `/api/connectors/proxy/uid/${uid}/${rest}`, { cookie: who.cookie, rawBody: form, contentType: 'application/x-www-form-urlencoded' });

  describe('GET/PUT /api/connectors/:uid/label-rules', () => {
    it('401 without credentials; 403 for a Viewer and an Editor (they need connectors.permissions:write / read)', async () => {
      const { uid } = backends[0]!;
      expect((await app.request('GET', `/api/connectors/${uid}/label-rules`)).status).to.equal(401);
      expect((await app.request('PUT', `/api/connectors/${uid}/label-rules`, { body: { rules: [] } })).status).to.equal(401);
      for (const who of [editor, checkoutMember]) {
        const put = await api(app, who).put(`/api/connectors/${uid}/label-rules`, { rules: [] });
        expect(put.status).to.equal(403);
        expect(put.body.message).to.match(DENIED);
        expect((await api(app, who).get(`/api/connectors/${uid}/label-rules`)).status).to.equal(403);
      }
      // untouched
      expect((await api(app, admin).get(`/api/connectors/${uid}/label-rules`)).body.rules).to.have.length(2);
    });

    it('400 naming the rule for a selector that does not parse or is not a matcher set, two principals, an unknown principal, or a changes connector', async () => {
      const { uid } = backends[0]!;
      const account = await buildServiceAccount(app);
      const cases: Array<[unknown[], string | RegExp]> = [
        [
          [
            { role: 'Viewer', selector: CHECKOUT },
            { role: 'Editor', selector: '{namespace="checkout"' },
          ],
          /^body\.rules\[1\]\.selector does not parse at character \d+$/,
        ],
        [[{ role: 'Viewer', selector: 'up{namespace="checkout"}' }], 'body.rules[0].selector must be a label-matcher set such as {namespace="checkout"}'],
        [[{ role: 'Viewer', selector: '{a="b"} or {c="d"}' }], 'body.rules[0].selector must be a label-matcher set such as {namespace="checkout"}'],
        [[{ role: 'Viewer', selector: '{}' }], 'body.rules[0].selector must hold label matchers such as namespace="checkout", and nothing else'],
        [[{ role: 'Viewer', selector: '{a=~"("}' }], 'body.rules[0].selector has an invalid regular expression for a'],
        [[{ role: 'Viewer', teamId: checkoutTeam.id, selector: CHECKOUT }], 'body.rules[0] must name exactly one of userId, serviceAccountId, teamId or role'],
        [[{ selector: CHECKOUT }], 'body.rules[0] must name exactly one of userId, serviceAccountId, teamId or role'],
        [[{ teamId: 'no-such-team', selector: CHECKOUT }], 'body.rules[0].teamId: team no-such-team not found in this org'],
        [[{ userId: account.id, selector: CHECKOUT }], `body.rules[0].userId: user ${account.id} is not a member of this org`],
        [[{ serviceAccountId: noRule.id, selector: CHECKOUT }], `body.rules[0].serviceAccountId: service account ${noRule.id} is not a member of this org`],
      ];
      for (const [rules, message] of cases) {
        const res = await api(app, admin).put(`/api/connectors/${uid}/label-rules`, { rules });
        expect(res.status, JSON.stringify(rules)).to.equal(400);
        if (typeof message === 'string') expect(res.body.message).to.equal(message);
        else expect(res.body.message).to.match(message);
      }
      expect((await api(app, admin).put(`/api/connectors/${uid}/label-rules`, { rules: 'x' })).status).to.equal(400);
      expect((await api(app, admin).put(`/api/connectors/${uid}/label-rules`, { rules: [{ role: 'Viewer', selector: CHECKOUT, extra: 1 }] })).status).to.equal(
        400,
      );
      const changes = await api(app, admin).post('/api/connectors', { name: 'lr-changes', type: 'changes' });
      const refused = await api(app, admin).put(`/api/connectors/${changes.body.uid}/label-rules`, { rules: [{ role: 'Viewer', selector: CHECKOUT }] });
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.equal('label rules are supported on metrics and logs connectors');
      expect((await api(app, admin).get('/api/connectors/no-such-connector/label-rules')).status).to.equal(404);
      expect((await api(app, admin).get(`/api/connectors/${uid}/label-rules`)).body.rules).to.have.length(2);
    });

    it('a connector Admin replaces them; saved in canonical form, audited, and exported in the policy data', async () => {
      const { uid } = backends[0]!;
      const account = await buildServiceAccount(app);
      const rules = [
        ...defaultRules(),
        { serviceAccountId: account.id, selector: "{ namespace = 'checkout' , env=~`prod|staging` }" },
        { role: 'Editor', selector: '{env="prod"} # the production series' },
      ];
      const res = await putRules(connectorAdmin, uid, rules);
      expect(res.body.rules).to.deep.equal([
        ...defaultRules(),
        { serviceAccountId: account.id, selector: '{namespace="checkout", env=~"prod|staging"}' },
        { role: 'Editor', selector: '{env="prod"}' },
      ]);
      expect((await api(app, admin).get(`/api/connectors/${uid}/label-rules`)).body).to.deep.equal(res.body);
      const [entry] = await auditEntries(app, { action: 'connector.label_rules.updated', target_id: uid, actor_id: connectorAdmin.id });
      expect(entry, 'audit entry').to.not.equal(undefined);
      const document = (await api(app, admin).get('/api/access-control/policy-data')).body;
      expect(document.label_rules[uid]).to.deep.equal({
        [`team:${checkoutTeam.id}`]: [CHECKOUT],
        [`user:${paymentsMember.id}`]: [PAYMENTS],
        [`user:${account.id}`]: ['{namespace="checkout", env=~"prod|staging"}'],
        'role:Editor': ['{env="prod"}'],
      });
      await putRules(admin, uid, defaultRules());
    });

    it('deleting a connector removes its rules from the table and from the policy data', async () => {
      const created = await api(app, admin).post('/api/connectors', { name: 'lr-gone', type: 'tsmetrics', url: prometheus.url });
      await putRules(admin, created.body.uid, [{ role: 'Viewer', selector: CHECKOUT }]);
      expect((await api(app, admin).get('/api/access-control/policy-data')).body.label_rules).to.have.property(created.body.uid);
      expect((await api(app, admin).delete(`/api/connectors/${created.body.uid}`)).status).to.equal(200);
      expect(await app.count('connector_label_rules', { connector_uid: created.body.uid })).to.equal(0);
      expect((await api(app, admin).get('/api/access-control/policy-data')).body.label_rules).to.not.have.property(created.body.uid);
    });

    it('opa eval on the exported document gives the same selectors as the service', async function () {
      requirePeer(this, 'opa');
      const { uid } = backends[0]!;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-label-rules-'));
      try {
        const dataFile = path.join(dir, 'data.json');
        fs.writeFileSync(dataFile, JSON.stringify((await api(app, admin).get('/api/access-control/policy-data')).body));
        for (const who of [checkoutMember, paymentsMember, noRule, admin, connectorAdmin]) {
          const input = {
            subject: { id: who.id, kind: 'user' as const, server_admin: false, disabled: false },
            org_id: 'org_main',
            resource: { kind: 'connectors' as const, uid },
          };
          const inputFile = path.join(dir, 'input.json');
          fs.writeFileSync(inputFile, JSON.stringify(input));
          const output = execFileSync(
            findOpa()!,
            ['eval', '--format', 'json', '-d', path.join(REPO_ROOT, 'policies/authz'), '-d', dataFile, '-i', inputFile, 'data.authz.label_rules'],
            { encoding: 'utf8' },
          );
          expect(JSON.parse(output).result[0].expressions[0].value).to.deep.equal(await app.services.engine.labelRules(input));
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('every read path, on each backend', () => {
    for (const index of [0, 1]) {
      describe(`backend ${index === 0 ? 'Prometheus' : 'VictoriaMetrics'}`, () => {
        let uid: string;
        before(function () {
          if (index === 1) requirePeer(this, 'victoria-metrics');
          uid = backends[index]!.uid;
        });

        it('instant and range queries: each team reads only its series, with the header applied', async () => {
          for (const [who, namespace, pods] of [
            [checkoutMember, 'checkout', 2],
            [paymentsMember, 'payments', 3],
          ] as const) {
            const instant = await query(who, uid, '{__name__=~"app_.*"}');
            expect(instant.status, JSON.stringify(instant.body)).to.equal(200);
            expect(instant.headers.get(HEADER)).to.equal('applied');
            expect(namespacesOf(instant.body)).to.deep.equal([namespace]);
            expect(instant.body.series).to.have.length(pods);
            const range = await query(who, uid, 'sum by (namespace) (app_requests)', { type: 'range', start: T0, end: T0 + 540, step: 60 });
            expect(range.status).to.equal(200);
            expect(namespacesOf(range.body)).to.deep.equal([namespace]);
          }
          const chosen = await query(checkoutMember, uid, 'app_requests{namespace="payments"}');
          expect(chosen.body.series).to.deep.equal([]);
          expect(foreignIn((await query(checkoutMember, uid, 'sum(app_requests)')).body)).to.deep.equal([]);
        });

        it('the proxy: query (GET and form POST), query_range, labels, label values and series', async () => {
          const got = await proxy(checkoutMember, uid, `api/v1/query?query=${encodeURIComponent('app_requests')}&time=${T0 + 300}`);
          expect(got.status).to.equal(200);
          expect(got.headers.get(HEADER)).to.equal('applied');
          expect(got.body.data.result.map((r: { metric: { pod: string } }) => r.metric.pod).sort()).to.deep.equal(['checkout-1', 'checkout-2']);
          const posted = await proxyForm(paymentsMember, uid, 'api/v1/query_range', `query=app_requests&start=${T0}&end=${T0 + 540}&step=60`);
          expect(posted.status).to.equal(200);
          expect(posted.body.data.result.map((r: { metric: { pod: string } }) => r.metric.pod).sort()).to.deep.equal([
            'payments-1',
            'payments-2',
            'payments-3',
          ]);
          const values = await proxy(checkoutMember, uid, `api/v1/label/namespace/values?start=${T0}&end=${T0 + 600}`);
          expect(values.status).to.equal(200);
          expect(values.body.data).to.deep.equal(['checkout']);
          const names = await proxy(paymentsMember, uid, `api/v1/label/__name__/values?start=${T0}&end=${T0 + 600}`);
          expect(names.body.data).to.deep.equal(['app_requests', 'payments_secret']);
          const labels = await proxy(checkoutMember, uid, `api/v1/labels?start=${T0}&end=${T0 + 600}`);
          expect(labels.status).to.equal(200);
          expect(labels.body.data).to.include('namespace').and.not.include('room');
          const series = await proxy(checkoutMember, uid, `api/v1/series?match[]=${encodeURIComponent('{__name__=~".+"}')}&start=${T0}&end=${T0 + 600}`);
          expect(series.status).to.equal(200);
          expect(series.body.data.map((s: { pod: string }) => s.pod).sort()).to.deep.equal(['checkout-1', 'checkout-1', 'checkout-2']);
          const metadata = await proxy(checkoutMember, uid, 'api/v1/metadata');
          expect(metadata.status).to.equal(400);
          expect(metadata.body.message).to.equal('label rules apply to this connector, and api/v1/metadata cannot be restricted by labels');
        });

        it('the chat tool metrics_query is bound by the caller’s rules', async () => {
          const call = (who: TestUser, q: string) =>
            api(app, who).post('/api/chat/tools/metrics_query', {
              agentType: 'investigator',
              permissionMode: 'read_only',
              args: { connector: backends[index]!.name, query: q, time: T0 + 300 },
            });
          const res = await call(checkoutMember, '{namespace=~".+"}');
          expect(res.status, JSON.stringify(res.body)).to.equal(200);
          expect(namespacesOf(res.body)).to.deep.equal(['checkout']);
          const refused = await call(noRule, 'app_requests');
          expect(refused.status).to.equal(403);
        });

        it('a member no rule names gets 403 on every path; org and connector Admins read everything (bypass)', async () => {
          for (const res of [
            await query(noRule, uid, 'app_requests'),
            await proxy(noRule, uid, 'api/v1/query?query=up'),
            await proxy(noRule, uid, 'api/v1/labels'),
            await proxyForm(noRule, uid, 'api/v1/series', 'match[]=up'),
          ]) {
            expect(res.status).to.equal(403);
            expect(res.body.message).to.equal('permission denied: this connector has label rules, and none of them applies to you');
          }
          for (const who of [admin, connectorAdmin]) {
            const all = await query(who, uid, 'app_requests');
            expect(all.status).to.equal(200);
            expect(all.headers.get(HEADER)).to.equal('bypass');
            expect(namespacesOf(all.body)).to.deep.equal(['checkout', 'payments']);
            const metadata = await proxy(who, uid, 'api/v1/label/namespace/values');
            expect(metadata.body.data).to.deep.equal(['checkout', 'payments']);
          }
        });

        it('a rule change is seen on the next request; no rule left: everyone with query reads everything (none)', async () => {
          await putRules(admin, uid, [{ teamId: checkoutTeam.id, selector: '{namespace="checkout", env="prod"}' }, ...defaultRules().slice(1)]);
          const narrowed = await query(checkoutMember, uid, 'app_requests');
          expect(narrowed.body.series.map((s: { labels: { pod: string } }) => s.labels.pod)).to.deep.equal(['checkout-1']);
          // two rules for the checkout member: the union
          await putRules(admin, uid, [...defaultRules(), { userId: checkoutMember.id, selector: '{pod="payments-3"}' }]);
          const union = await query(checkoutMember, uid, 'app_requests');
          expect(union.body.series.map((s: { labels: { pod: string } }) => s.labels.pod).sort()).to.deep.equal(['checkout-1', 'checkout-2', 'payments-3']);
          await putRules(admin, uid, []);
          const open = await query(noRule, uid, 'app_requests');
          expect(open.status).to.equal(200);
          expect(open.headers.get(HEADER)).to.equal('none');
          expect(open.body.series).to.have.length(5);
          await putRules(admin, uid, defaultRules());
          expect((await query(noRule, uid, 'app_requests')).status).to.equal(403);
        });
      });
    }
  });
});
