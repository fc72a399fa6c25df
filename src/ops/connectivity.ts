/**
 * The connectivity test of a kubernetes connector: `/version` answers with the connector's
 * credentials, then a permission self-check (SelfSubjectAccessReview) that the cluster lets the
 * connector's identity list every allowlisted kind in every allowlisted namespace. An allowlist
 * the identity cannot read is a setting to fix, so the test fails naming what is denied.
 */
import { ServiceError } from '../errors.ts';
import type { ConnectivityResult } from '../connectors/backends/prometheus.ts';
import { onCluster, type Cluster } from './cluster.ts';

/** At most this many reviews at a time: an allowlist may name 100 namespaces and every kind. */
const REVIEWS_AT_ONCE = 8;

interface Check {
  kind: { name: string; apiVersion: string };
  namespace?: string;
}

async function mayList(cluster: Cluster, { kind, namespace }: Check): Promise<boolean> {
  const group = kind.apiVersion.includes('/') ? kind.apiVersion.split('/')[0] : '';
  const review = await cluster.authorization.createSelfSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'list', group, resource: kind.name, ...(namespace && { namespace }) } },
    },
  });
  return review.status?.allowed === true;
}

export async function testCluster(cluster: Cluster): Promise<ConnectivityResult> {
  try {
    const version = await onCluster(() => cluster.version.getCode());
    const checks: Check[] = cluster.settings.kinds.flatMap((kind) =>
      kind.namespaced ? cluster.settings.namespaces.map((namespace) => ({ kind, namespace })) : [{ kind }],
    );
    const denied: string[] = [];
    for (let start = 0; start < checks.length; start += REVIEWS_AT_ONCE) {
      const batch = checks.slice(start, start + REVIEWS_AT_ONCE);
      const answers = await onCluster(() => Promise.all(batch.map((check) => mayList(cluster, check))));
      batch.forEach((check, index) => {
        if (!answers[index]) denied.push(check.namespace ? `${check.kind.name} in ${check.namespace}` : check.kind.name);
      });
    }
    const details = { version: version.gitVersion, denied };
    if (denied.length > 0)
      return { status: 'ERROR', message: `Kubernetes ${version.gitVersion} answered, but the connector's identity may not list ${denied.join(', ')}`, details };
    return { status: 'OK', message: `Kubernetes ${version.gitVersion}: the connector may list every allowlisted kind in every allowlisted namespace`, details };
  } catch (error) {
    if (error instanceof ServiceError) return { status: 'ERROR', message: error.message, details: {} };
    throw error;
  }
}
