/**
 * Ops plans on a kubernetes connector against a real kube-apiserver (test/helpers/kubernetes.ts,
 * one cluster for the file, seeded once): proposing (allowlists, dry runs that change nothing),
 * approval by another user with write on the connector (the author is refused by the policy),
 * each step kind changing the cluster as kubectl would, partial failure, expiry on the test
 * clock, reject and cancel, reads and lists filtered by connector grants, the race of parallel
 * approvals, the audit trail, the chat tool, and plans going with their connector and org.
 * Without the kube-apiserver binary the suite is skipped, except in CI.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addMember, api, auditEntries, refusalEntries, createOrg, createUser, DENIED, expectAuditEntry, type TestUser } from './helpers/factories.ts';
import { SEED, seedCluster, startKubernetes, type RunningKubernetes } from './helpers/kubernetes.ts';
import { requirePeer } from './helpers/peers.ts';

const TTL_MS = 60_000;
const SHOP = SEED.namespaces.shop;
const AUTHOR_MAY_NOT_APPROVE = "permission denied: a plan's author may not approve it; another user must";
const ONLY_AUTHOR_CANCELS = "permission denied: only a plan's author may cancel it";

describe('ops plans on a real kube-apiserver', function () {
  this.timeout(60_000);
  let kube: RunningKubernetes;
  let app: TestApp;
  /** Admin of the org: makes the connectors. */
  let admin: TestUser;
  /** Viewer with an Edit grant on the ops connector: proposes plans. */
  let author: TestUser;
  /** Viewer with an Edit grant on the ops connector: approves the author's plans. */
  let approver: TestUser;
  /** Viewer with a View grant on the ops connector: may read and propose, not approve. */
  let reader: TestUser;
  /** Viewer without a grant: the ops connector (which has grants) is not theirs; the open one is. */
  let viewer: TestUser;
  /** Org role None: no connector at all. */
  let none: TestUser;
  /** The connector with grants, and one without (every member may query it). */
  let ops: string;
  let open: string;

  before(async function () {
    requirePeer(this, 'kubernetes');
    this.timeout(120_000);
    kube = await startKubernetes();
    await seedCluster(kube);
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8', OPS_PLAN_TTL_MS: String(TTL_MS) } });
    admin = await createUser(app, { role: 'Admin' });
    author = await createUser(app, { role: 'Viewer' });
    approver = await createUser(app, { role: 'Viewer' });
    reader = await createUser(app, { role: 'Viewer' });
    viewer = await createUser(app, { role: 'Viewer' });
    none = await createUser(app, { role: 'None' });
    ops = await connector(admin, 'ops');
    open = await connector(admin, 'open');
    const grants = await as(admin).post(`/api/connectors/${ops}/permissions`, {
      items: [
        { userId: author.id, permission: 2 },
        { userId: approver.id, permission: 2 },
        { userId: reader.id, permission: 1 },
      ],
    });
    expect(grants.status, JSON.stringify(grants.body)).to.equal(200);
  });
  after(async function () {
    this.timeout(30_000);
    await app?.close();
    await kube?.stop();
  });

  const as = (who: TestUser, orgId?: string) => api(app, who, orgId);
  async function connector(
    who: TestUser,
    name: string,
    orgId?: string,
    kinds = ['deployments', 'replicasets', 'pods', 'nodes', 'statefulsets'],
  ): Promise<string> {
    const res = await as(who, orgId).post('/api/connectors', {
      name,
      type: 'kubernetes',
      url: kube.url,
      jsonData: { namespaces: [SHOP], kinds, tlsAuthWithCACert: true },
      secureJsonData: { bearerToken: kube.tokens.gatehouse, tlsCACert: kube.ca },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  const plans = (uid: string) => `/api/connectors/${uid}/ops/plans`;
  const plan = (title: string, steps: unknown[]) => ({ title, reason: `because ${title}`, steps });
  async function propose(steps: unknown[], who: TestUser = author, uid = ops, title = 'a plan') {
    const res = await as(who).post(plans(uid), plan(title, steps));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }
  const kubeGet = async (path: string) => {
    const res = await kube.api('GET', path);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };
  const deployment = (name: string) => kubeGet(`/apis/apps/v1/namespaces/${SHOP}/deployments/${name}`);
  const node = () => kubeGet(`/api/v1/nodes/${SEED.node}`);

  describe('POST /api/connectors/:uid/ops/plans', () => {
    it('401; 403 for a member without query on the connector (a Viewer without its grant, role None)', async () => {
      const body = plan('scale', [{ kind: 'scale', target: 'deployment/web', replicas: 3 }]);
      expect((await app.request('POST', plans(ops), { body })).status).to.equal(401);
      for (const who of [viewer, none]) {
        const res = await as(who).post(plans(ops), body);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
      }
      expect(await app.count('ops_plans')).to.equal(0);
    });

    it('201 pending with a dry run of each step attached; nothing changes in the cluster; audited', async () => {
      const steps = [
        { kind: 'scale', target: 'deployment/web', replicas: 5 },
        { kind: 'rollout-restart', target: 'deploy/api' },
        { kind: 'rollout-undo', target: 'deployments.apps/web' },
        { kind: 'cordon', target: `node/${SEED.node}` },
        { kind: 'delete-pod', target: `pod/${SEED.pod}`, namespace: SHOP },
        { kind: 'apply-patch', target: 'deployment/api', patch: { metadata: { labels: { tier: 'backend' } } } },
      ];
      const before = { web: await deployment('web'), api: await deployment('api'), node: await node() };
      const res = await as(reader).post(plans(ops), { title: '  Roll back web  ', reason: ' checkout errors since 2.0 ', steps });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const created = res.body;
      expect(created).to.deep.include({
        connectorUid: ops,
        title: 'Roll back web',
        reason: 'checkout errors since 2.0',
        state: 'pending',
        createdBy: reader.id,
        created: app.clock.now(),
        expiresAt: app.clock.now() + TTL_MS,
        decidedBy: null,
        decided: null,
        rejectionReason: null,
        finished: null,
        failedStep: null,
      });
      expect(created.steps.map((step: { target: string; namespace: string | null }) => [step.target, step.namespace])).to.deep.equal([
        ['deployments/web', SHOP],
        ['deployments/api', SHOP],
        ['deployments/web', SHOP],
        [`nodes/${SEED.node}`, null],
        [`pods/${SEED.pod}`, SHOP],
        ['deployments/api', SHOP],
      ]);
      for (const step of created.steps) {
        expect(step.dryRun.ok, step.dryRun.message).to.equal(true);
        expect(step.outcome).to.equal(null);
      }
      expect(created.steps[0].dryRun.message).to.equal(`the cluster accepts it (dry run): scaled deployments/web in ${SHOP} to 5 replicas`);
      expect(created.steps[2].dryRun.message).to.equal(`the cluster accepts it (dry run): rolled deployments/web in ${SHOP} back to revision 1`);

      // the dry runs stored nothing
      const after = { web: await deployment('web'), api: await deployment('api'), node: await node() };
      for (const key of ['web', 'api', 'node'] as const) {
        expect(after[key].metadata.resourceVersion, key).to.equal(before[key].metadata.resourceVersion);
      }
      expect((await kube.api('GET', `/api/v1/namespaces/${SHOP}/pods/${SEED.pod}`)).status).to.equal(200);

      await expectAuditEntry(
        app,
        { action: 'ops_plan.created', target_id: created.id },
        {
          actor_id: reader.id,
          target_type: 'ops_plan',
          target_name: 'Roll back web',
          metadata: {
            connectorUid: ops,
            steps: 6,
            kinds: ['scale', 'rollout-restart', 'rollout-undo', 'cordon', 'delete-pod', 'apply-patch'],
            dryRunFailures: 0,
            expiresAt: app.clock.now() + TTL_MS,
          },
        },
        1,
      );
      const read = await as(reader).get(`/api/ops/plans/${created.id}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.deep.equal(created);
    });

    it('a failed dry run is attached to its step and the plan is still proposed', async () => {
      const created = await propose([
        { kind: 'scale', target: 'deployment/web', replicas: 2 },
        { kind: 'scale', target: 'deployment/missing', replicas: 1 },
      ]);
      expect(created.state).to.equal('pending');
      expect(created.steps[0].dryRun.ok).to.equal(true);
      expect(created.steps[1].dryRun.ok).to.equal(false);
      expect(created.steps[1].dryRun.message).to.match(/^the cluster has no such object: .*missing.* not found$/);
      const [audited] = await auditEntries(app, { action: 'ops_plan.created', target_id: created.id });
      expect(audited!.metadata).to.include({ steps: 2, dryRunFailures: 1 });
    });

    const refusals: Array<[string, unknown, RegExp | string]> = [
      ['a scale without replicas', [{ kind: 'scale', target: 'deployment/web' }], 'body.steps.0.replicas is required for scale'],
      ['a field the step does not use', [{ kind: 'cordon', target: 'node/node-1', replicas: 1 }], 'body.steps.0.replicas is not used by cordon'],
      ['a target without a kind', [{ kind: 'delete-pod', target: 'web-0' }], 'body.steps.0.target must be <kind>/<name>, as deployment/web'],
      [
        'a kind the step does not act on',
        [{ kind: 'scale', target: 'pod/web-0', replicas: 1 }],
        'body.steps.0.target: scale acts on deployments or statefulsets or replicasets, not pods',
      ],
      ['an unknown step kind', [{ kind: 'drain', target: 'node/node-1' }], /^body\.steps\.0\.kind must be equal to one of the allowed values/],
      [
        'a kind outside the allowlist',
        [
          { kind: 'scale', target: 'deployment/web', replicas: 1 },
          { kind: 'apply-patch', target: 'configmap/settings', patch: { data: { LOG_LEVEL: 'debug' } } },
        ],
        'body.steps.1.target: configmaps are not allowlisted on this connector; it allows deployments, replicasets, pods, nodes, statefulsets',
      ],
      [
        'a daemonset restart, daemonsets not allowlisted',
        [{ kind: 'rollout-restart', target: 'ds/agent' }],
        /^body\.steps\.0\.target: daemonsets are not allowlisted/,
      ],
      [
        'a secret',
        [{ kind: 'apply-patch', target: 'secret/db-password', patch: { data: {} } }],
        'body.steps.0.target: secrets are never readable through an ops connector',
      ],
      [
        'a namespace outside the allowlist',
        [{ kind: 'scale', target: 'deployment/web', namespace: 'internal', replicas: 0 }],
        `body.steps.0.namespace: namespace internal is not allowlisted on this connector; it allows ${SHOP}`,
      ],
      [
        'a namespace on a node',
        [{ kind: 'cordon', target: 'node/node-1', namespace: SHOP }],
        'body.steps.0.namespace: nodes are cluster-wide and take no namespace',
      ],
      ['no step', [], 'body.steps must NOT have fewer than 1 items'],
      ['21 steps', Array.from({ length: 21 }, () => ({ kind: 'cordon', target: 'node/node-1' })), 'body.steps must NOT have more than 20 items'],
      ['too many replicas', [{ kind: 'scale', target: 'deployment/web', replicas: 1001 }], 'body.steps.0.replicas must be <= 1000'],
      [
        'a large patch',
        [{ kind: 'apply-patch', target: 'deployment/web', patch: { metadata: { annotations: { big: 'x'.repeat(17_000) } } } }],
        'body.steps.0.patch is larger than 16384 bytes',
      ],
    ];
    for (const [what, steps, message] of refusals) {
      it(`400 for ${what}, and no plan is stored`, async () => {
        const count = await app.count('ops_plans');
        const res = await as(author).post(plans(ops), plan('refused', steps as unknown[]));
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        if (typeof message === 'string') expect(res.body.message).to.equal(message);
        else expect(res.body.message).to.match(message);
        expect(await app.count('ops_plans')).to.equal(count);
      });
    }

    it('400 for a blank title or reason; 400 on a connector of another type; 404 on an unknown connector', async () => {
      const steps = [{ kind: 'cordon', target: 'node/node-1' }];
      expect((await as(author).post(plans(ops), { title: '  ', reason: 'r', steps })).body.message).to.equal('body.title must not be blank');
      expect((await as(author).post(plans(ops), { title: 't', reason: ' ', steps })).body.message).to.equal('body.reason must not be blank');
      const changes = await as(admin).post('/api/connectors', { name: 'deploys', type: 'changes' });
      const other = await as(admin).post(plans(changes.body.uid), plan('x', steps));
      expect(other.status).to.equal(400);
      expect(other.body.message).to.equal(`connector ${changes.body.uid} is of type changes: only a kubernetes connector runs ops reads and plans`);
      expect((await as(admin).post(plans('nope'), plan('x', steps))).status).to.equal(404);
    });
  });

  describe('POST /api/ops/plans/:id/approve', () => {
    it('401; 403 for a reader (query, no write); the author is refused with the rule, and the plan stays pending', async () => {
      const proposed = await propose([{ kind: 'scale', target: 'deployment/web', replicas: 4 }]);
      const approve = `/api/ops/plans/${proposed.id}/approve`;
      expect((await app.request('POST', approve)).status).to.equal(401);
      for (const who of [reader, viewer, none]) {
        const res = await as(who).post(approve);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
      }
      const own = await as(author).post(approve);
      expect(own.status).to.equal(403);
      expect(own.body).to.deep.equal({ message: AUTHOR_MAY_NOT_APPROVE });
      expect((await refusalEntries(app, 'connectors:write', { actor_id: author.id })).at(-1)).to.include({ target_id: ops });
      // an admin (write on every connector) is refused its own plan too
      const admins = await propose([{ kind: 'scale', target: 'deployment/web', replicas: 4 }], admin);
      expect((await as(admin).post(`/api/ops/plans/${admins.id}/approve`)).body).to.deep.equal({ message: AUTHOR_MAY_NOT_APPROVE });
      expect((await as(author).get(`/api/ops/plans/${proposed.id}`)).body.state).to.equal('pending');
      expect((await deployment('web')).spec.replicas).to.equal(2);
    });

    it("another user with an Edit grant approves: every step kind runs in order and changes the cluster as kubectl's would", async () => {
      const proposed = await propose([
        { kind: 'scale', target: 'deployment/web', replicas: 3 },
        { kind: 'rollout-restart', target: 'deployment/api' },
        { kind: 'cordon', target: `node/${SEED.node}` },
        { kind: 'delete-pod', target: `pod/${SEED.pod}` },
        { kind: 'apply-patch', target: 'deployment/api', patch: { metadata: { labels: { tier: 'backend' } } } },
        { kind: 'rollout-undo', target: 'deployment/web' },
      ]);
      app.clock.advance(1000);
      const res = await as(approver).post(`/api/ops/plans/${proposed.id}/approve`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ state: 'succeeded', decidedBy: approver.id, decided: app.clock.now(), finished: app.clock.now(), failedStep: null });
      const restartedAt = new Date(app.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
      expect(res.body.steps.map((step: { outcome: unknown }) => step.outcome)).to.deep.equal(
        [
          `scaled deployments/web in ${SHOP} to 3 replicas`,
          `restarted deployments/api in ${SHOP} (kubectl.kubernetes.io/restartedAt ${restartedAt})`,
          `cordoned nodes/${SEED.node}`,
          `deleted pods/${SEED.pod} in ${SHOP}`,
          `patched deployments/api in ${SHOP}`,
          `rolled deployments/web in ${SHOP} back to revision 1`,
        ].map((message) => ({ status: 'succeeded', message, at: app.clock.now() })),
      );

      const web = await deployment('web');
      expect(web.spec.replicas).to.equal(3);
      expect(web.spec.template.spec.containers[0].image).to.equal(SEED.images.previous);
      expect(web.spec.template.metadata.labels).to.deep.equal({ app: 'web' });
      const api = await deployment('api');
      expect(api.spec.template.metadata.annotations).to.deep.equal({ 'kubectl.kubernetes.io/restartedAt': restartedAt });
      expect(api.metadata.labels).to.deep.equal({ app: 'api', tier: 'backend' });
      expect((await node()).spec.unschedulable).to.equal(true);
      expect((await kube.api('GET', `/api/v1/namespaces/${SHOP}/pods/${SEED.pod}`)).status).to.equal(404);

      await expectAuditEntry(
        app,
        { action: 'ops_plan.approved', target_id: proposed.id },
        { actor_id: approver.id, metadata: { connectorUid: ops, steps: 6 } },
        1,
      );
      await expectAuditEntry(
        app,
        { action: 'ops_plan.succeeded', target_id: proposed.id },
        { actor_id: approver.id, target_type: 'ops_plan', metadata: { connectorUid: ops, steps: 6, succeededSteps: 6 } },
        1,
      );

      const again = await as(approver).post(`/api/ops/plans/${proposed.id}/approve`);
      expect(again.status).to.equal(409);
      expect(again.body.message).to.equal(`plan ${proposed.id} is succeeded: only a pending plan can be approved`);
    });

    it('stops at the first failure: earlier steps succeeded, the failed one says why, the rest are skipped; the plan failed', async () => {
      const proposed = await propose([
        { kind: 'scale', target: 'deployment/api', replicas: 2 },
        { kind: 'scale', target: 'deployment/missing', replicas: 1 },
        { kind: 'uncordon', target: `node/${SEED.node}` },
      ]);
      const res = await as(approver).post(`/api/ops/plans/${proposed.id}/approve`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ state: 'failed', failedStep: 1 });
      const [first, second, third] = res.body.steps.map((step: { outcome: { status: string; message: string } }) => step.outcome);
      expect(first).to.include({ status: 'succeeded', message: `scaled deployments/api in ${SHOP} to 2 replicas` });
      expect(second.status).to.equal('failed');
      expect(second.message).to.match(/^the cluster has no such object: .*missing.* not found$/);
      expect(third).to.include({ status: 'skipped', message: 'not run: step 1 failed' });
      expect((await deployment('api')).spec.replicas).to.equal(2);
      expect((await node()).spec.unschedulable, 'the uncordon was skipped').to.equal(true);
      await expectAuditEntry(
        app,
        { action: 'ops_plan.failed', target_id: proposed.id },
        { actor_id: approver.id, metadata: { connectorUid: ops, steps: 3, succeededSteps: 1, failedStep: 1, failedKind: 'scale' } },
        1,
      );
      expect(await auditEntries(app, { action: 'ops_plan.succeeded', target_id: proposed.id })).to.have.length(0);
    });

    it('a plan uncordons the node again, and rolls web forward to revision 2 by its number', async () => {
      const proposed = await propose([
        { kind: 'uncordon', target: `node/${SEED.node}` },
        { kind: 'rollout-undo', target: 'deployment/web', toRevision: 2 },
      ]);
      const res = await as(approver).post(`/api/ops/plans/${proposed.id}/approve`);
      expect(res.body.state, JSON.stringify(res.body)).to.equal('succeeded');
      expect((await node()).spec.unschedulable ?? false).to.equal(false);
      expect((await deployment('web')).spec.template.spec.containers[0].image).to.equal(SEED.images.current);
    });

    it('20 approvals at once: exactly one runs the plan, the others are 409', async () => {
      const proposed = await propose([{ kind: 'scale', target: 'deployment/api', replicas: 1 }]);
      const answers = await Promise.all(Array.from({ length: 20 }, () => as(approver).post(`/api/ops/plans/${proposed.id}/approve`)));
      expect(answers.map((res) => res.status).sort()).to.deep.equal([200, ...Array<number>(19).fill(409)]);
      for (const res of answers.filter((answer) => answer.status === 409)) {
        expect(res.body.message).to.match(new RegExp(`^plan ${proposed.id} is (approved|succeeded): only a pending plan can be approved$`));
      }
      await expectAuditEntry(app, { action: 'ops_plan.approved', target_id: proposed.id }, { actor_id: approver.id }, 1);
      await expectAuditEntry(app, { action: 'ops_plan.succeeded', target_id: proposed.id }, { actor_id: approver.id }, 1);
      expect((await deployment('api')).spec.replicas).to.equal(1);
    });

    it('a step no longer allowlisted when the plan is approved fails it before anything runs', async () => {
      const uid = await connector(admin, 'narrowed');
      const proposed = await propose(
        [
          { kind: 'scale', target: 'deployment/api', replicas: 3 },
          { kind: 'cordon', target: `node/${SEED.node}` },
        ],
        author,
        uid,
      );
      const current = await as(admin).get(`/api/connectors/${uid}`);
      const narrowed = await as(admin).put(`/api/connectors/${uid}`, { jsonData: { ...current.body.jsonData, kinds: ['deployments'] } });
      expect(narrowed.status, JSON.stringify(narrowed.body)).to.equal(200);
      const res = await as(admin).post(`/api/ops/plans/${proposed.id}/approve`);
      expect(res.body).to.deep.include({ state: 'failed', failedStep: 1 });
      expect(res.body.steps[0].outcome).to.include({ status: 'skipped', message: 'not run: step 1 is no longer allowed' });
      expect(res.body.steps[1].outcome.message).to.equal(
        'no longer allowed on the connector: steps.1.target: nodes are not allowlisted on this connector; it allows deployments',
      );
      expect((await deployment('api')).spec.replicas).to.equal(1);
    });
  });

  describe('expiry', () => {
    it('an approval after OPS_PLAN_TTL_MS is 409 and expires the plan, audited once as the system', async () => {
      const proposed = await propose([{ kind: 'scale', target: 'deployment/api', replicas: 5 }]);
      app.clock.advance(TTL_MS);
      const res = await as(approver).post(`/api/ops/plans/${proposed.id}/approve`);
      expect(res.status).to.equal(409);
      expect(res.body.message).to.equal(`plan ${proposed.id} expired at ${new Date(proposed.expiresAt).toISOString()}`);
      const read = await as(author).get(`/api/ops/plans/${proposed.id}`);
      expect(read.body).to.deep.include({ state: 'expired', decidedBy: null, decided: app.clock.now() });
      for (const action of ['reject', 'cancel']) {
        const refused = await as(author).post(`/api/ops/plans/${proposed.id}/${action}`, {});
        expect(refused.status).to.equal(409);
        expect(refused.body.message).to.equal(`plan ${proposed.id} expired at ${new Date(proposed.expiresAt).toISOString()}`);
      }
      await expectAuditEntry(
        app,
        { action: 'ops_plan.expired', target_id: proposed.id },
        { actor_type: 'system', actor_id: null, metadata: { connectorUid: ops, expiresAt: proposed.expiresAt } },
        1,
      );
      expect((await deployment('api')).spec.replicas).to.equal(1);
    });

    it('a list expires the pending plans past their time, each audited once; a plan within its time stays pending', async () => {
      const due = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }]);
      app.clock.advance(TTL_MS / 2);
      const fresh = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }]);
      app.clock.advance(TTL_MS / 2);
      for (let i = 0; i < 2; i++) {
        const listed = await as(author).get(`/api/ops/plans?connectorUid=${ops}&perpage=1000`);
        const states = Object.fromEntries(listed.body.plans.map((p: { id: string; state: string }) => [p.id, p.state]));
        expect(states[due.id]).to.equal('expired');
        expect(states[fresh.id]).to.equal('pending');
      }
      await expectAuditEntry(app, { action: 'ops_plan.expired', target_id: due.id }, { actor_type: 'system' }, 1);
      expect(await auditEntries(app, { action: 'ops_plan.expired', target_id: fresh.id })).to.have.length(0);
    });
  });

  describe('reject and cancel', () => {
    it('reject: 401; 403 without write; any writer, the author too, with a reason; then nothing else', async () => {
      const proposed = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }]);
      const reject = `/api/ops/plans/${proposed.id}/reject`;
      expect((await app.request('POST', reject, { body: {} })).status).to.equal(401);
      for (const who of [reader, viewer, none]) {
        const res = await as(who).post(reject, {});
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
      }
      const res = await as(author).post(reject, { reason: '  not during the sale  ' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ state: 'rejected', decidedBy: author.id, decided: app.clock.now(), rejectionReason: 'not during the sale' });
      await expectAuditEntry(
        app,
        { action: 'ops_plan.rejected', target_id: proposed.id },
        { actor_id: author.id, metadata: { connectorUid: ops, steps: 1 } },
        1,
      );
      for (const [action, who, verb] of [
        ['approve', approver, 'approved'],
        ['reject', approver, 'rejected'],
        ['cancel', author, 'cancelled'],
      ] as const) {
        const refused = await as(who).post(`/api/ops/plans/${proposed.id}/${action}`, {});
        expect(refused.status).to.equal(409);
        expect(refused.body.message).to.equal(`plan ${proposed.id} is rejected: only a pending plan can be ${verb}`);
      }
      expect((await node()).spec.unschedulable ?? false).to.equal(false);
      // the reason is optional, and so is the body
      const another = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }]);
      const bare = await app.request('POST', `/api/ops/plans/${another.id}/reject`, { cookie: approver.cookie });
      expect(bare.status, JSON.stringify(bare.body)).to.equal(200);
      expect(bare.body).to.deep.include({ state: 'rejected', rejectionReason: null });
    });

    it('reject without a reason keeps none', async () => {
      const proposed = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }]);
      const res = await as(approver).post(`/api/ops/plans/${proposed.id}/reject`, {});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ state: 'rejected', rejectionReason: null });
    });

    it('cancel: 401; only the author, whoever else asks (an admin, an approver) is refused with the rule', async () => {
      const proposed = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }]);
      const cancel = `/api/ops/plans/${proposed.id}/cancel`;
      expect((await app.request('POST', cancel)).status).to.equal(401);
      for (const who of [admin, approver, reader]) {
        const res = await as(who).post(cancel);
        expect(res.status).to.equal(403);
        expect(res.body).to.deep.equal({ message: ONLY_AUTHOR_CANCELS });
      }
      expect((await as(viewer).post(cancel)).body.message).to.match(DENIED);
      const res = await as(author).post(cancel);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ state: 'cancelled', decidedBy: author.id });
      await expectAuditEntry(app, { action: 'ops_plan.cancelled', target_id: proposed.id }, { actor_id: author.id }, 1);
      expect((await as(approver).post(`/api/ops/plans/${proposed.id}/approve`)).body.message).to.equal(
        `plan ${proposed.id} is cancelled: only a pending plan can be approved`,
      );
    });
  });

  describe('GET /api/ops/plans and /api/ops/plans/:id', () => {
    let onOps: { id: string };
    let onOpen: { id: string };
    before(async () => {
      onOps = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }], author, ops, 'on ops');
      onOpen = await propose([{ kind: 'cordon', target: `node/${SEED.node}` }], viewer, open, 'on open');
    });

    it('a plan: 401; 403 without query on its connector; 404 when unknown to a caller who may query some connector', async () => {
      expect((await app.request('GET', `/api/ops/plans/${onOps.id}`)).status).to.equal(401);
      for (const who of [viewer, none]) expect((await as(who).get(`/api/ops/plans/${onOps.id}`)).status).to.equal(403);
      expect((await as(viewer).get(`/api/ops/plans/${onOpen.id}`)).status).to.equal(200);
      expect((await as(admin).get('/api/ops/plans/nope')).status).to.equal(404);
      // who may query no connector learns nothing of which plans exist
      expect((await as(none).get('/api/ops/plans/nope')).status).to.equal(403);
    });

    it('the list: 401; 403 for role None; only plans on connectors the caller may query; by state and connector; paged', async () => {
      expect((await app.request('GET', '/api/ops/plans')).status).to.equal(401);
      expect((await as(none).get('/api/ops/plans')).status).to.equal(403);
      const ids = async (who: TestUser, query = '') => {
        const res = await as(who).get(`/api/ops/plans?perpage=1000${query}`);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.totalCount).to.equal(res.body.plans.length);
        return res.body.plans.map((p: { id: string }) => p.id) as string[];
      };
      const everything = await app.db('ops_plans').where('org_id', 'org_main').pluck('id');
      expect((await ids(admin)).sort()).to.deep.equal([...everything].sort());
      // the viewer: every connector but ops, which has grants (none for them)
      const mine = await ids(viewer);
      const unrestricted = await app.db('ops_plans').where('org_id', 'org_main').whereNot('connector_uid', ops).pluck('id');
      expect([...mine].sort()).to.deep.equal([...unrestricted].sort());
      expect(mine).to.include(onOpen.id);
      expect(await ids(viewer, `&connectorUid=${ops}`)).to.deep.equal([]);
      expect(await ids(reader, `&connectorUid=${ops}&state=pending`))
        .to.include(onOps.id)
        .and.not.include(onOpen.id);
      expect(await ids(reader, '&state=succeeded')).to.have.length(3);
      expect(await ids(reader, '&state=failed')).to.have.length(2);

      // newest first, paged
      const all = await ids(reader);
      const page = await as(reader).get('/api/ops/plans?perpage=2&page=2');
      expect(page.body).to.deep.include({ totalCount: all.length, page: 2, perPage: 2 });
      expect(page.body.plans.map((p: { id: string }) => p.id)).to.deep.equal(all.slice(2, 4));
      expect((await as(reader).get('/api/ops/plans?state=running')).status).to.equal(400);
    });
  });

  describe('another org, deletion', () => {
    it("a plan of another org is 404 to every route, and goes with its org; a connector's plans go with it", async () => {
      const orgId = await createOrg(app);
      const otherAdmin = await createUser(app, { orgId, role: 'Admin' });
      await addMember(app, orgId, admin.id, 'Admin');
      const theirs = await connector(otherAdmin, 'theirs', orgId);
      const res = await as(otherAdmin, orgId).post(plans(theirs), plan('theirs', [{ kind: 'cordon', target: `node/${SEED.node}` }]));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const foreign = res.body.id;
      expect((await as(admin).get(`/api/ops/plans/${foreign}`)).status).to.equal(404);
      for (const action of ['approve', 'reject', 'cancel']) expect((await as(admin).post(`/api/ops/plans/${foreign}/${action}`, {})).status).to.equal(404);
      expect((await as(admin).get('/api/ops/plans?perpage=1000')).body.plans.map((p: { id: string }) => p.id)).not.to.include(foreign);
      expect((await as(admin, orgId).get(`/api/ops/plans/${foreign}`)).status).to.equal(200);

      const gone = await connector(admin, 'gone');
      await propose([{ kind: 'cordon', target: `node/${SEED.node}` }], admin, gone);
      expect((await as(admin).delete(`/api/connectors/${gone}`)).status).to.equal(200);
      expect(await app.count('ops_plans', { connector_uid: gone })).to.equal(0);

      const serverAdmin = await createUser(app, { role: 'Admin', svcAdmin: true });
      expect((await as(serverAdmin).delete(`/api/orgs/${orgId}`)).status).to.equal(200);
      expect(await app.count('ops_plans', { org_id: orgId })).to.equal(0);
    });
  });

  describe('chat tool ops_plan_create', () => {
    const call = (who: TestUser, body: Record<string, unknown>) => as(who).post('/api/chat/tools/ops_plan_create', body);
    const args = { connector: 'ops', ...plan('from chat', [{ kind: 'scale', target: 'deployment/web', replicas: 2 }]) };

    it('the operator proposes a plan, pending and dry-run, authored by the caller; approval is no tool', async () => {
      const res = await call(reader, { agentType: 'operator', permissionMode: 'default', args });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.connector).to.deep.include({ uid: ops, name: 'ops', type: 'kubernetes', signalType: 'ops' });
      expect(res.body.plan).to.deep.include({ state: 'pending', createdBy: reader.id, title: 'from chat' });
      expect(res.body.plan.steps[0].dryRun.ok).to.equal(true);
      await expectAuditEntry(app, { action: 'ops_plan.created', target_id: res.body.plan.id }, { actor_id: reader.id });
      expect((await as(reader).post('/api/chat/tools/ops_plan_approve', { agentType: 'operator', permissionMode: 'default' })).status).to.equal(404);
    });

    it('refused: read_only mode, an agent type without the tool, a caller without query; bad steps are 400 naming body.args', async () => {
      const readOnly = await call(reader, { agentType: 'operator', permissionMode: 'read_only', args });
      expect(readOnly.status).to.equal(403);
      expect(readOnly.body.message).to.equal('chat: permission mode read_only forbids writes');
      const investigator = await call(reader, { agentType: 'investigator', permissionMode: 'default', args });
      expect(investigator.body.message).to.equal('chat: tool ops_plan_create is not allowed for agent type investigator');
      expect((await call(viewer, { agentType: 'operator', permissionMode: 'default', args })).body.message).to.match(DENIED);
      const outside = await call(reader, {
        agentType: 'operator',
        permissionMode: 'default',
        args: { ...args, steps: [{ kind: 'scale', target: 'deployment/web', namespace: 'internal', replicas: 1 }] },
      });
      expect(outside.status).to.equal(400);
      expect(outside.body.message).to.equal(`body.args.steps.0.namespace: namespace internal is not allowlisted on this connector; it allows ${SHOP}`);
    });
  });
});
