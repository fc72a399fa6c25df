/**
 * The Kubernetes test harness itself (test/helpers/kubernetes.ts): a real kube-apiserver over etcd
 * starts, seedCluster() writes its objects, and the three tokens get what RBAC gives them. Without
 * the kube-apiserver binary (tools/kube-apiserver.sh) or etcd the suite is skipped, except in CI.
 */
import { expect } from 'chai';
import { KUBERNETES_VERSION, SEED, seedCluster, startKubernetes, type RunningKubernetes } from './helpers/kubernetes.ts';
import { requirePeer } from './helpers/peers.ts';

describe('kubernetes test harness', function () {
  let kube: RunningKubernetes;

  before(async function () {
    requirePeer(this, 'kubernetes');
    this.timeout(90_000);
    const t0 = Date.now();
    kube = await startKubernetes();
    const t1 = Date.now();
    await seedCluster(kube);
    console.log(`      (kube-apiserver ready in ${t1 - t0} ms, seeded in ${Date.now() - t1} ms)`);
  });
  after(async function () {
    this.timeout(30_000);
    await kube?.stop();
  });

  it('serves the pinned version', async () => {
    const res = await kube.api('GET', '/version');
    expect(res.status).to.equal(200);
    expect(res.body.gitVersion).to.equal(KUBERNETES_VERSION);
  });

  it('lets gatehouse list pods through its ClusterRole but not read secrets', async () => {
    const pods = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/pods`, undefined, { token: kube.tokens.gatehouse });
    expect(pods.status).to.equal(200);
    expect(pods.body.items.map((pod: { metadata: { name: string } }) => pod.metadata.name)).to.deep.equal([SEED.pod]);

    const secrets = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/secrets`, undefined, { token: kube.tokens.gatehouse });
    expect(secrets.status).to.equal(403);
    expect(secrets.body.reason).to.equal('Forbidden');
    const secret = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/secrets/${SEED.secret}`, undefined, { token: kube.tokens.gatehouse });
    expect(secret.status).to.equal(403);
    expect(JSON.stringify(secret.body)).not.to.contain(Buffer.from(SEED.secretValue).toString('base64'));
  });

  it('refuses pods to a user without RBAC and any request to an unknown token', async () => {
    const pods = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/pods`, undefined, { token: kube.tokens.nobody });
    expect(pods.status).to.equal(403);
    expect(pods.body.message).to.contain('nobody-user');
    const unknown = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/pods`, undefined, { token: 'not-a-token' });
    expect(unknown.status).to.equal(401);
  });

  it('seeds a running pod, the deployments, their revisions, the node and an event', async () => {
    const pod = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/pods/${SEED.pod}`);
    expect(pod.body.status.phase).to.equal('Running');
    expect(pod.body.status.containerStatuses[0]).to.include({ name: SEED.container, ready: true, restartCount: 0 });

    for (const ns of Object.values(SEED.namespaces)) {
      const web = await kube.api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${SEED.webDeployment}`);
      expect(web.status).to.equal(200);
      expect(web.body.spec.replicas).to.equal(2);
      expect(web.body.status.readyReplicas).to.equal(2);
    }
    const api = await kube.api('GET', `/apis/apps/v1/namespaces/${SEED.namespaces.shop}/deployments/${SEED.apiDeployment}`);
    expect(api.status).to.equal(200);

    const web = await kube.api('GET', `/apis/apps/v1/namespaces/${SEED.namespaces.shop}/deployments/${SEED.webDeployment}`);
    expect(web.body.metadata.annotations['deployment.kubernetes.io/revision']).to.equal('2');
    const replicaSets = await kube.api('GET', `/apis/apps/v1/namespaces/${SEED.namespaces.shop}/replicasets`, undefined, { token: kube.tokens.gatehouse });
    const revisions = replicaSets.body.items.map((rs: any) => ({
      revision: rs.metadata.annotations['deployment.kubernetes.io/revision'],
      image: rs.spec.template.spec.containers[0].image,
      owner: rs.metadata.ownerReferences[0].uid,
    }));
    expect(revisions).to.have.deep.members([
      { revision: '1', image: SEED.images.previous, owner: web.body.metadata.uid },
      { revision: '2', image: SEED.images.current, owner: web.body.metadata.uid },
    ]);

    const node = await kube.api('GET', `/api/v1/nodes/${SEED.node}`, undefined, { token: kube.tokens.gatehouse });
    expect(node.body.status.conditions.find((c: { type: string }) => c.type === 'Ready').status).to.equal('True');
    const events = await kube.api('GET', `/api/v1/namespaces/${SEED.namespaces.shop}/events`, undefined, { token: kube.tokens.gatehouse });
    expect(events.body.items.map((e: { involvedObject: { name: string } }) => e.involvedObject.name)).to.deep.equal([SEED.pod]);
  });
});
