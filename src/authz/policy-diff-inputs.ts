/**
 * What policy-diff compares the two builds on: the inputs of the decisions the service recorded
 * (decision-log lines, each distinct input once) and the sweep of an org's data document (every
 * principal × catalogued action × resource of that action's kind the document names).
 */
import { ACTIONS } from './actions.ts';
import type { AuthzInput, OrgDocument, ResourceRef, Subject } from './types.ts';

/** The kinds scopes.rego names resources of; an action of another kind is swept without a resource. */
const POLICY_KINDS = new Set([
  'dashboards',
  'folders',
  'alert.rules',
  'connectors',
  'teams',
  'users',
  'annotations',
  'alert.silences',
  'apikeys',
  'global.users',
  'investigations',
  'orgs',
  'roles',
  'serviceaccounts',
  'settings',
]);

/** The kind of resource an action's requests name, where it is not the action's own prefix (alert rules are decided on their folder). */
const KIND_OF_PREFIX: Record<string, string> = {
  'dashboards.permissions': 'dashboards',
  'folders.permissions': 'folders',
  'alert.rules': 'folders',
  'alert.rules.permissions': 'folders',
  'connectors.permissions': 'connectors',
  'team.permissions': 'teams',
  'org.users': 'users',
  'orgs.preferences': 'orgs',
  'orgs.quotas': 'orgs',
};

/** The uid of the root folder, where a folder is created without a parent (src/http/resource-uid.ts). */
const ROOT_FOLDER_UID = 'general';

export interface RecordedDecisions {
  /** The inputs of the entries, each distinct input once, in the order first seen. */
  inputs: AuthzInput[];
  /** Entries read (lines holding a decision-log entry). */
  entries: number;
  /** Lines that hold no decision-log entry (malformed JSON, no input): left out and counted. */
  skipped: number;
  /** Entries not read because the bound was reached. */
  cut: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a logged input has what the policy needs to decide it again: a subject, an org (or null) and an action. */
function isReplayable(input: unknown): input is AuthzInput {
  if (!isRecord(input) || !isRecord(input.subject) || typeof input.action !== 'string') return false;
  const { subject } = input;
  return typeof subject.id === 'string' && typeof subject.kind === 'string' && (input.org_id === null || typeof input.org_id === 'string');
}

/**
 * The decision log's entries (src/authz/decision-log.ts writes them, one JSON line each), read up
 * to `limit` entries: their inputs, each distinct one once.
 */
export async function readRecordedDecisions(lines: AsyncIterable<string> | Iterable<string>, limit: number): Promise<RecordedDecisions> {
  const seen = new Map<string, AuthzInput>();
  let entries = 0;
  let skipped = 0;
  let cut = false;
  for await (const line of lines) {
    if (!line.trim()) continue;
    if (entries >= limit) {
      cut = true;
      break;
    }
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    const input = isRecord(entry) ? entry.input : undefined;
    if (!isReplayable(input)) {
      skipped++;
      continue;
    }
    entries++;
    const key = JSON.stringify(input);
    if (!seen.has(key)) seen.set(key, input);
  }
  return { inputs: [...seen.values()], entries, skipped, cut };
}

/** A resource reference from a scope a grant names (`folders:uid:f1`, `teams:id:3`); null for wildcards and other shapes. */
function resourceOfScope(scope: string): ResourceRef | null {
  const parts = scope.split(':');
  if (parts.length < 3) return null;
  const [kind, attr] = parts as [string, string];
  const value = parts.slice(2).join(':');
  if (!POLICY_KINDS.has(kind) || value === '' || value === '*') return null;
  if (attr === 'uid') return { kind, uid: value };
  if (attr === 'id') return { kind, id: value };
  return null;
}

const refKey = (ref: ResourceRef) => JSON.stringify(ref);

/** Every resource of each kind the document names: its folders (and the root), dashboards, teams, members, roles, the org, and what role grants scope. */
function resourcesByKind(document: OrgDocument): Map<string, ResourceRef[]> {
  const byKind = new Map<string, Map<string, ResourceRef>>();
  const add = (ref: ResourceRef) => {
    const kind = 'kind' in ref ? ref.kind : '';
    const refs = byKind.get(kind) ?? byKind.set(kind, new Map()).get(kind)!;
    refs.set(refKey(ref), ref);
  };
  add({ kind: 'folders', uid: ROOT_FOLDER_UID });
  for (const uid of Object.keys(document.folders)) add({ kind: 'folders', uid });
  for (const uid of Object.keys(document.dashboards)) add({ kind: 'dashboards', uid });
  for (const id of Object.keys(document.teams)) add({ kind: 'teams', id });
  for (const id of Object.keys(document.members)) add({ kind: 'users', id });
  for (const uid of Object.keys(document.roles)) add({ kind: 'roles', uid });
  for (const uid of Object.keys(document.label_rules)) add({ kind: 'connectors', uid });
  if (document.org_id !== null) add({ kind: 'orgs', id: document.org_id });
  for (const permissions of Object.values(document.roles))
    for (const scopes of Object.values(permissions))
      for (const scope of Object.keys(scopes)) {
        const ref = resourceOfScope(scope);
        if (ref) add(ref);
      }
  return new Map([...byKind].map(([kind, refs]) => [kind, [...refs.values()]]));
}

/** The resources an action is swept on; `[undefined]`: asked once without a resource. */
function resourcesOfAction(action: string, byKind: Map<string, ResourceRef[]>): Array<ResourceRef | undefined> {
  const prefix = action.slice(0, action.indexOf(':'));
  const resources = byKind.get(KIND_OF_PREFIX[prefix] ?? prefix);
  return resources && resources.length > 0 ? resources : [undefined];
}

/** The sweep of an org's document: every subject × catalogued action × resource of the action's kind. */
export interface Sweep {
  orgId: string;
  /** How many inputs the whole sweep holds. */
  size: number;
  inputs(): Generator<AuthzInput>;
}

/**
 * The sweep of `document` for `subjects` (the org's members as the service sees them; without
 * them, each member of the document as an enabled user). Action by action, so that a sweep cut
 * short by its bound has asked every subject of the actions it reached.
 */
export function sweepOf(document: OrgDocument, subjects?: Subject[]): Sweep {
  if (document.org_id === null) throw new Error('a sweep needs an org document');
  const orgId = document.org_id;
  const who = subjects ?? Object.keys(document.members).map((id): Subject => ({ id, kind: 'user', server_admin: false, disabled: false }));
  const byKind = resourcesByKind(document);
  const size = ACTIONS.reduce((total, action) => total + resourcesOfAction(action, byKind).length * who.length, 0);
  return {
    orgId,
    size,
    *inputs() {
      for (const action of ACTIONS)
        for (const resource of resourcesOfAction(action, byKind))
          for (const subject of who) yield resource ? { subject, org_id: orgId, action, resource } : { subject, org_id: orgId, action };
    },
  };
}
