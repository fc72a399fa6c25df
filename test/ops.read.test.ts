/**
 * The ops connector's settings, connectivity test and reads against a real kube-apiserver (built
 * by tools/kube-apiserver.sh, over Debian's etcd, started once for the file): the allowlists of
 * commands, kinds and namespaces (refusals name them), secrets never read, answers bounded, the
 * connector's token never shown, and the chat tool `ops_read`. Without the binaries the suite is
 * skipped, except in CI.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, buildOrg, createUser, DENIED, type TestUser } from './helpers/factories.ts';
import { SEED, seedCluster, serveMetricsApi, startKubeletDouble, startKubernetes, type RunningKubernetes } from './helpers/kubernetes.ts';
import { requirePeer } from './helpers/peers.ts';

const KINDS = ['pods', 'deployments', 'replicasets', 'events', 'nodes', 'namespaces', 'configmaps'];
const NAMESPACES = [SEED.namespaces.shop, SEED.namespaces.internal];

describe('ops connector: settings, connectivity and reads on a real kube-apiserver', function () {
  let app: TestApp;
  let kube: RunningKubernetes;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  /** Every body the service answered in this file: none may show the connector's token. */
  const shown: unknown[] = [];

  before(async function () {
    requirePeer(this, 'kubernetes');
    this.timeout(120_000);
    kube = await startKubernetes();
    await seedCluster(kube);
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    editor = await createUser(app, { role: 'Editor' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app?.close();
    await kube?.stop();
  });

  const as = (who: TestUser, orgId?: string) => {
    const calls = api(app, who, orgId);
    const record = (send: typeof calls.get) => async (path: string, body?: unknown) => {
      const res = await send(path, body);
      shown.push(res.body);
      return res;
    };
    return { get: record(calls.get), post: record(calls.post), put: record(calls.put) };
  };

  let names = 0;
  const settings = (overrides: Record<string, unknown> = {}) => ({
    name: `cluster-${++names}`,
    type: 'kubernetes',
    url: kube.url,
    jsonData: { namespaces: NAMESPACES, kinds: KINDS, tlsAuthWithCACert: true },
    secureJsonData: { bearerToken: kube.tokens.gatehouse, tlsCACert: kube.ca },
    ...overrides,
  });
  async function connector(overrides: Record<string, unknown> = {}, orgId?: string, owner = admin): Promise<string> {
    const res = await as(owner, orgId).post('/api/connectors', settings(overrides));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }
  let cluster: string;
  /** What the cluster's /version says (a build from the module without release ldflags says v0.0.0-master). */
  let version: string;
  before(async function () {
    if (!kube) this.skip();
    cluster = await connector();
    version = (await kube.api('GET', '/version')).body.gitVersion;
  });
  const read = (command: string, who: TestUser = viewer, uid = cluster) => as(who).post(`/api/connectors/${uid}/ops/read`, { command });

  describe('a kubernetes connector', () => {
    it('is created with signal ops; the token and CA are sealed and only named in secureJsonFields', async () => {
      const res = await as(admin).post('/api/connectors', settings({ name: 'ops-created' }));
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ type: 'kubernetes', signalType: 'ops', url: `${kube.url}/` });
      expect(res.body.jsonData).to.deep.equal({ namespaces: NAMESPACES, kinds: KINDS, tlsAuthWithCACert: true });
      expect(res.body.secureJsonFields).to.deep.equal({ bearerToken: true, tlsCACert: true });
      const listed = await as(viewer).get('/api/connectors?signalType=ops');
      expect(listed.body.connectors.map((c: { uid: string }) => c.uid)).to.include(res.body.uid);
    });

    // overrides are thunks: the cluster (its URL and CA) exists only once the tests run
    const refusals: Array<[string, () => Record<string, unknown>, RegExp]> = [
      ['no namespaces', () => ({ jsonData: { kinds: KINDS } }), /^jsonData\.namespaces is required for a kubernetes connector/],
      ['an empty kind list', () => ({ jsonData: { namespaces: NAMESPACES, kinds: [] } }), /^jsonData\.kinds is required/],
      [
        'secrets in the kinds',
        () => ({ jsonData: { namespaces: NAMESPACES, kinds: ['pods', 'secrets'] } }),
        /^jsonData\.kinds: secrets are never readable through an ops connector$/,
      ],
      [
        'an unknown kind',
        () => ({ jsonData: { namespaces: NAMESPACES, kinds: ['widgets'] } }),
        /^jsonData\.kinds: unknown resource kind widgets; the known kinds are pods, /,
      ],
      ['a namespace that is no name', () => ({ jsonData: { namespaces: ['Shop!'], kinds: KINDS } }), /^jsonData\.namespaces: "Shop!" is not a namespace name$/],
      [
        'no credentials',
        () => ({ secureJsonData: { tlsCACert: kube.ca } }),
        /^a kubernetes connector needs secureJsonData\.bearerToken, or jsonData\.tlsAuth with a client certificate and key$/,
      ],
      [
        'basic auth',
        () => ({ jsonData: { namespaces: NAMESPACES, kinds: KINDS, basicAuthUser: 'ops' }, secureJsonData: { basicAuthPassword: 'secret-pw' } }),
        /^a kubernetes connector authenticates with a bearer token or a client certificate only$/,
      ],
      ['an http URL', () => ({ url: kube.url.replace('https:', 'http:') }), /^body\.url of a kubernetes connector must start with https:\/\/$/],
    ];
    for (const [what, overrides, message] of refusals) {
      it(`400 for ${what}, and nothing is stored`, async () => {
        const body = settings(overrides());
        const res = await as(admin).post('/api/connectors', body);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.message).to.match(message);
        expect(await app.count('connectors', { name: body.name })).to.equal(0);
      });
    }

    it('the outbound address policy applies: a cloud metadata address is refused before anything is sent', async () => {
      const uid = await connector({ url: 'https://169.254.169.254:6443' });
      for (const [path, body] of [
        [`/api/connectors/${uid}/ops/read`, { command: 'version' }],
        [`/api/connectors/${uid}/test`, undefined],
      ] as const) {
        const res = await as(admin).post(path, body);
        expect(res.status, path).to.equal(400);
        expect(res.body.message, path).to.match(/169\.254\.169\.254.*(refused|not allowed)/);
      }
    });

    it('the metrics query and the proxy refuse it with where to go instead', async () => {
      const query = await as(viewer).post(`/api/connectors/${cluster}/query`, { query: 'up' });
      expect(query.status).to.equal(400);
      expect(query.body.message).to.equal('a kubernetes connector is read through POST /api/connectors/:uid/ops/read and changed through plans');
      expect((await as(viewer).get(`/api/connectors/proxy/uid/${cluster}/api/v1/namespaces`)).status).to.equal(400);
    });
  });

  describe('POST /api/connectors/:uid/test', () => {
    it('OK with the version when the identity may list every allowlisted kind in every allowlisted namespace', async () => {
      const res = await as(admin).post(`/api/connectors/${cluster}/test`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({
        status: 'OK',
        message: `Kubernetes ${version}: the connector may list every allowlisted kind in every allowlisted namespace`,
        details: { version, denied: [] },
      });
    });

    it('ERROR naming what the identity may not list (an allowlist beyond its RBAC)', async () => {
      const uid = await connector({ jsonData: { namespaces: [SEED.namespaces.shop], kinds: ['pods', 'cronjobs'], tlsAuthWithCACert: true } });
      const res = await as(admin).post(`/api/connectors/${uid}/test`);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({
        status: 'ERROR',
        message: `Kubernetes ${version} answered, but the connector's identity may not list cronjobs in shop`,
        details: { version, denied: ['cronjobs in shop'] },
      });
    });

    it('OK with a client certificate instead of a token; ERROR for a certificate of a CA the cluster does not trust', async () => {
      const mtls = (cert: string, key: string) =>
        connector({
          jsonData: { namespaces: NAMESPACES, kinds: KINDS, tlsAuth: true, tlsAuthWithCACert: true },
          secureJsonData: { tlsClientCert: cert, tlsClientKey: key, tlsCACert: kube.ca },
        });
      const trusted = await mtls(kube.clientCerts.clientCert, kube.clientCerts.clientKey);
      const ok = await as(admin).post(`/api/connectors/${trusted}/test`);
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.details).to.deep.equal({ version, denied: [] });
      const pods = await read('get pods -n shop', viewer, trusted);
      expect(pods.body.result.items.map((pod: { metadata: { name: string } }) => pod.metadata.name)).to.deep.equal([SEED.pod]);
      const untrusted = await mtls(kube.clientCerts.otherClientCert, kube.clientCerts.otherClientKey);
      const refused = await as(admin).post(`/api/connectors/${untrusted}/test`);
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.equal("the cluster refused the connector's credentials (401): check its token or client certificate");
    });

    it("ERROR for a token the cluster does not know, and for a CA that did not sign the cluster's certificate", async () => {
      const unknown = await connector({ secureJsonData: { bearerToken: 'not-a-cluster-token-0001', tlsCACert: kube.ca } });
      const refused = await as(admin).post(`/api/connectors/${unknown}/test`);
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.equal({
        status: 'ERROR',
        message: "the cluster refused the connector's credentials (401): check its token or client certificate",
        details: {},
      });
      const untrusted = await connector({ jsonData: { namespaces: NAMESPACES, kinds: KINDS } });
      const tls = await as(admin).post(`/api/connectors/${untrusted}/test`);
      expect(tls.status).to.equal(400);
      expect(tls.body.message).to.match(/^backend 127\.0\.0\.1:\d+ unreachable: TLS failed/);
    });

    it('401 without a session, 403 for an Editor and a Viewer (testing needs write)', async () => {
      expect((await app.request('POST', `/api/connectors/${cluster}/test`)).status).to.equal(401);
      for (const who of [editor, viewer]) expect((await as(who).post(`/api/connectors/${cluster}/test`)).status).to.equal(403);
    });
  });

  describe('POST /api/connectors/:uid/ops/read', () => {
    it('get: a list of the namespace without managedFields, one object by kind/name or kind name', async () => {
      const pods = await read('get pods -n shop');
      expect(pods.status, JSON.stringify(pods.body)).to.equal(200);
      expect(pods.body.command).to.equal('get pods -n shop');
      expect(pods.body.truncated).to.equal(false);
      expect(pods.body.result.kind).to.equal('PodList');
      expect(pods.body.result.items.map((pod: { metadata: { name: string } }) => pod.metadata.name)).to.deep.equal([SEED.pod]);
      expect(pods.body.result.items[0].metadata).to.not.have.property('managedFields');
      expect(pods.body.result.items[0].status.phase).to.equal('Running');
      for (const command of ['get deployment/web -n shop', 'kubectl get deploy web --namespace=shop', 'get deployments.apps web -n shop']) {
        const one = await read(command);
        expect(one.status, command).to.equal(200);
        expect(one.body.result).to.deep.include({ kind: 'Deployment' });
        expect(one.body.result.spec.replicas).to.equal(2);
      }
      const labelled = await read('get deployments -n shop -l app=web');
      expect(labelled.body.result.items.map((d: { metadata: { name: string } }) => d.metadata.name)).to.deep.equal([SEED.webDeployment]);
    });

    it('get -A covers the allowlisted namespaces only; get namespaces shows only allowlisted ones; nodes are cluster-wide', async () => {
      const all = await read('get deployments -A');
      const where = all.body.result.items.map((d: { metadata: { namespace: string; name: string } }) => `${d.metadata.namespace}/${d.metadata.name}`);
      expect(where.sort()).to.deep.equal(['internal/web', 'shop/api', 'shop/web']);
      const namespaces = await read('get namespaces');
      expect(namespaces.body.result.items.map((n: { metadata: { name: string } }) => n.metadata.name)).to.deep.equal(NAMESPACES);
      const nodes = await read('get nodes');
      expect(nodes.body.result.items.map((n: { metadata: { name: string } }) => n.metadata.name)).to.deep.equal([SEED.node]);
      const hidden = await read('get namespace kube-system');
      expect(hidden.status).to.equal(400);
      expect(hidden.body.message).to.equal('command: namespace kube-system is not allowlisted on this connector');
    });

    it('describe: the object and its events', async () => {
      const res = await read(`describe pod ${SEED.pod} -n shop`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.result.object.metadata.name).to.equal(SEED.pod);
      expect(res.body.result.events).to.have.length(1);
      expect(res.body.result.events[0]).to.include({ object: `Pod/${SEED.pod}`, namespace: 'shop' });
    });

    it('events: of a namespace, or about one object with --for', async () => {
      const all = await read('events -n shop');
      expect(all.status).to.equal(200);
      expect(all.body.result.events.map((e: { object: string }) => e.object)).to.include(`Pod/${SEED.pod}`);
      const about = await read(`events -n shop --for pod/${SEED.pod}`);
      expect(about.body.result.events).to.have.length(1);
      const none = await read('events -n shop --for deployment/api');
      expect(none.body.result.events).to.deep.equal([]);
    });

    it('rollout status and history of a deployment: its ReplicaSets by revision with their images', async () => {
      const status = await read('rollout status deployment/web -n shop');
      expect(status.status, JSON.stringify(status.body)).to.equal(200);
      expect(status.body.result).to.have.keys('done', 'message');
      const history = await read('rollout history deployment/web -n shop');
      expect(history.status).to.equal(200);
      expect(history.body.result.revisions.map((r: { revision: number; images: string[] }) => [r.revision, r.images])).to.deep.equal([
        [1, [SEED.images.previous]],
        [2, [SEED.images.current]],
      ]);
      const notRollable = await read('rollout status pod/web-0 -n shop');
      expect(notRollable.status).to.equal(400);
      expect(notRollable.body.message).to.equal('command: rollout works on deployments, statefulsets, daemonsets, not pods');
    });

    it('version and api-resources (only the allowlisted kinds)', async () => {
      const versionRead = await read('version');
      expect(versionRead.body.result.gitVersion).to.equal(version);
      const resources = await read('api-resources');
      const listed = resources.body.result.resources.map((r: { name: string }) => r.name).sort();
      expect(listed).to.deep.equal([...KINDS].sort());
    });

    it("logs: a pod's log, read through the API server from its node's kubelet, its tail and its container, cut at OPS_READ_MAX_BYTES", async () => {
      const kubelet = await startKubeletDouble(kube, 'node-with-kubelet');
      const pod = `/api/v1/namespaces/shop/pods/logger`;
      try {
        const created = await kube.api('POST', '/api/v1/namespaces/shop/pods', {
          metadata: { name: 'logger' },
          spec: { nodeName: kubelet.node, containers: ['app', 'sidecar'].map((name) => ({ name, image: SEED.images.current })) },
        });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        kubelet.logs.set('shop/logger/app', Array.from({ length: 30 }, (_, i) => `app line ${i + 1}\n`).join(''));
        kubelet.logs.set('shop/logger/sidecar', 'x'.repeat(1024 * 1024 + 100));

        const tail = await read('logs logger -n shop -c app --tail 3');
        expect(tail.status, JSON.stringify(tail.body)).to.equal(200);
        expect(tail.body.result).to.deep.equal({ pod: 'logger', namespace: 'shop', container: 'app', log: 'app line 28\napp line 29\napp line 30\n' });
        expect(tail.body.truncated).to.equal(false);
        expect(kubelet.requests.at(-1)).to.equal(`/containerLogs/shop/logger/app?limitBytes=${1024 * 1024}&tailLines=3`);

        const long = await read('logs pod/logger -n shop --container sidecar');
        expect(long.status).to.equal(200);
        expect(long.body.result.log).to.have.length(1024 * 1024);
        expect(long.body.truncated).to.equal(true);

        // a pod of two containers needs one named, as kubectl logs does; the API server says so
        const unnamed = await read('logs logger -n shop');
        expect(unnamed.status).to.equal(400);
        expect(unnamed.body.message).to.match(/^the cluster .*container name must be specified/);
        const outside = await read('logs logger -n kube-system -c app');
        expect(outside.status).to.equal(400);
        expect(outside.body.message).to.equal('command: namespace kube-system is not allowlisted on this connector; it allows shop, internal');
        expect(kubelet.requests).to.have.length(2);
      } finally {
        await kube.api('DELETE', `${pod}?gracePeriodSeconds=0`);
        await kubelet.stop();
      }
    });

    it('logs and top: what a cluster without a kubelet or metrics-server answers, as clear errors', async () => {
      const logs = await read(`logs ${SEED.pod} -n shop --tail 10`);
      expect(logs.status).to.be.oneOf([400, 404, 502]);
      expect(logs.body.message).to.match(/^the cluster /);
      const top = await read('top pods -n shop');
      expect(top.status).to.equal(502);
      expect(top.body.message).to.equal('top reads the metrics API (metrics.k8s.io), which this cluster does not serve: it needs metrics-server');
    });

    it('top: pod and node usage from the metrics API (metrics.k8s.io), only in allowlisted namespaces', async () => {
      const metrics = await serveMetricsApi(kube, {
        pods: [
          { namespace: 'shop', name: SEED.pod, containers: [{ name: SEED.container, usage: { cpu: '12m', memory: '48Mi' } }] },
          { namespace: 'kube-system', name: 'coredns-0', containers: [{ name: 'coredns', usage: { cpu: '3m', memory: '15Mi' } }] },
        ],
        nodes: [{ name: SEED.node, usage: { cpu: '250m', memory: '2Gi' } }],
      });
      try {
        const pods = await read('top pods -n shop');
        expect(pods.status, JSON.stringify(pods.body)).to.equal(200);
        expect(pods.body.result.items).to.deep.equal([
          { name: SEED.pod, namespace: 'shop', usage: null, containers: [{ name: SEED.container, usage: { cpu: '12m', memory: '48Mi' } }] },
        ]);
        expect(pods.body.truncated).to.equal(false);
        const nodes = await read('top nodes');
        expect(nodes.status).to.equal(200);
        expect(nodes.body.result.items).to.deep.equal([{ name: SEED.node, usage: { cpu: '250m', memory: '2Gi' }, containers: null }]);
        const outside = await read('top pods -n kube-system');
        expect(outside.status).to.equal(400);
        expect(outside.body.message).to.equal('command: namespace kube-system is not allowlisted on this connector; it allows shop, internal');
      } finally {
        await metrics.stop();
      }
    });

    const refused: Array<[string, string]> = [
      [
        'delete pod web-0 -n shop',
        'command: delete is not allowed: the allowed commands are get, describe, logs, top, events, rollout status, rollout history, api-resources, version',
      ],
      [
        'rollout undo deployment/web -n shop',
        'command: rollout undo is not allowed: the allowed commands are get, describe, logs, top, events, rollout status, rollout history, api-resources, version',
      ],
      [
        'exec web-0 -- sh',
        'command: exec is not allowed: the allowed commands are get, describe, logs, top, events, rollout status, rollout history, api-resources, version',
      ],
      ['get secrets -n shop', 'command: secrets are never readable through an ops connector'],
      [`get secret/${SEED.secret} -n shop`, 'command: secrets are never readable through an ops connector'],
      [
        'get cronjobs -n shop',
        'command: cronjobs are not allowlisted on this connector; it allows pods, deployments, replicasets, events, nodes, namespaces, configmaps',
      ],
      ['get pods -n kube-system', 'command: namespace kube-system is not allowlisted on this connector; it allows shop, internal'],
      ['get pods', 'command: name a namespace, one of shop, internal'],
      ['get nodes -n shop', 'command: nodes are cluster-wide and take no namespace'],
      ['get pods -n shop -o yaml', 'command: get does not take -o; it takes -n/--namespace, -l/--selector, --limit, -A/--all-namespaces'],
      ['get pods -n shop; rm -rf /', 'command: "shop;" is not a name kubectl would take'],
      ['get pods -n shop -n internal', 'command: -n is given twice'],
      ['get pods -n', 'command: -n needs a value'],
      ['get pods --limit 0 -n shop', 'command: --limit takes a whole number from 1 to 500'],
      ['', 'body.command must NOT have fewer than 1 characters'],
    ];
    for (const [command, message] of refused) {
      it(`400 for ${JSON.stringify(command)}`, async () => {
        const res = await read(command);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.message).to.equal(message);
      });
    }

    it('404 for a missing object, with the cluster saying which', async () => {
      const res = await read('get deployment/nope -n shop');
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal('the cluster has no such object: deployments.apps "nope" not found');
    });

    it("a read beyond the identity's RBAC is the cluster's refusal, as a 502 naming it", async () => {
      const uid = await connector({ jsonData: { namespaces: [SEED.namespaces.shop], kinds: ['cronjobs'], tlsAuthWithCACert: true } });
      const res = await read('get cronjobs', viewer, uid);
      expect(res.status).to.equal(502);
      expect(res.body.message).to.match(/^the connector's cluster identity may not do this: cronjobs\.batch is forbidden: User "gatehouse" cannot list/);
    });

    it('answers are bounded by OPS_READ_MAX_BYTES: a list is cut to fit and says so', async function () {
      this.timeout(30_000);
      const small = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8', OPS_READ_MAX_BYTES: '2048' } });
      try {
        const owner = await createUser(small, { role: 'Admin' });
        const created = await api(small, owner).post('/api/connectors', settings());
        const res = await api(small, owner).post(`/api/connectors/${created.body.uid}/ops/read`, { command: 'get deployments -A' });
        expect(res.status).to.equal(200);
        expect(res.body.truncated).to.equal(true);
        expect(res.body.result.items.length).to.be.lessThan(3);
        expect(JSON.stringify(res.body.result).length).to.be.at.most(2048);
      } finally {
        await small.close();
      }
    });

    it('401 without a session; every member may read by default; a list without the role entries leaves the others out (403)', async () => {
      expect((await app.request('POST', `/api/connectors/${cluster}/ops/read`, { body: { command: 'version' } })).status).to.equal(401);
      const narrowed = await connector();
      expect((await read('version', viewer, narrowed)).status).to.equal(200);
      const granted = await as(admin).post(`/api/connectors/${narrowed}/permissions`, { items: [{ userId: editor.id, permission: 1 }] });
      expect(granted.status).to.equal(200);
      const denied = await read('version', viewer, narrowed);
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.match(DENIED);
      expect((await read('version', editor, narrowed)).status).to.equal(200);
    });

    it("404 for another org's connector and for an unknown uid; 400 for a connector of another type", async () => {
      const other = await buildOrg(app);
      const foreign = await connector({}, other, await createUser(app, { role: 'Admin', orgId: other }));
      expect((await read('version', admin, foreign)).status).to.equal(404);
      expect((await read('version', admin, 'no-such-connector')).status).to.equal(404);
      const changes = await as(admin).post('/api/connectors', { name: 'ops-changes', type: 'changes' });
      const wrong = await read('version', admin, changes.body.uid);
      expect(wrong.status).to.equal(400);
      expect(wrong.body.message).to.equal(`connector ${changes.body.uid} is of type changes: only a kubernetes connector runs ops reads and plans`);
    });
  });

  describe('chat tool ops_read', () => {
    const tool = (who: TestUser, agentType: string, args: Record<string, unknown>) =>
      as(who).post('/api/chat/tools/ops_read', { agentType, permissionMode: 'read_only', args });

    it('an investigator reads the named connector; its answer names the connector', async () => {
      const res = await tool(viewer, 'investigator', { connector: cluster, command: 'get deployments -n internal' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.connector.uid).to.equal(cluster);
      expect(res.body.result.items.map((d: { metadata: { name: string } }) => d.metadata.name)).to.deep.equal([SEED.webDeployment]);
    });

    it('a dashboard builder may not call it; the allowlist still applies to the agent', async () => {
      const refused = await tool(viewer, 'dashboard_builder', { connector: cluster, command: 'version' });
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.equal('chat: tool ops_read is not allowed for agent type dashboard_builder');
      const secret = await tool(viewer, 'operator', { connector: cluster, command: 'get secrets -n shop' });
      expect(secret.status).to.equal(400);
      expect(secret.body.message).to.equal('command: secrets are never readable through an ops connector');
    });

    it('without a named connector: the org default ops connector, else a 400 saying so', async () => {
      const other = await buildOrg(app);
      const member = await createUser(app, { role: 'Viewer', orgId: other });
      const none = await as(member, other).post('/api/chat/tools/ops_read', {
        agentType: 'investigator',
        permissionMode: 'read_only',
        args: { command: 'version' },
      });
      expect(none.status).to.equal(400);
      expect(none.body.message).to.equal('body.args.connector is required: the org has no default ops connector (connectors_list shows them)');
      await connector({ isDefault: true }, other, await createUser(app, { role: 'Admin', orgId: other }));
      const chosen = await as(member, other).post('/api/chat/tools/ops_read', {
        agentType: 'investigator',
        permissionMode: 'read_only',
        args: { command: 'version' },
      });
      expect(chosen.status, JSON.stringify(chosen.body)).to.equal(200);
      expect(chosen.body.result.gitVersion).to.equal(version);
    });
  });

  it("no answer and no audit entry shows the connector's token or the seeded secret", async () => {
    const audit = await auditEntries(app, {});
    const everything = JSON.stringify([shown, audit]);
    expect(everything).to.not.include(kube.tokens.gatehouse);
    expect(everything).to.not.include(SEED.secretValue);
  });
});
