/**
 * Runs a parsed read command (src/ops/commands.ts) on a connector's cluster, inside its
 * allowlists: every kind named must be allowlisted and every namespace too; cluster-wide lists
 * (namespaces) show only allowlisted namespaces. Answers are JSON, bounded by OPS_READ_MAX_BYTES:
 * a list is cut to fit (`truncated`), logs are cut by the cluster (limitBytes).
 */
import type * as K8s from '@kubernetes/client-node';
import { BadGatewayError, BadRequestError, ServiceError } from '../errors.ts';
import type { ConnectorRow } from '../connectors/store.ts';
import type { Services } from '../services.ts';
import { clusterOf, onCluster, type Cluster } from './cluster.ts';
import { MAX_COMMAND_LENGTH, parseReadCommand, type ReadCommand } from './commands.ts';
import { objectPath, type KindInfo } from './kinds.ts';
import { deploymentRevisions } from './revisions.ts';
import { allowedKind, allowedNamespace } from './settings.ts';

export interface ReadResult {
  result: unknown;
  truncated: boolean;
}

const DEFAULT_LIST_LIMIT = 100;
const FIELD = 'command';

/** What an object shows: without managedFields and the last-applied copy of itself (noise, and a second copy of everything). */
function shown<T extends K8s.KubernetesObject>(object: T): T {
  const metadata = { ...object.metadata };
  delete metadata.managedFields;
  if (metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']) {
    metadata.annotations = { ...metadata.annotations };
    delete metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'];
  }
  return { ...object, metadata };
}

/** Keeps the first items that fit in `maxBytes` once the answer around them is counted. */
function fitted<T>(items: T[], maxBytes: number, envelope: (items: T[]) => unknown): ReadResult {
  let size = Buffer.byteLength(JSON.stringify(envelope([])));
  const kept: T[] = [];
  for (const item of items) {
    size += Buffer.byteLength(JSON.stringify(item)) + 1;
    if (size > maxBytes) return { result: envelope(kept), truncated: true };
    kept.push(item);
  }
  return { result: envelope(kept), truncated: false };
}

/** The namespaces a namespaced read covers: -A means every allowlisted one. */
function namespacesOf(cluster: Cluster, kind: KindInfo, given: string | undefined, all: boolean): Array<string | undefined> {
  if (all) return kind.namespaced ? cluster.settings.namespaces : [undefined];
  return [allowedNamespace(cluster.settings, kind, given, FIELD)];
}

/** Up to `limit` objects over the namespaces; `more` when the cluster has more than were read. */
async function list(cluster: Cluster, kind: KindInfo, namespaces: Array<string | undefined>, selector?: string, limit = DEFAULT_LIST_LIMIT) {
  const items: K8s.KubernetesObject[] = [];
  let more = false;
  for (const namespace of namespaces) {
    const remaining = limit - items.length;
    if (remaining === 0) {
      more = true;
      break;
    }
    const page = await onCluster(() =>
      cluster.objects.list(kind.apiVersion, kind.kind, namespace, undefined, undefined, undefined, undefined, selector, remaining),
    );
    items.push(...page.items);
    if (page.metadata?._continue) more = true;
  }
  // only the allowlisted namespaces are shown, even to an identity that may list them all
  const visible = kind.name === 'namespaces' ? items.filter((item) => cluster.settings.namespaces.includes(item.metadata?.name ?? '')) : items;
  return { items: visible.map(shown), more };
}

async function readIfPresent(cluster: Cluster, kind: KindInfo, name: string): Promise<K8s.KubernetesObject | null> {
  try {
    return await onCluster(() => cluster.objects.read({ apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name } }));
  } catch (error) {
    if (error instanceof ServiceError && error.status === 404) return null;
    throw error;
  }
}

async function get(cluster: Cluster, command: Extract<ReadCommand, { verb: 'get' }>, maxBytes: number): Promise<ReadResult> {
  const kind = allowedKind(cluster.settings, command.kind, FIELD);
  if (command.name) {
    const namespace = allowedNamespace(cluster.settings, kind, command.namespace, FIELD);
    if (kind.name === 'namespaces' && !cluster.settings.namespaces.includes(command.name))
      throw new BadRequestError(`${FIELD}: namespace ${command.name} is not allowlisted on this connector`);
    const object = await onCluster(() => cluster.objects.read({ apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name: command.name!, namespace } }));
    return { result: shown(object), truncated: false };
  }
  if (kind.name === 'namespaces' && !command.selector) {
    // each allowlisted namespace by name: a list of every namespace could cut one off
    const found = await Promise.all(cluster.settings.namespaces.map((name) => readIfPresent(cluster, kind, name)));
    return { result: { kind: 'NamespaceList', items: found.filter((item) => item !== null).map(shown) }, truncated: false };
  }
  const { items, more } = await list(cluster, kind, namespacesOf(cluster, kind, command.namespace, command.allNamespaces), command.selector, command.limit);
  const answer = fitted(items, maxBytes, (kept) => ({ kind: `${kind.kind}List`, items: kept }));
  return { ...answer, truncated: answer.truncated || more };
}

interface EventLine {
  namespace?: string;
  type?: string;
  reason?: string;
  object: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
}

function eventLine(event: K8s.CoreV1Event): EventLine {
  const last = event.lastTimestamp ?? event.eventTime ?? event.metadata.creationTimestamp;
  return {
    namespace: event.metadata.namespace,
    type: event.type,
    reason: event.reason,
    object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
    message: event.message,
    count: event.count,
    lastTimestamp: last ? new Date(last).toISOString() : undefined,
  };
}

/** Events of a namespace, oldest first as kubectl shows them, optionally about one object (kind/name). */
async function eventsIn(cluster: Cluster, namespace: string, about?: { kind: KindInfo; name: string }): Promise<EventLine[]> {
  const fieldSelector = about ? `involvedObject.kind=${about.kind.kind},involvedObject.name=${about.name}` : undefined;
  const answer = await onCluster(() => cluster.core.listNamespacedEvent({ namespace, fieldSelector, limit: 500 }));
  return answer.items.map(eventLine).sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? ''));
}

async function events(cluster: Cluster, command: Extract<ReadCommand, { verb: 'events' }>, maxBytes: number): Promise<ReadResult> {
  const eventsKind = allowedKind(cluster.settings, 'events', FIELD);
  let about: { kind: KindInfo; name: string } | undefined;
  if (command.forObject) {
    const [word, name] = command.forObject.split('/');
    if (!word || !name) throw new BadRequestError(`${FIELD}: --for takes kind/name, e.g. --for pod/web-0`);
    about = { kind: allowedKind(cluster.settings, word, FIELD), name };
  }
  const lines: EventLine[] = [];
  for (const namespace of namespacesOf(cluster, eventsKind, command.namespace, command.allNamespaces))
    lines.push(...(await eventsIn(cluster, namespace!, about)));
  return fitted(lines, maxBytes, (kept) => ({ events: kept }));
}

async function describe(cluster: Cluster, command: Extract<ReadCommand, { verb: 'describe' }>): Promise<ReadResult> {
  const kind = allowedKind(cluster.settings, command.kind, FIELD);
  const namespace = allowedNamespace(cluster.settings, kind, command.namespace, FIELD);
  const object = await onCluster(() => cluster.objects.read({ apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name: command.name, namespace } }));
  // events are shown when the allowlist lets them be read at all, as kubectl describe shows them
  const mayReadEvents = namespace !== undefined && cluster.settings.kinds.some((allowed) => allowed.name === 'events');
  return {
    result: { object: shown(object), events: mayReadEvents ? await eventsIn(cluster, namespace, { kind, name: command.name }) : null },
    truncated: false,
  };
}

async function logs(cluster: Cluster, command: Extract<ReadCommand, { verb: 'logs' }>, maxBytes: number): Promise<ReadResult> {
  const kind = allowedKind(cluster.settings, 'pods', FIELD);
  const namespace = allowedNamespace(cluster.settings, kind, command.namespace, FIELD)!;
  const text = await onCluster(() =>
    cluster.core.readNamespacedPodLog({ name: command.pod, namespace, container: command.container, tailLines: command.tail, limitBytes: maxBytes }),
  );
  const body = typeof text === 'string' ? text : String(text);
  return { result: { pod: command.pod, namespace, container: command.container ?? null, log: body }, truncated: Buffer.byteLength(body) >= maxBytes };
}

async function top(cluster: Cluster, command: Extract<ReadCommand, { verb: 'top' }>, maxBytes: number): Promise<ReadResult> {
  const kind = allowedKind(cluster.settings, command.kind, FIELD);
  const namespace = allowedNamespace(cluster.settings, kind, command.namespace, FIELD);
  const path = namespace ? `/apis/metrics.k8s.io/v1beta1/namespaces/${namespace}/pods` : '/apis/metrics.k8s.io/v1beta1/nodes';
  let answer: { items?: Array<{ metadata?: { name?: string; namespace?: string }; usage?: unknown; containers?: unknown }> };
  try {
    answer = (await cluster.getJson(path)) as typeof answer;
  } catch (error) {
    if (error instanceof ServiceError && error.status === 404)
      throw new BadGatewayError('top reads the metrics API (metrics.k8s.io), which this cluster does not serve: it needs metrics-server');
    throw error;
  }
  const rows = (answer.items ?? []).map((item) => ({
    name: item.metadata?.name,
    namespace: item.metadata?.namespace,
    usage: item.usage ?? null,
    containers: item.containers ?? null,
  }));
  return fitted(rows, maxBytes, (kept) => ({ items: kept }));
}

/** kubectl's rollout status, worked out from the object's status as kubectl does. */
function rolloutStatus(kind: KindInfo, object: K8s.V1Deployment | K8s.V1StatefulSet | K8s.V1DaemonSet): { done: boolean; message: string } {
  const name = `${kind.kind.toLowerCase()} "${object.metadata?.name}"`;
  const generation = object.metadata?.generation ?? 0;
  const status = object.status as Record<string, number | undefined> | undefined;
  if ((status?.observedGeneration ?? 0) < generation) return { done: false, message: `Waiting for ${name} spec update to be observed...` };
  if (kind.name === 'daemonsets') {
    const desired = status?.desiredNumberScheduled ?? 0;
    const updated = status?.updatedNumberScheduled ?? 0;
    const available = status?.numberAvailable ?? 0;
    if (updated < desired) return { done: false, message: `Waiting for ${name} rollout to finish: ${updated} out of ${desired} new pods have been updated...` };
    if (available < desired) return { done: false, message: `Waiting for ${name} rollout to finish: ${available} of ${desired} updated pods are available...` };
    return { done: true, message: `${name} successfully rolled out` };
  }
  const wanted = (object.spec as { replicas?: number } | undefined)?.replicas ?? 1;
  const updated = status?.updatedReplicas ?? 0;
  const replicas = status?.replicas ?? 0;
  const available = kind.name === 'statefulsets' ? (status?.readyReplicas ?? 0) : (status?.availableReplicas ?? 0);
  if (updated < wanted) return { done: false, message: `Waiting for ${name} rollout to finish: ${updated} out of ${wanted} new replicas have been updated...` };
  if (replicas > updated)
    return { done: false, message: `Waiting for ${name} rollout to finish: ${replicas - updated} old replicas are pending termination...` };
  if (available < updated)
    return { done: false, message: `Waiting for ${name} rollout to finish: ${available} of ${updated} updated replicas are available...` };
  return { done: true, message: `${name} successfully rolled out` };
}

const ROLLOUT_KINDS = ['deployments', 'statefulsets', 'daemonsets'];

async function rollout(cluster: Cluster, command: Extract<ReadCommand, { verb: 'rollout status' | 'rollout history' }>): Promise<ReadResult> {
  const kind = allowedKind(cluster.settings, command.kind, FIELD);
  if (!ROLLOUT_KINDS.includes(kind.name)) throw new BadRequestError(`${FIELD}: rollout works on ${ROLLOUT_KINDS.join(', ')}, not ${kind.name}`);
  const namespace = allowedNamespace(cluster.settings, kind, command.namespace, FIELD)!;
  if (command.verb === 'rollout status') {
    const object = (await onCluster(() =>
      cluster.objects.read({ apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name: command.name, namespace } }),
    )) as K8s.V1Deployment;
    return { result: rolloutStatus(kind, object), truncated: false };
  }
  if (kind.name !== 'deployments') throw new BadRequestError(`${FIELD}: rollout history is kept for deployments only here`);
  const { revisions: owned } = await deploymentRevisions(cluster, objectPath(kind, namespace, command.name), namespace);
  const revisions = owned.map(({ revision, replicaSet }) => ({
    revision,
    replicaSet: replicaSet.metadata?.name ?? '',
    images: (replicaSet.spec?.template?.spec?.containers ?? []).map((container) => container.image ?? ''),
    changeCause: replicaSet.metadata?.annotations?.['kubernetes.io/change-cause'] ?? null,
    created: replicaSet.metadata?.creationTimestamp ?? null,
  }));
  return { result: { deployment: command.name, namespace, revisions }, truncated: false };
}

/** What the cluster serves of the allowlisted kinds (discovery), as kubectl api-resources lists them. */
async function apiResources(cluster: Cluster): Promise<ReadResult> {
  const groups = [...new Set(cluster.settings.kinds.map((kind) => kind.apiVersion))];
  const resources = [];
  for (const apiVersion of groups) {
    const list = (await cluster.getJson(apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`)) as K8s.V1APIResourceList;
    for (const resource of list.resources ?? []) {
      const allowed = cluster.settings.kinds.find((kind) => kind.name === resource.name && kind.apiVersion === apiVersion);
      if (allowed)
        resources.push({
          name: resource.name,
          shortNames: resource.shortNames ?? [],
          apiVersion,
          namespaced: resource.namespaced,
          kind: resource.kind,
          verbs: resource.verbs,
        });
    }
  }
  return { result: { resources }, truncated: false };
}

async function version(cluster: Cluster): Promise<ReadResult> {
  const info = await onCluster(() => cluster.version.getCode());
  return {
    result: { gitVersion: info.gitVersion, major: info.major, minor: info.minor, platform: info.platform, goVersion: info.goVersion },
    truncated: false,
  };
}

/** Runs the command on the cluster, within the connector's allowlists and the size bound. */
export function runRead(cluster: Cluster, command: ReadCommand, maxBytes: number): Promise<ReadResult> {
  switch (command.verb) {
    case 'get':
      return get(cluster, command, maxBytes);
    case 'describe':
      return describe(cluster, command);
    case 'logs':
      return logs(cluster, command, maxBytes);
    case 'top':
      return top(cluster, command, maxBytes);
    case 'events':
      return events(cluster, command, maxBytes);
    case 'rollout status':
    case 'rollout history':
      return rollout(cluster, command);
    case 'api-resources':
      return apiResources(cluster);
    case 'version':
      return version(cluster);
  }
}

export const OPS_READ_BODY_SCHEMA = {
  type: 'object',
  properties: { command: { type: 'string', minLength: 1, maxLength: MAX_COMMAND_LENGTH } },
  required: ['command'],
  additionalProperties: false,
} as const;

export const OPS_READ_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string' },
    // the cluster's objects as it answers them: open on purpose
    result: { type: ['object', 'array'] },
    truncated: { type: 'boolean' },
  },
  required: ['command', 'result', 'truncated'],
} as const;

/** Parses and runs a read command on the connector's cluster (the caller has authorized connectors:query). */
export async function runOpsRead(services: Services, connector: ConnectorRow, command: string) {
  const parsed = parseReadCommand(command);
  const cluster = await clusterOf(connector, services);
  const { result, truncated } = await runRead(cluster, parsed, services.config.opsReadMaxBytes);
  return { command: command.trim(), result: result as object, truncated };
}
