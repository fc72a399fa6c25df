/**
 * A deployment's revisions, as kubectl reads them for `rollout history` and `rollout undo`: the
 * ReplicaSets it owns (selected by its labels, owned by its uid), each with its
 * `deployment.kubernetes.io/revision`. Read as raw JSON, so a pod template goes back to the
 * cluster exactly as it came (the client's models drop fields they do not know).
 */
import type { Cluster } from './cluster.ts';

const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

interface ObjectJson {
  metadata?: {
    name?: string;
    uid?: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string; controller?: boolean }>;
  };
  spec?: {
    selector?: { matchLabels?: Record<string, string> };
    template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers?: Array<{ image?: string }> } };
  };
}

interface Revision {
  revision: number;
  replicaSet: ObjectJson;
}

/** The deployment at `path` and its revisions, oldest first; `current` is the deployment's own revision. */
export async function deploymentRevisions(cluster: Cluster, path: string, namespace: string) {
  const deployment = (await cluster.getJson(path)) as ObjectJson;
  const selector = Object.entries(deployment.spec?.selector?.matchLabels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
  const list = (await cluster.getJson(
    `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/replicasets${selector ? `?labelSelector=${encodeURIComponent(selector)}` : ''}`,
  )) as { items?: ObjectJson[] };
  const revisions: Revision[] = (list.items ?? [])
    .filter((set) => set.metadata?.ownerReferences?.some((owner) => owner.uid !== undefined && owner.uid === deployment.metadata?.uid))
    .map((set) => ({ revision: Number(set.metadata?.annotations?.[REVISION_ANNOTATION]), replicaSet: set }))
    .filter(({ revision }) => Number.isInteger(revision) && revision > 0)
    .sort((a, b) => a.revision - b.revision);
  const current = Number(deployment.metadata?.annotations?.[REVISION_ANNOTATION]) || revisions.at(-1)?.revision || 0;
  return { deployment, revisions, current };
}
