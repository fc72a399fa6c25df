/**
 * GET /api/admin/stats (counts across the server) and GET /api/admin/settings (the effective
 * configuration, secrets redacted): server admin only, through the policy's server actions.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import { api, buildServiceAccount, buildTeam, createOrg, createUser, DENIED, type TestUser } from './helpers/factories.ts';
import { startTestApp, TEST_DB, type TestApp } from './helpers/app.ts';

describe('server administration: stats and settings', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  before(async () => {
    app = await startTestApp({ env: { METRICS_TOKEN: 'metrics-token-0123456789abcdef', API_KEYS: 'grafana:Viewer:legacy-key-0123456789abcdef' } });
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  for (const path of ['/api/admin/stats', '/api/admin/settings']) {
    it(`${path}: 401 without credentials, 403 for an org Admin, 200 for a server admin`, async () => {
      expect((await app.request('GET', path)).status).to.equal(401);
      const refused = await api(app, orgAdmin).get(path);
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(DENIED);
      expect((await api(app, serverAdmin).get(path)).status).to.equal(200);
    });
  }

  it('counts users, service accounts, orgs, teams, folders, dashboards, alert rules, connectors and active sessions', async () => {
    const stats = async () => (await api(app, serverAdmin).get('/api/admin/stats')).body;
    const before = await stats();
    expect(Object.keys(before).sort()).to.deep.equal([
      'activeSessions',
      'alertRules',
      'connectors',
      'dashboards',
      'folders',
      'orgs',
      'serviceAccounts',
      'teams',
      'users',
    ]);

    const user = await createUser(app);
    await buildServiceAccount(app);
    await buildTeam(app);
    await createOrg(app);
    expect((await api(app, serverAdmin).post('/api/folders', { uid: 'stats-folder', title: 'Stats' })).status).to.equal(201);
    expect((await api(app, serverAdmin).post('/api/dashboards/db', { dashboard: { title: 'Stats board' }, folderUid: 'stats-folder' })).status).to.equal(200);
    const rule = {
      title: 'Stats rule',
      folderUID: 'stats-folder',
      ruleGroup: 'group',
      condition: 'A',
      data: [{ refId: 'A', datasourceUid: 'metrics', model: {} }],
      for: '1m',
      labels: {},
      annotations: {},
      noDataState: 'NoData',
      execErrState: 'Error',
      isPaused: false,
    };
    expect((await api(app, serverAdmin).post('/api/v1/provisioning/alert-rules', rule)).status).to.equal(201);
    expect((await api(app, serverAdmin).post('/api/connectors', { name: 'Stats deploys', type: 'changes' })).status).to.equal(201);

    const after = await stats();
    expect(after).to.deep.equal({
      users: before.users + 1,
      serviceAccounts: before.serviceAccounts + 1,
      orgs: before.orgs + 1,
      teams: before.teams + 1,
      folders: before.folders + 1,
      dashboards: before.dashboards + 1,
      alertRules: before.alertRules + 1,
      connectors: before.connectors + 1,
      activeSessions: before.activeSessions + 1,
    });
    expect(after.users).to.equal(await app.count('users', { is_service_account: false }));

    // A revoked session is not active.
    await app.db('sessions').where('user_id', user.id).update({ revoked_at: app.clock.now() });
    expect((await stats()).activeSessions).to.equal(before.activeSessions);
  });

  it('shows every configuration variable of docs/configuration.md with its effective value, secrets redacted', async () => {
    const settings = (await api(app, serverAdmin).get('/api/admin/settings')).body;
    const doc = fs.readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((match) => match[1]!).sort();
    expect(documented).to.include.members(['PORT', 'SECRET_KEY', 'OAUTH_GENERIC_SCOPES', 'SAML_IDP_CERT']);
    expect(Object.keys(settings).sort()).to.deep.equal(documented);

    expect(settings).to.deep.include({
      NODE_ENV: 'test',
      SECRET_KEY: '*****',
      JWT_SECRET: '*****',
      METRICS_TOKEN: '*****',
      SEED_ADMIN_PASSWORD: null,
      API_KEYS: ['grafana:Viewer:*****'],
      LOG_LEVEL: 'silent',
      LEGACY_ACL_ENABLED: true,
      QUOTA_USERS_PER_ORG: -1,
    });
    expect(settings.DATABASE_URL).to.match(TEST_DB === 'mysql' ? /^mysql:\/\// : /^sqlite:/);
    const text = JSON.stringify(settings);
    for (const secret of [app.services.config.secretKey, app.services.config.jwtSecret, 'metrics-token-0123456789abcdef', 'legacy-key-0123456789abcdef']) {
      expect(text).to.not.include(secret);
    }
  });
});
