/**
 * The decision log (DECISION_LOG=file|stdout, DECISION_LOG_PATH, DECISION_LOG_SAMPLE): a JSON line
 * per sampled authorize() decision with OPA's decision-log field names, and per label-rules answer
 * a connector read is restricted by (`authz/label_rules`), and never a secret: the
 * requests below carry a password, a new password, a token and connector secrets, and none of them
 * reaches the file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { DecisionLog, type DecisionLogEntry, type LabelRulesLogEntry } from '../src/authz/decision-log.ts';
import type { AuthzInput } from '../src/authz/types.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { readManifest } from '../src/authz/manifest.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, passwordLogin, type TestUser } from './helpers/factories.ts';
import { REPO_ROOT } from './helpers/opa.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('decision log', () => {
  describe('DECISION_LOG=file', () => {
    let app: TestApp;
    let dir: string;
    let file: string;
    let admin: TestUser;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-decisions-'));
      file = path.join(dir, 'logs', 'decisions.log');
      app = await startTestApp({ env: { DECISION_LOG: 'file', DECISION_LOG_PATH: file } });
      admin = await createUser(app, { role: 'Admin' });
    });
    after(async () => {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const entries = (): DecisionLogEntry[] =>
      fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as DecisionLogEntry);

    it("writes each authorize() decision with OPA's decision-log fields, allowed and denied", async () => {
      const viewer = await createUser(app, { role: 'Viewer' });
      expect((await api(app, admin).get('/api/teams/search')).status).to.equal(200);
      expect((await api(app, viewer).post('/api/teams', { name: 'not allowed' })).status).to.equal(403);

      const logged = entries();
      const allowed = logged.find((entry) => entry.input.subject.id === admin.id && entry.input.action === 'teams:read')!;
      expect(Object.keys(allowed).sort()).to.deep.equal(['bundles', 'decision_id', 'input', 'labels', 'metrics', 'path', 'result', 'timestamp']);
      expect(allowed.decision_id).to.match(UUID);
      expect(allowed.path).to.equal('authz/decision');
      expect(allowed.input).to.deep.equal({
        subject: { id: admin.id, kind: 'user', server_admin: false, disabled: false },
        org_id: 'org_main',
        action: 'teams:read',
      });
      expect(allowed.result.allow).to.equal(true);
      expect(new Date(allowed.timestamp).toISOString()).to.equal(allowed.timestamp);
      expect(allowed.metrics.timer_rego_query_eval_ns).to.be.a('number').and.at.least(0);
      const manifest = readManifest(REPO_ROOT);
      expect(allowed.labels).to.include({ app: 'gatehouse', version: manifest.opaVersion });
      expect(allowed.labels.id).to.match(UUID);
      expect(allowed.bundles).to.deep.equal({ authz: { revision: manifest.sourceHash } });

      const denied = logged.find((entry) => entry.input.subject.id === viewer.id && entry.input.action === 'teams:create')!;
      // the policy's result as it gives it, reasons as data: what opa eval answers for the same input
      expect(denied.result).to.deep.equal({ allow: false, reasons: [{ kind: 'missing', action: 'teams:create' }] });
      expect(allowed.result.reasons).to.deep.include({ kind: 'grant', role: 'basic:viewer', action: 'teams:read' });
    });

    it('writes the label rules a connector read is given: the mode and the selectors applied', async () => {
      const reader = await createUser(app, { role: 'Viewer' });
      const created = await api(app, admin).post('/api/connectors', { name: 'decision-log-logs', type: 'logstore', url: 'http://logs.example.test' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const uid = created.body.uid as string;
      const rules = { rules: [{ userId: reader.id, selector: '{namespace="checkout"}' }] };
      expect((await api(app, admin).put(`/api/connectors/${uid}/label-rules`, rules)).status).to.equal(200);
      const subject = { id: reader.id, kind: 'user' as const, server_admin: false, disabled: false };
      // the read path asks it (connectors/label-rules.ts); evaluate and who-can ask explainLabelRules, which is not logged
      await app.services.engine.labelRules({ subject, org_id: 'org_main', resource: { kind: 'connectors', uid } });
      await app.services.engine.explainLabelRules({ subject: { ...subject, id: admin.id }, org_id: 'org_main', resource: { kind: 'connectors', uid } });
      const logged = (entries() as unknown as LabelRulesLogEntry[]).filter((entry) => entry.path === 'authz/label_rules');
      expect(logged).to.have.length(1);
      expect(logged[0]!.input).to.deep.equal({ subject, org_id: 'org_main', resource: { kind: 'connectors', uid } });
      expect(logged[0]!.result).to.deep.equal({ mode: 'applied', selectors: ['{namespace="checkout"}'] });
      expect(logged[0]!.decision_id).to.match(UUID);
    });

    it('never holds a password, a token, a session or connector secrets', async () => {
      const password = 'a-password-only-the-login-knows-42';
      const user = await createUser(app, { role: 'Admin', password });
      const login = await passwordLogin(app, user.login, password);
      expect(login.status).to.equal(200);
      const sessionCookie = `svc_session=${login.cookies.svc_session}`;
      const newPassword = 'a-new-password-nobody-else-knows-43';
      const changed = await app.request('PUT', '/api/user/password', { cookie: sessionCookie, body: { oldPassword: password, newPassword } });
      expect(changed.status, JSON.stringify(changed.body)).to.be.lessThan(300);

      const token = await api(app, admin).post('/api/user/access-tokens', { name: 'decision-log' });
      expect(token.status).to.equal(201);
      expect((await app.request('GET', '/api/teams/search', { token: token.body.key })).status).to.equal(200);
      const secret = 'connector-secret-value-0123456789';
      const connector = await api(app, admin).post('/api/connectors', {
        name: 'decision-log',
        type: 'tsmetrics',
        url: 'http://prometheus.example:9090',
        jsonData: { basicAuthUser: 'ada' },
        secureJsonData: { basicAuthPassword: secret },
      });
      expect(connector.status).to.equal(201);

      const text = fs.readFileSync(file, 'utf8');
      expect(entries().some((entry) => entry.input.action === 'connectors:create')).to.equal(true);
      for (const leak of [
        password,
        newPassword,
        token.body.key,
        login.cookies.svc_session,
        secret,
        'secureJsonData',
        'basicAuthPassword',
        app.services.config.jwtSecret,
      ]) {
        expect(text).to.not.include(leak);
      }
    });
  });

  describe('DecisionLog', () => {
    const input: AuthzInput = { subject: { id: 'usr_1', kind: 'user', server_admin: false, disabled: false }, org_id: 'org_main', action: 'teams:read' };
    const build = { opaVersion: 'v1.22.0', sourceHash: 'abc' };

    it('logs the share of decisions DECISION_LOG_SAMPLE says, at random', () => {
      const lines: string[] = [];
      let draw = 0;
      const draws = [0.1, 0.6, 0.4, 0.9];
      const log = new DecisionLog(
        { target: 'stdout', path: '', sample: 0.5, url: null, bufferSize: 1 },
        build,
        { write: (line: string) => lines.push(line) },
        () => draws[draw++]!,
      );
      for (let i = 0; i < draws.length; i++) log.record(input, { allow: true, reasons: [] }, 1, new Date(0));
      expect(lines).to.have.length(2);
    });

    it('copies only the fields of the policy input: anything else passed along is left out', () => {
      const lines: string[] = [];
      const log = new DecisionLog({ target: 'stdout', path: '', sample: 1, url: null, bufferSize: 1 }, build, { write: (line: string) => lines.push(line) });
      const padded = {
        ...input,
        token: 'svc_pat_secret',
        subject: { ...input.subject, password: 'hunter2' },
        resource: { kind: 'connectors', uid: 'c1', secureJsonData: { x: 'y' } },
      } as unknown as AuthzInput;
      log.record(padded, { allow: true, reasons: [] }, 1, new Date(0));
      const entry = JSON.parse(lines[0]!) as DecisionLogEntry;
      expect(entry.input).to.deep.equal({ ...input, resource: { kind: 'connectors', uid: 'c1' } });
    });
  });

  describe('configuration', () => {
    const secrets = { SECRET_KEY: 's'.repeat(32), JWT_SECRET: 'j'.repeat(32) };

    it('is off unless DECISION_LOG is file, stdout or http; the file defaults under DATA_DIR', () => {
      expect(loadConfig({ ...secrets }).decisionLog).to.equal(null);
      expect(loadConfig({ ...secrets, DATA_DIR: '/tmp/gh', DECISION_LOG: 'file' }).decisionLog).to.deep.equal({
        target: 'file',
        path: '/tmp/gh/decisions.log',
        sample: 1,
        url: null,
        bufferSize: 10_000,
      });
      expect(loadConfig({ ...secrets, DECISION_LOG: 'stdout', DECISION_LOG_SAMPLE: '0.25' }).decisionLog).to.include({ target: 'stdout', sample: 0.25 });
      expect(loadConfig({ ...secrets, DECISION_LOG: 'stdout', DECISION_LOG_SAMPLE: '0' }).decisionLog).to.include({ sample: 0 });
    });

    it('stops startup when the file cannot be written', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-decisions-'));
      const blocker = path.join(dir, 'a-file');
      fs.writeFileSync(blocker, '');
      const target = path.join(blocker, 'decisions.log');
      expect(() => DecisionLog.open({ target: 'file', path: target, sample: 1, url: null, bufferSize: 1 }, { opaVersion: null, sourceHash: null })).to.throw(
        ConfigError,
        `DECISION_LOG_PATH ${target} cannot be written (EEXIST)`,
      );
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('refuses an unknown destination or a share outside 0..1', () => {
      expect(() => loadConfig({ ...secrets, DECISION_LOG: 'kafka' })).to.throw(ConfigError, 'DECISION_LOG must be file, stdout or http, got "kafka"');
      expect(() => loadConfig({ ...secrets, DECISION_LOG: 'http' })).to.throw(ConfigError, 'DECISION_LOG_URL is required when DECISION_LOG=http');
      for (const sample of ['2', '-0.5', 'half', '1e-3']) {
        expect(() => loadConfig({ ...secrets, DECISION_LOG: 'file', DECISION_LOG_SAMPLE: sample }), sample).to.throw(
          ConfigError,
          `DECISION_LOG_SAMPLE must be a number from 0 to 1, got "${sample}"`,
        );
      }
    });
  });
});
