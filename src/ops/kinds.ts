/**
 * The resource kinds an ops connector knows, by their plural name, with kubectl's short names.
 * A connector allowlists some of them (jsonData.kinds); nothing outside this table is reachable.
 * Secrets are not in it and cannot be allowlisted: nothing reads them through the service.
 */
import { BadRequestError } from '../errors.ts';

export interface KindInfo {
  /** Plural resource name, as the API paths and RBAC name it: `deployments`. */
  name: string;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  aliases: string[];
}

const kind = (name: string, apiVersion: string, kindName: string, namespaced: boolean, ...aliases: string[]): KindInfo => ({
  name,
  apiVersion,
  kind: kindName,
  namespaced,
  aliases: [kindName.toLowerCase(), ...aliases],
});

export const KINDS: readonly KindInfo[] = [
  kind('pods', 'v1', 'Pod', true, 'po'),
  kind('services', 'v1', 'Service', true, 'svc'),
  kind('endpoints', 'v1', 'Endpoints', true, 'ep'),
  kind('events', 'v1', 'Event', true, 'ev'),
  kind('configmaps', 'v1', 'ConfigMap', true, 'cm'),
  kind('persistentvolumeclaims', 'v1', 'PersistentVolumeClaim', true, 'pvc'),
  kind('namespaces', 'v1', 'Namespace', false, 'ns'),
  kind('nodes', 'v1', 'Node', false, 'no'),
  kind('deployments', 'apps/v1', 'Deployment', true, 'deploy'),
  kind('replicasets', 'apps/v1', 'ReplicaSet', true, 'rs'),
  kind('statefulsets', 'apps/v1', 'StatefulSet', true, 'sts'),
  kind('daemonsets', 'apps/v1', 'DaemonSet', true, 'ds'),
  kind('jobs', 'batch/v1', 'Job', true),
  kind('cronjobs', 'batch/v1', 'CronJob', true, 'cj'),
  kind('ingresses', 'networking.k8s.io/v1', 'Ingress', true, 'ing'),
  kind('horizontalpodautoscalers', 'autoscaling/v2', 'HorizontalPodAutoscaler', true, 'hpa'),
];

const BY_WORD = new Map<string, KindInfo>(KINDS.flatMap((info) => [info.name, ...info.aliases].map((word) => [word, info] as const)));

/** Words that name secrets in kubectl: refused with their own message wherever a kind is named. */
const SECRET_WORDS = new Set(['secrets', 'secret']);

/** The kind a word names (`deploy`, `deployment`, `deployments`, `deployments.apps`), or a 400 naming the known kinds. */
export function kindOf(word: string, field: string): KindInfo {
  const lower = word.toLowerCase().replace(/\.[a-z0-9.-]+$/, '');
  if (SECRET_WORDS.has(lower)) throw new BadRequestError(`${field}: secrets are never readable through an ops connector`);
  const info = BY_WORD.get(lower);
  if (!info) throw new BadRequestError(`${field}: unknown resource kind ${word}; the known kinds are ${KINDS.map((k) => k.name).join(', ')}`);
  return info;
}

/** The API path of one object: `/apis/apps/v1/namespaces/shop/deployments/web`, `/api/v1/nodes/node-1`. */
export function objectPath(kind: KindInfo, namespace: string | undefined, name: string): string {
  const group = kind.apiVersion.includes('/') ? `/apis/${kind.apiVersion}` : `/api/${kind.apiVersion}`;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${group}${scope}/${kind.name}/${encodeURIComponent(name)}`;
}
