/**
 * Policy impact analysis as an auditor runs it: a candidate whose Rego takes folders:create away
 * from the Editor basic role, compiled with the pinned opa, is compared with the committed build
 * on the decision log and on a sweep of an org, from the CLI (exit 3, --json) and from
 * POST /api/access-control/policy-diff; the committed build compared with itself flips nothing.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { diffInWorker } from '../src/authz/policy-diff-isolated.ts';
import type { PolicyDiffReport, PolicyFlip } from '../src/authz/policy-diff.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, buildOrgWithPeople, createUser, type TestUser } from './helpers/factories.ts';
import { REPO_ROOT } from './helpers/opa.ts';
import { requirePeer } from './helpers/peers.ts';
import { runCli } from './helpers/cli.ts';

/** The Rego of the candidate: policies/authz, with every lookup of a role's permissions skipping the Editor's folders:create. */
function writeCandidateSources(dir: string): void {
  fs.cpSync(path.join(REPO_ROOT, 'policies/authz'), dir, { recursive: true });
  const file = path.join(dir, 'rbac/rbac.rego');
  let rego = fs.readFileSync(file, 'utf8');
  const edits: Array<[string, string]> = [
    ['\tscoped := index[role][action]\n', '\tscoped := index[role][action]\n\tnot _removed(role, action)\n'],
    ['\tscoped := permissions[held]\n', '\tscoped := permissions[held]\n\tnot _removed(role, held)\n'],
    ['\tcount(permissions[held]) > 0\n', '\tcount(permissions[held]) > 0\n\tnot _removed(role, held)\n'],
  ];
  for (const [from, to] of edits) {
    expect(rego, `rbac.rego has no "${from.trim()}" to edit`).to.include(from);
    rego = rego.replaceAll(from, to);
  }
  rego +=
    '\n# the candidate: the Editor basic role no longer creates folders\n_removed(role, action) if {\n\trole == "basic:editor"\n\taction == "folders:create"\n}\n';
  fs.writeFileSync(file, rego);
}

const flipKey = (flip: PolicyFlip) =>
  `${flip.source} ${flip.direction} ${flip.principal.id} ${flip.action} ${flip.resource && 'uid' in flip.resource ? flip.resource.uid : JSON.stringify(flip.resource)}`;

describe('policy diff (impact analysis of a candidate policy build)', function () {
  // the candidate is compiled by opa, and each CLI run boots a TypeScript process of its own
  this.timeout(180_000);
  let app: TestApp;
  let tmp: string;
  let candidateDir: string;
  let candidateWasm: Buffer;
  let people: Awaited<ReturnType<typeof buildOrgWithPeople>>;
  let serverAdmin: TestUser;
  let plansUid: string;
  let draftsUid: string;

  before(async function () {
    requirePeer(this, 'opa');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-diff-test-'));
    app = await startTestApp({ env: { DECISION_LOG: 'file', DECISION_LOG_PATH: path.join(tmp, 'decisions.log') } });
    people = await buildOrgWithPeople(app);
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    // the admin creates a folder; the editor creates another (both logged), the viewer is refused one
    const plans = await api(app, people.admin).post('/api/folders', { title: 'Plans' });
    expect(plans.status).to.equal(201);
    plansUid = plans.body.uid;
    const drafts = await api(app, people.editor).post('/api/folders', { title: 'Drafts' });
    expect(drafts.status).to.equal(201);
    draftsUid = drafts.body.uid;
    expect((await api(app, people.viewer).post('/api/folders', { title: 'Nope' })).status).to.equal(403);

    candidateDir = path.join(tmp, 'candidate');
    writeCandidateSources(candidateDir);
    execFileSync('bash', [path.join(REPO_ROOT, 'tools/policy-build.sh'), candidateDir, path.join(tmp, 'candidate-build')], { stdio: 'ignore' });
    candidateWasm = fs.readFileSync(path.join(tmp, 'candidate-build/authz.wasm'));
  });

  after(async () => {
    await app?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const cli = (args: string[]) => runCli(app, ['policy-diff', ...args], { env: { DECISION_LOG: '' } });

  /**
   * What taking folders:create from basic:editor changes: the editor creating at the root (the log
   * and the sweep) and in the admin's folder (the sweep). Not in its own folder, where its creator's
   * Admin grant still gives it; not for the admin, whose basic:admin holds it too.
   */
  const expectedFlips = () =>
    [
      `decision-log allow-to-deny ${people.editor.id} folders:create general`,
      `sweep allow-to-deny ${people.editor.id} folders:create general`,
      `sweep allow-to-deny ${people.editor.id} folders:create ${plansUid}`,
    ].sort();

  describe('npm run cli -- policy-diff', () => {
    it('reports exactly the flips of the candidate from a Rego directory, with both reasons, and exits 3', async () => {
      const log = path.join(tmp, 'decisions.log');
      const result = await cli(['--candidate', candidateDir, '--decisions', log, '--org', people.orgId]);
      expect(result.code, result.stderr).to.equal(3);
      expect(result.stdout).to.match(/^decision log: \d+ distinct decisions compared of \d+ entries$/m);
      expect(result.stdout).to.match(new RegExp(`^sweep of org ${people.orgId}: (\\d+) of \\1 decisions compared$`, 'm'));
      expect(result.stdout).to.match(/^decisions compared: \d+ in \d+ ms; flips: allow -> deny 3, deny -> allow 0$/m);
      expect(result.stdout).to.include(`allow -> deny: user ${people.editor.id} folders:create on folders:uid:general in org ${people.orgId} (decision-log)`);
      expect(result.stdout).to.include('  current: allowed\n    - role basic:editor grants folders:create on folders:*');
      expect(result.stdout).to.include('  candidate: denied\n    - no role grants folders:create on folders:uid:general, folders:uid:*, folders:*, *');
    });

    it('--json prints the report, whose flips are exactly the expected ones', async () => {
      const result = await cli(['--candidate', candidateDir, '--decisions', path.join(tmp, 'decisions.log'), '--org', people.orgId, '--json']);
      expect(result.code, result.stderr).to.equal(3);
      const report = JSON.parse(result.stdout) as PolicyDiffReport;
      expect(report.flips.map(flipKey).sort()).to.deep.equal(expectedFlips());
      expect(report).to.include({ allowToDeny: 3, denyToAllow: 0, complete: true, flipsNotListed: 0 });
      expect(report.sweep).to.include({ orgId: people.orgId, cut: false });
      expect(report.sweep!.compared).to.equal(report.sweep!.size);
      expect(report.decisionLog!.entries).to.be.greaterThan(2);
      const flip = report.flips.find((each) => each.source === 'sweep' && each.resource && 'uid' in each.resource && each.resource.uid === plansUid)!;
      expect(flip.current.reasonDetails).to.deep.include({ kind: 'grant', role: 'basic:editor', action: 'folders:create', scope: 'folders:*' });
      expect(flip.candidate).to.deep.equal({
        allow: false,
        reasons: [`no role grants folders:create on folders:uid:${plansUid}, folders:uid:*, folders:*, *`],
        reasonDetails: [{ kind: 'missing', action: 'folders:create', scopes: [`folders:uid:${plansUid}`, 'folders:uid:*', 'folders:*', '*'] }],
      });
      expect(report.flips.map(flipKey)).not.to.include(`sweep allow-to-deny ${people.editor.id} folders:create ${draftsUid}`);
    });

    it('finds nothing when the candidate is the committed build (a .wasm), and exits 0', async () => {
      const result = await cli(['--candidate', path.join(REPO_ROOT, 'policies/build/authz.wasm'), '--org', people.orgId]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/^decisions compared: \d+ in \d+ ms; flips: allow -> deny 0, deny -> allow 0$/m);
    });

    it('says when --limit cut the sweep', async () => {
      const result = await cli(['--candidate', path.join(REPO_ROOT, 'policies/build/authz.wasm'), '--org', people.orgId, '--limit', '10']);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(
        new RegExp(`^sweep of org ${people.orgId}: 10 of \\d+ decisions compared \\(the sweep limit cut the sweep: \\d+ not evaluated\\)$`, 'm'),
      );
    });

    it('exits 2 with a clear message on bad arguments', async () => {
      const junk = path.join(tmp, 'junk.wasm');
      fs.writeFileSync(junk, 'not a module');
      const cases: Array<[string[], string]> = [
        [['--org', people.orgId], '--candidate <dir | file.wasm | bundle.tar.gz> is required'],
        [['--candidate', junk, '--org', people.orgId, '--limit', '0'], '--limit must be a whole number from 1 to 999999999, got "0"'],
        [['--candidate', junk, '--limit', '5'], '--limit bounds the sweep of --org <orgId>: give both'],
        [['--candidate', junk, '--org', people.orgId], `${junk} is not a policy build: neither a WebAssembly module nor a gzipped bundle (.tar.gz)`],
        [['--candidate', path.join(tmp, 'missing.wasm'), '--org', people.orgId], `cannot read --candidate ${path.join(tmp, 'missing.wasm')}: ENOENT`],
        [['--candidate', junk], 'nothing to compare: give --org <orgId> to sweep an org, or --decisions <file> (or DECISION_LOG=file)'],
      ];
      for (const [args, message] of cases) {
        const result = await cli(args);
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(2);
        expect(result.stderr.trim().split('\n').at(-1)).to.equal(`error: ${message}`);
      }
      const broken = path.join(tmp, 'broken');
      fs.mkdirSync(broken, { recursive: true });
      fs.writeFileSync(path.join(broken, 'authz.rego'), 'package authz\n\nthis is not rego\n');
      const result = await cli(['--candidate', broken, '--org', people.orgId]);
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stderr).to.match(new RegExp(`^error: the Rego in ${broken} does not build: .*rego_parse_error`, 'm'));
    });
  });

  describe('POST /api/access-control/policy-diff', () => {
    const diff = (user: TestUser | null, body: unknown) =>
      app.request('POST', '/api/access-control/policy-diff', { ...(user && { cookie: user.cookie }), body });

    it('compares an uploaded candidate on the decision log and the sweep, lists the flips, audited', async () => {
      const answer = await diff(serverAdmin, { candidate: candidateWasm.toString('base64'), orgId: people.orgId });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      const report = answer.body as PolicyDiffReport;
      expect(report.flips.map(flipKey).sort()).to.deep.equal(expectedFlips());
      expect(report).to.include({ allowToDeny: 3, denyToAllow: 0, complete: true });
      const [entry] = await auditEntries(app, { action: 'policy.diff_run' });
      expect(entry).to.deep.include({ actor_id: serverAdmin.id, org_id: people.orgId, target_type: 'policy-build', outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ compared: report.compared, allowToDeny: 3, denyToAllow: 0, complete: true });
    });

    it('takes an opa build bundle (.tar.gz) too, and the committed build flips nothing', async () => {
      const bundleDir = path.join(tmp, 'bundle');
      fs.mkdirSync(bundleDir, { recursive: true });
      fs.copyFileSync(path.join(REPO_ROOT, 'policies/build/authz.wasm'), path.join(bundleDir, 'policy.wasm'));
      execFileSync('tar', ['-czf', path.join(tmp, 'bundle.tar.gz'), '-C', bundleDir, 'policy.wasm']);
      const answer = await diff(serverAdmin, {
        candidate: fs.readFileSync(path.join(tmp, 'bundle.tar.gz')).toString('base64'),
        orgId: people.orgId,
        limit: 50,
      });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body).to.deep.include({ allowToDeny: 0, denyToAllow: 0, flips: [] });
      expect(answer.body.sweep).to.include({ compared: 50, cut: true });
    });

    it('is refused without a session (401) and to an org admin who is no server admin (403)', async () => {
      const body = { candidate: candidateWasm.toString('base64'), orgId: people.orgId };
      expect((await diff(null, body)).status).to.equal(401);
      const refused = await diff(people.admin, body);
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal('permission denied: you need policy.diff:run to do this');
    });

    it('refuses what is not a policy build, bad fields and an unknown org (400, 404)', async () => {
      const cases: Array<[unknown, number, string]> = [
        [
          { candidate: Buffer.from('hello').toString('base64'), orgId: people.orgId },
          400,
          'the candidate is not a policy build: neither a WebAssembly module nor a gzipped bundle (.tar.gz)',
        ],
        [
          { candidate: Buffer.from([0x1f, 0x8b, 1, 2, 3]).toString('base64'), orgId: people.orgId },
          400,
          'the candidate is not a policy build: the gzip data is corrupt',
        ],
        [
          { candidate: Buffer.from([0, 0x61, 0x73, 0x6d, 9, 9, 9, 9]).toString('base64'), orgId: people.orgId },
          400,
          'the candidate is not a policy build: the WebAssembly module does not compile',
        ],
        // an empty module compiles, but is no OPA policy: refused when the comparison's thread loads it
        [
          { candidate: Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]).toString('base64'), orgId: people.orgId },
          400,
          'the candidate is not a policy build: it does not load as an OPA policy',
        ],
        [{ candidate: 'not base64!', orgId: people.orgId }, 400, 'candidate must be base64'],
        [{ candidate: candidateWasm.toString('base64'), orgId: 'org_nowhere' }, 404, 'org org_nowhere not found'],
        [
          { candidate: candidateWasm.toString('base64'), decisionLog: false },
          400,
          'nothing to compare: name an orgId to sweep (the decision log is off, empty or not asked for)',
        ],
        [{ candidate: candidateWasm.toString('base64'), orgId: people.orgId, limit: 0 }, 400, ''],
        [{ orgId: people.orgId }, 400, ''],
      ];
      for (const [body, status, message] of cases) {
        const answer = await diff(serverAdmin, body);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
        expect(answer.body.message).to.be.a('string');
        if (message) expect(answer.body.message).to.include(message);
      }
    });

    it('stops the comparison thread of a candidate that does not finish within the bound and its grace, and refuses it', async () => {
      const document = await app.services.engine.document(people.orgId);
      const job = {
        currentWasm: fs.readFileSync(path.join(REPO_ROOT, 'policies/build/authz.wasm')),
        candidateWasm: candidateWasm,
        documents: [[people.orgId, document]] as Array<[string, typeof document]>,
        sweep: { document, subjects: [] },
        timeBoundMs: 0,
      };
      let refusal: Error | undefined;
      await diffInWorker(job, 0).catch((err: Error) => (refusal = err));
      expect(refusal?.message).to.equal('the candidate was stopped: it did not finish a decision within the time bound (0 ms)');
      // the same job with time to run answers its report
      expect((await diffInWorker({ ...job, timeBoundMs: 10_000 })).sweep).to.include({ orgId: people.orgId, compared: 0 });
    });

    it('refuses a candidate over the size bound, and a body over the body limit, with 413', async () => {
      const oversize = Buffer.alloc(600 * 1024, 1).toString('base64');
      const answer = await diff(serverAdmin, { candidate: oversize, orgId: people.orgId });
      expect(answer.status).to.equal(413);
      expect(answer.body.message).to.equal('the candidate is larger than 524288 bytes');
      const huge = await diff(serverAdmin, { candidate: Buffer.alloc(1024 * 1024, 1).toString('base64'), orgId: people.orgId });
      expect(huge.status).to.equal(413);
    });
  });
});
