/**
 * A real Kubernetes API server (kube-apiserver v1.31.4, built once by tools/kube-apiserver.sh: no
 * Debian package exists) over Debian's etcd, both on free loopback ports, owned by the test: its
 * own temp dir, static bearer tokens (an admin in `system:masters`, `gatehouse` whose rights come
 * from RBAC only, `nobody-user` with none), RBAC authorization, the self-signed serving
 * certificate, stopped by pid. There is no scheduler, controller-manager or kubelet: nothing acts
 * on the objects, so seedCluster() writes everything the tests read, statuses included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPair, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeTestCerts, type TestCerts } from './certs.ts';
import { freePort } from './prometheus.ts';

export const KUBERNETES_VERSION = 'v1.31.4';
export const ETCD_BIN = '/usr/bin/etcd';

/** `KUBE_APISERVER_BIN` when set, else where tools/kube-apiserver.sh (run by npm run peers) caches it. */
export const KUBE_APISERVER_BIN =
  process.env.KUBE_APISERVER_BIN ||
  path.join(process.env.GATEHOUSE_CACHE || path.join(os.homedir(), '.cache', 'gatehouse'), `kube-apiserver-${KUBERNETES_VERSION}`, 'kube-apiserver');

/** The users of the token file: `gatehouse` gets exactly the ClusterRole CLUSTER_ROLE, `nobody-user` nothing. */
export const USERS = { admin: 'admin', gatehouse: 'gatehouse', nobody: 'nobody-user' } as const;
/** The user of the trusted client certificate (its CN, test/helpers/certs.ts), bound to the same ClusterRole as `gatehouse`. */
export const CERTIFICATE_USER = 'client';

export interface KubeResponse {
  status: number;
  /** Parsed JSON when the server answered JSON, else the text. */
  body: any;
}

export interface KubeRequestOptions {
  /** Bearer token; the admin's unless given. */
  token?: string;
  /** Defaults to `application/merge-patch+json` for PATCH, `application/json` otherwise. */
  contentType?: string;
}

export interface RunningKubernetes {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** PEM of the self-signed serving certificate (and its CA): trust it to reach `url`. */
  ca: string;
  tokens: { admin: string; gatehouse: string; nobody: string };
  /** A client certificate the server trusts (`--client-ca-file`): user `client` (its CN), bound like `gatehouse`; and one of a CA it does not trust. */
  clientCerts: Pick<TestCerts, 'clientCert' | 'clientKey' | 'otherClientCert' | 'otherClientKey'>;
  api(method: string, apiPath: string, body?: unknown, options?: KubeRequestOptions): Promise<KubeResponse>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const exitedCode = (child: ChildProcess) => child.exitCode ?? child.signalCode;

function tail(file: string, chars = 4000): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-chars);
  } catch {
    return '(no log)';
  }
}

/** SIGTERM, then SIGKILL if it has not exited after a while (a hung shutdown must not hang the suite). */
async function kill(child: ChildProcess): Promise<void> {
  if (exitedCode(child) !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(child.pid!, 'SIGTERM');
  const timer = setTimeout(() => exitedCode(child) === null && process.kill(child.pid!, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function request(url: string, ca: string, method: string, apiPath: string, token: string, body?: unknown, contentType?: string): Promise<KubeResponse> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (payload !== undefined) headers['content-type'] = contentType ?? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json');
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(apiPath, url), { method, headers, ca, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = (res.headers['content-type'] ?? '').includes('json');
        resolve({ status: res.statusCode!, body: json && text ? JSON.parse(text) : text });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${apiPath}: no answer in 10 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Starts etcd into `children` (so the caller stops it whatever happens) and resolves with its client URL once healthy. */
async function startEtcd(dir: string, children: ChildProcess[]): Promise<string> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const log = path.join(dir, 'etcd.log');
  const out = fs.openSync(log, 'a');
  const child = spawn(
    ETCD_BIN,
    [
      '--name=gatehouse-test',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=gatehouse-test=${peer}`,
      '--logger=zap',
      '--log-level=warn',
    ],
    { cwd: dir, stdio: ['ignore', out, out] },
  );
  fs.closeSync(out);
  children.push(child);
  for (let attempt = 0; attempt < 200; attempt++) {
    if (exitedCode(child) !== null) throw new Error(`etcd exited (${exitedCode(child)}): ${tail(log)}`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) return url;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`etcd did not become healthy: ${tail(log)}`);
}

export async function startKubernetes(): Promise<RunningKubernetes> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-kube-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    // The API server first: it must not outlive its storage.
    for (const child of [...children].reverse()) await kill(child);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const etcdUrl = await startEtcd(dir, children);

    // The service-account keys are mandatory flags, though no test here mints a service-account token.
    const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    fs.writeFileSync(path.join(dir, 'sa.pub'), publicKey);
    fs.writeFileSync(path.join(dir, 'sa.key'), privateKey, { mode: 0o600 });

    // client certificates are the other way a connector authenticates: CN=client is the user
    const certs = makeTestCerts();
    fs.copyFileSync(certs.paths.ca, path.join(dir, 'client-ca.crt'));
    fs.rmSync(certs.dir, { recursive: true, force: true });
    const token = () => randomBytes(24).toString('hex');
    const tokens = { admin: token(), gatehouse: token(), nobody: token() };
    // token,user,uid[,"group,..."]: only the admin has a group; the others are just system:authenticated.
    fs.writeFileSync(
      path.join(dir, 'tokens.csv'),
      [
        `${tokens.admin},${USERS.admin},uid-admin,"system:masters"`,
        `${tokens.gatehouse},${USERS.gatehouse},uid-gatehouse`,
        `${tokens.nobody},${USERS.nobody},uid-nobody`,
      ]
        .map((line) => `${line}\n`)
        .join(''),
      { mode: 0o600 },
    );

    const port = await freePort();
    const certDir = path.join(dir, 'certs');
    const log = path.join(dir, 'kube-apiserver.log');
    const out = fs.openSync(log, 'a');
    const apiserver = spawn(
      KUBE_APISERVER_BIN,
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        // Else it advertises the address of the default route, and fails to start on a host without one.
        '--advertise-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${certDir}`,
        `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
        `--client-ca-file=${path.join(dir, 'client-ca.crt')}`,
        '--authorization-mode=RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        // Pods would otherwise need a `default` ServiceAccount, which only the controller-manager creates.
        '--disable-admission-plugins=ServiceAccount',
        // It would make the advertised loopback address the `kubernetes` Service's endpoint, which the API refuses (an error every 10 s).
        '--endpoint-reconciler-type=none',
        '--v=0',
      ],
      { cwd: dir, stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    children.push(apiserver);

    const url = `https://127.0.0.1:${port}`;
    let ca = '';
    let answer = '';
    for (let attempt = 0; !ca; attempt++) {
      if (exitedCode(apiserver) !== null) throw new Error(`kube-apiserver exited (${exitedCode(apiserver)}): ${tail(log)}`);
      if (attempt >= 1200) throw new Error(`kube-apiserver did not become ready in 60 s (last /readyz: ${answer}): ${tail(log)}`);
      await sleep(50);
      // It writes the self-signed certificate before it listens.
      const pem = fs.existsSync(path.join(certDir, 'apiserver.crt')) ? fs.readFileSync(path.join(certDir, 'apiserver.crt'), 'utf8') : '';
      if (!pem) continue;
      try {
        const res = await request(url, pem, 'GET', '/readyz', tokens.admin);
        if (res.status === 200) ca = pem;
        else answer = `${res.status} ${String(res.body).slice(-500)}`;
      } catch (err) {
        answer = (err as Error).message;
      }
    }
    const api = (method: string, apiPath: string, body?: unknown, options: KubeRequestOptions = {}) =>
      request(url, ca, method, apiPath, options.token ?? tokens.admin, body, options.contentType);
    const { clientCert, clientKey, otherClientCert, otherClientKey } = certs;
    return { url, ca, tokens, clientCerts: { clientCert, clientKey, otherClientCert, otherClientKey }, api, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What seedCluster() creates, for the tests to name. */
export const SEED = {
  namespaces: { shop: 'shop', internal: 'internal' },
  /** In both namespaces: 2 replicas of IMAGES.current, labels `app: web`; ReplicaSets (revisions 1 and 2) in `shop` only. */
  webDeployment: 'web',
  /** In `shop` only. */
  apiDeployment: 'api',
  pod: 'web-0',
  container: 'web',
  secret: 'db-password',
  secretValue: 'hunter2-kube-7b1e',
  configMap: 'settings',
  event: 'web-0.pulled',
  node: 'node-1',
  clusterRole: 'gatehouse-ops',
  clusterRoleBinding: 'gatehouse-ops',
  /** The ReplicaSets of `shop/web`: revision 1 ran IMAGES.previous, revision 2 (current) runs IMAGES.current. */
  replicaSets: { 1: 'web-6b8f9c7d54', 2: 'web-7d4c8b9f65' },
  images: { previous: 'nginx:1.26', current: 'nginx:1.27', api: 'nginx:1.27-alpine' },
} as const;

const REVISION = 'deployment.kubernetes.io/revision';

/** The rights the connector's user has: reading the workloads, scaling and patching them, deleting pods; never secrets. */
const OPS_RULES = [
  {
    apiGroups: [''],
    resources: ['pods', 'pods/log', 'services', 'events', 'configmaps', 'namespaces', 'nodes'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'statefulsets', 'statefulsets/scale'], verbs: ['patch', 'update'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['patch', 'update'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
  // what `top` reads; the cluster has no metrics-server, so it answers 404 rather than 403
  { apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list'] },
];

function podTemplate(app: string, image: string, extraLabels: Record<string, string> = {}) {
  return {
    metadata: { labels: { app, ...extraLabels } },
    spec: { containers: [{ name: app, image, ports: [{ containerPort: 80 }] }] },
  };
}

/** Seeds the objects SEED names, as the admin; throws on any refusal. */
export async function seedCluster(kube: RunningKubernetes): Promise<void> {
  const send = async (method: string, apiPath: string, body: unknown) => {
    const res = await kube.api(method, apiPath, body);
    if (res.status >= 300) throw new Error(`seed ${method} ${apiPath}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const { shop, internal } = SEED.namespaces;
  const apps = (ns: string, kind: string) => `/apis/apps/v1/namespaces/${ns}/${kind}`;
  const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

  await send('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: SEED.clusterRole }, rules: OPS_RULES });
  await send('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: SEED.clusterRoleBinding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: SEED.clusterRole },
    subjects: [USERS.gatehouse, CERTIFICATE_USER].map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
  });

  await send('POST', '/api/v1/nodes', { metadata: { name: SEED.node, labels: { 'kubernetes.io/hostname': SEED.node, 'kubernetes.io/os': 'linux' } } });
  // No kubelet reports it, so its status says what one would: Ready, with some capacity.
  await send('PATCH', `/api/v1/nodes/${SEED.node}/status`, {
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.11' },
        { type: 'Hostname', address: SEED.node },
      ],
      nodeInfo: { kubeletVersion: KUBERNETES_VERSION, containerRuntimeVersion: 'containerd://1.7.24', osImage: 'Debian GNU/Linux 12 (bookworm)' },
    },
  });

  for (const ns of [shop, internal]) {
    await send('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    const revision = ns === shop ? { annotations: { [REVISION]: '2' } } : {};
    await send('POST', apps(ns, 'deployments'), {
      metadata: { name: SEED.webDeployment, labels: { app: 'web' }, ...revision },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate('web', SEED.images.current) },
    });
  }
  await send('POST', apps(shop, 'deployments'), {
    metadata: { name: SEED.apiDeployment, labels: { app: 'api' } },
    spec: { replicas: 1, selector: { matchLabels: { app: 'api' } }, template: podTemplate('api', SEED.images.api) },
  });
  // No controller fills in their status: say they are rolled out, as `rollout status` would want.
  for (const [ns, name, replicas] of [
    [shop, SEED.webDeployment, 2],
    [internal, SEED.webDeployment, 2],
    [shop, SEED.apiDeployment, 1],
  ] as const) {
    await send('PATCH', `${apps(ns, 'deployments')}/${name}/status`, {
      status: {
        observedGeneration: 1,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    });
  }

  // The ReplicaSets the deployment controller would have left behind two rollouts, for `rollout history/undo`.
  const web = await send('GET', `${apps(shop, 'deployments')}/${SEED.webDeployment}`, undefined);
  const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: SEED.webDeployment, uid: web.metadata.uid, controller: true, blockOwnerDeletion: true };
  const replicaSetUids: Record<string, string> = {};
  for (const [revision, image, replicas] of [
    ['1', SEED.images.previous, 0],
    ['2', SEED.images.current, 2],
  ] as const) {
    const name = SEED.replicaSets[revision];
    const hash = name.slice('web-'.length);
    const created = await send('POST', apps(shop, 'replicasets'), {
      metadata: {
        name,
        labels: { app: 'web', 'pod-template-hash': hash },
        annotations: { [REVISION]: revision, 'deployment.kubernetes.io/desired-replicas': '2', 'deployment.kubernetes.io/max-replicas': '3' },
        ownerReferences: [owner],
      },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'web', 'pod-template-hash': hash } },
        template: podTemplate('web', image, { 'pod-template-hash': hash }),
      },
    });
    replicaSetUids[revision] = created.metadata.uid;
    await send('PATCH', `${apps(shop, 'replicasets')}/${name}/status`, {
      status: { observedGeneration: 1, replicas, fullyLabeledReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas },
    });
  }

  // A pod of the current ReplicaSet, never scheduled (there is no scheduler); its status says what a kubelet would.
  const hash = SEED.replicaSets[2].slice('web-'.length);
  const pod = await send('POST', `/api/v1/namespaces/${shop}/pods`, {
    metadata: {
      name: SEED.pod,
      ...podTemplate('web', SEED.images.current, { 'pod-template-hash': hash }).metadata,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: SEED.replicaSets[2], uid: replicaSetUids[2], controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: podTemplate(SEED.container, SEED.images.current).spec,
  });
  await send('PATCH', `/api/v1/namespaces/${shop}/pods/${SEED.pod}/status`, {
    status: {
      phase: 'Running',
      startTime: now,
      podIP: '10.244.0.7',
      podIPs: [{ ip: '10.244.0.7' }],
      conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now })),
      containerStatuses: [
        {
          name: SEED.container,
          image: SEED.images.current,
          imageID: `docker.io/library/${SEED.images.current}@sha256:${'0'.repeat(64)}`,
          containerID: `containerd://${'a'.repeat(64)}`,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: now } },
        },
      ],
    },
  });

  await send('POST', `/api/v1/namespaces/${shop}/secrets`, {
    metadata: { name: SEED.secret },
    type: 'Opaque',
    data: { password: Buffer.from(SEED.secretValue).toString('base64') },
  });
  await send('POST', `/api/v1/namespaces/${shop}/configmaps`, { metadata: { name: SEED.configMap }, data: { LOG_LEVEL: 'info', CHECKOUT_TIMEOUT: '30s' } });
  await send('POST', `/api/v1/namespaces/${shop}/events`, {
    metadata: { name: SEED.event },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: shop, name: SEED.pod, uid: pod.metadata.uid, fieldPath: `spec.containers{${SEED.container}}` },
    reason: 'Pulled',
    message: `Container image "${SEED.images.current}" already present on machine`,
    type: 'Normal',
    source: { component: 'kubelet', host: SEED.node },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
}

/** A kubelet's log endpoint for one node (startKubeletDouble). */
export interface KubeletDouble {
  /** The node it serves, registered with the API server. */
  node: string;
  /** What each container logged, by `<namespace>/<pod>/<container>`. */
  logs: Map<string, string>;
  /** The path and query of every request the API server sent it. */
  requests: string[];
  stop(): Promise<void>;
}

/**
 * The one kubelet endpoint `logs` needs, behind a node of its own. The API server proxies a pod's
 * log to `https://<node InternalIP>:<kubeletEndpoint port>/containerLogs/<ns>/<pod>/<container>`
 * (and, started without --kubelet-certificate-authority, accepts any serving certificate). No
 * kubelet runs here (../shared/PEERS.md), so this stands in for that endpoint alone, answering
 * tailLines and limitBytes as a kubelet does; the API server in front of it, its RBAC on
 * pods/log and its proxying are the real ones.
 */
export async function startKubeletDouble(kube: RunningKubernetes, node: string): Promise<KubeletDouble> {
  const certs = makeTestCerts();
  const logs = new Map<string, string>();
  const requests: string[] = [];
  const server = https.createServer({ key: certs.serverKey, cert: certs.serverCert }, (req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const [, endpoint, namespace, pod, container] = url.pathname.split('/');
    const log = endpoint === 'containerLogs' ? logs.get(`${namespace}/${pod}/${container}`) : undefined;
    if (log === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`container "${container}" in pod "${pod}" is not known to this kubelet`);
      return;
    }
    const tail = url.searchParams.get('tailLines');
    const lines = log.split(/(?<=\n)/);
    const shown = tail === null ? log : lines.slice(Math.max(0, lines.length - Number(tail))).join('');
    const limit = url.searchParams.get('limitBytes');
    res.writeHead(200, { 'content-type': 'text/plain' }).end(limit === null ? shown : Buffer.from(shown).subarray(0, Number(limit)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const stop = async () => {
    await kube.api('DELETE', `/api/v1/nodes/${node}`);
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(certs.dir, { recursive: true, force: true });
  };
  try {
    for (const [method, apiPath, body] of [
      ['POST', '/api/v1/nodes', { metadata: { name: node, labels: { 'kubernetes.io/hostname': node } } }],
      [
        'PATCH',
        `/api/v1/nodes/${node}/status`,
        { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } },
      ],
    ] as const) {
      const res = await kube.api(method, apiPath, body);
      if (res.status >= 300) throw new Error(`kubelet double: ${method} ${apiPath}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { node, logs, requests, stop };
}

/** The metrics API as serveMetricsApi() serves it, for a test to take down again. */
export interface MetricsApi {
  stop(): Promise<void>;
}

const METRICS_KINDS = [
  { plural: 'pods', kind: 'PodMetrics', scope: 'Namespaced' },
  { plural: 'nodes', kind: 'NodeMetrics', scope: 'Cluster' },
] as const;

/**
 * metrics.k8s.io/v1beta1 as metrics-server serves it (`top` reads nothing else), with the metrics
 * given: no metrics-server runs here (it needs kubelets to scrape), so the real API server serves
 * the group itself, from custom resources of metrics-server's kinds and shapes (its own group
 * needs the api-approved annotation), and RBAC lets `gatehouse` and `client` read it.
 */
export async function serveMetricsApi(
  kube: RunningKubernetes,
  metrics: { pods: Array<{ namespace: string; name: string; containers: unknown[] }>; nodes: Array<{ name: string; usage: unknown }> },
): Promise<MetricsApi> {
  const send = async (method: string, apiPath: string, body?: unknown) => {
    const res = await kube.api(method, apiPath, body);
    if (res.status >= 300) throw new Error(`metrics API: ${method} ${apiPath}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const stop = async () => {
    for (const { plural } of METRICS_KINDS) await kube.api('DELETE', `${crds}/${plural}.metrics.k8s.io`);
    await kube.api('DELETE', `${rbac}/clusterrolebindings/metrics-reader`);
    await kube.api('DELETE', `${rbac}/clusterroles/metrics-reader`);
  };
  try {
    for (const { plural, kind, scope } of METRICS_KINDS) {
      await send('POST', crds, {
        metadata: { name: `${plural}.metrics.k8s.io`, annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/metrics-server' } },
        spec: {
          group: 'metrics.k8s.io',
          scope,
          names: { plural, kind, singular: kind.toLowerCase() },
          versions: [
            { name: 'v1beta1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
          ],
        },
      });
    }
    for (let attempt = 0; ; attempt++) {
      const established = await Promise.all(
        METRICS_KINDS.map(async ({ plural }) => {
          const crd = (await kube.api('GET', `${crds}/${plural}.metrics.k8s.io`)).body as { status?: { conditions?: Array<{ type: string; status: string }> } };
          return crd.status?.conditions?.some((condition) => condition.type === 'Established' && condition.status === 'True') ?? false;
        }),
      );
      if (established.every(Boolean)) break;
      if (attempt >= 200) throw new Error('metrics API: the custom resources were not established in 10 s');
      await sleep(50);
    }
    await send('POST', `${rbac}/clusterroles`, {
      metadata: { name: 'metrics-reader' },
      rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list'] }],
    });
    await send('POST', `${rbac}/clusterrolebindings`, {
      metadata: { name: 'metrics-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [USERS.gatehouse, CERTIFICATE_USER].map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
    });
    const sample = { timestamp: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'), window: '15s' };
    for (const pod of metrics.pods) {
      await send('POST', `/apis/metrics.k8s.io/v1beta1/namespaces/${pod.namespace}/pods`, {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'PodMetrics',
        metadata: { name: pod.name },
        ...sample,
        containers: pod.containers,
      });
    }
    for (const node of metrics.nodes) {
      await send('POST', '/apis/metrics.k8s.io/v1beta1/nodes', {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'NodeMetrics',
        metadata: { name: node.name },
        ...sample,
        usage: node.usage,
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
