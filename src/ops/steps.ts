/**
 * The steps of an ops plan: what each kind takes, its checks against the connector's allowlists,
 * and how it runs on the cluster, for real or as a server-side dry run (`dryRun=All`: the cluster
 * validates and admits the change but stores nothing). Each step does what its kubectl command
 * does: `scale`, `rollout restart`, `rollout undo`, `cordon`, `uncordon`, `delete pod`, `patch`.
 */
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Infer } from '../http/guard.ts';
import { onCluster, type Cluster } from './cluster.ts';
import { objectPath, type KindInfo } from './kinds.ts';
import { deploymentRevisions } from './revisions.ts';
import { allowedKind, allowedNamespace, type OpsSettings } from './settings.ts';

export const STEP_KINDS = ['scale', 'rollout-restart', 'rollout-undo', 'cordon', 'uncordon', 'delete-pod', 'apply-patch'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** The kinds of object each step acts on; apply-patch takes any allowlisted kind. */
const TARGET_KINDS: Record<StepKind, readonly string[] | null> = {
  scale: ['deployments', 'statefulsets', 'replicasets'],
  'rollout-restart': ['deployments', 'statefulsets', 'daemonsets'],
  'rollout-undo': ['deployments'],
  cordon: ['nodes'],
  uncordon: ['nodes'],
  'delete-pod': ['pods'],
  'apply-patch': null,
};

/** A patch is kept with its plan and shown to the approver: small. */
const MAX_PATCH_BYTES = 16 * 1024;

/** A step as proposed: the items of `steps` in `POST …/ops/plans` and in `ops_plan_create`. */
export const stepSchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: [...STEP_KINDS] },
    /** `<kind>/<name>` as kubectl takes it: `deployment/web`, `node/node-1`. */
    target: { type: 'string', minLength: 1, maxLength: 320 },
    namespace: { type: 'string', minLength: 1, maxLength: 63 },
    replicas: { type: 'integer', minimum: 0, maximum: 1000 },
    toRevision: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
    patch: { type: 'object', minProperties: 1 },
  },
  required: ['kind', 'target'],
  additionalProperties: false,
} as const;

export type StepInput = Infer<typeof stepSchema>;

/** A step checked against the allowlists: the object it acts on, by kind, name and namespace (none for nodes). */
export interface Step {
  kind: StepKind;
  resource: KindInfo;
  name: string;
  namespace: string | undefined;
  replicas?: number;
  toRevision?: number;
  patch?: Record<string, unknown>;
}

/** A kind word, then an object name as Kubernetes names objects (a DNS subdomain). */
const TARGET = /^([A-Za-z][A-Za-z0-9.-]*)\/([a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?)$/;

/** Which of replicas, toRevision and patch each kind needs (true), refuses (absent) or may take (false). */
const FIELDS: Record<StepKind, Partial<Record<'replicas' | 'toRevision' | 'patch', boolean>>> = {
  scale: { replicas: true },
  'rollout-restart': {},
  'rollout-undo': { toRevision: false },
  cordon: {},
  uncordon: {},
  'delete-pod': {},
  'apply-patch': { patch: true },
};

/**
 * The step `input` names, checked against the connector's allowlists: 400 naming the field (and
 * the allowlist) when its kind or namespace is not allowlisted, its target is not a kind the step
 * acts on, or a field is missing or does not belong to the step.
 */
export function resolveStep(settings: OpsSettings, input: StepInput, field: string): Step {
  const kind = input.kind as StepKind;
  const match = TARGET.exec(input.target);
  if (!match) throw new BadRequestError(`${field}.target must be <kind>/<name>, as deployment/web`);
  const resource = allowedKind(settings, match[1]!, `${field}.target`);
  const accepted = TARGET_KINDS[kind];
  if (accepted && !accepted.includes(resource.name))
    throw new BadRequestError(`${field}.target: ${kind} acts on ${accepted.join(' or ')}, not ${resource.name}`);
  const fields = FIELDS[kind];
  for (const name of ['replicas', 'toRevision', 'patch'] as const) {
    if (fields[name] === true && input[name] === undefined) throw new BadRequestError(`${field}.${name} is required for ${kind}`);
    if (fields[name] === undefined && input[name] !== undefined) throw new BadRequestError(`${field}.${name} is not used by ${kind}`);
  }
  if (input.patch && JSON.stringify(input.patch).length > MAX_PATCH_BYTES) throw new BadRequestError(`${field}.patch is larger than ${MAX_PATCH_BYTES} bytes`);
  return {
    kind,
    resource,
    name: match[2]!,
    namespace: allowedNamespace(settings, resource, input.namespace, `${field}.namespace`),
    ...(input.replicas !== undefined && { replicas: input.replicas }),
    ...(input.toRevision !== undefined && { toRevision: input.toRevision }),
    ...(input.patch !== undefined && { patch: input.patch as Record<string, unknown> }),
  };
}

/** `deployments/web in shop`, `nodes/node-1`. */
export function describeObject(step: Pick<Step, 'resource' | 'namespace' | 'name'>): string {
  return `${step.resource.name}/${step.name}${step.namespace === undefined ? '' : ` in ${step.namespace}`}`;
}

const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

/**
 * kubectl's `rollout undo`: the ReplicaSet the deployment owns with the asked revision (else the
 * newest one before the current revision), whose pod template, without the `pod-template-hash`
 * label the controller adds, replaces the deployment's.
 */
async function undoPatch(cluster: Cluster, step: Step, path: string): Promise<{ revision: number; patch: unknown[] }> {
  const { revisions, current } = await deploymentRevisions(cluster, path, step.namespace!);
  const newestFirst = [...revisions].reverse();
  const chosen =
    step.toRevision === undefined ? newestFirst.find(({ revision }) => revision < current) : revisions.find(({ revision }) => revision === step.toRevision);
  if (!chosen) {
    const known = revisions.map(({ revision }) => revision).join(', ') || 'none';
    throw new NotFoundError(
      step.toRevision === undefined
        ? `${describeObject(step)} has no revision before ${current} to roll back to (revisions: ${known})`
        : `${describeObject(step)} has no revision ${step.toRevision} (revisions: ${known})`,
    );
  }
  const template = structuredClone(chosen.replicaSet.spec?.template ?? {});
  delete template.metadata?.labels?.['pod-template-hash'];
  return { revision: chosen.revision, patch: [{ op: 'replace', path: '/spec/template', value: template }] };
}

/**
 * Runs the step on the cluster, or asks for a dry run of it: what it did, as a sentence; throws
 * the cluster's refusal as a ServiceError (clusterError). `now` stamps a rollout restart, as
 * kubectl stamps it with its clock.
 */
export async function runStep(cluster: Cluster, step: Step, dryRun: boolean, now: number): Promise<string> {
  const { PatchStrategy } = cluster.k8s;
  const query = dryRun ? '?dryRun=All' : '';
  const object = describeObject(step);
  const path = objectPath(step.resource, step.namespace, step.name);
  const done = (what: string) => (dryRun ? `the cluster accepts it (dry run): ${what}` : what);
  switch (step.kind) {
    case 'scale':
      await cluster.patchJson(`${path}/scale${query}`, { spec: { replicas: step.replicas } }, PatchStrategy.MergePatch);
      return done(`scaled ${object} to ${step.replicas} replicas`);
    case 'rollout-restart': {
      // kubectl's timestamp: RFC 3339 to the second
      const restartedAt = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
      const patch = { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: restartedAt } } } } };
      await cluster.patchJson(`${path}${query}`, patch, PatchStrategy.StrategicMergePatch);
      return done(`restarted ${object} (${RESTARTED_AT} ${restartedAt})`);
    }
    case 'rollout-undo': {
      const { revision, patch } = await undoPatch(cluster, step, path);
      await cluster.patchJson(`${path}${query}`, patch, PatchStrategy.JsonPatch);
      return done(`rolled ${object} back to revision ${revision}`);
    }
    case 'cordon':
    case 'uncordon': {
      const unschedulable = step.kind === 'cordon';
      await cluster.patchJson(`${path}${query}`, { spec: { unschedulable } }, PatchStrategy.StrategicMergePatch);
      return done(`${unschedulable ? 'cordoned' : 'uncordoned'} ${object}`);
    }
    case 'delete-pod':
      await onCluster(() => cluster.core.deleteNamespacedPod({ name: step.name, namespace: step.namespace!, ...(dryRun && { dryRun: 'All' }) }));
      return done(`deleted ${object}`);
    case 'apply-patch':
      await cluster.patchJson(`${path}${query}`, step.patch, PatchStrategy.StrategicMergePatch);
      return done(`patched ${object}`);
  }
}
