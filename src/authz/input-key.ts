/**
 * Keys of the engine's kept answers (src/authz/decision-cache.ts), and the inputs the policy is
 * asked with. The policy reads only its input and its org's document, so an answer may be kept
 * under its input, as long as the key tells apart any two inputs the policy could answer
 * differently:
 *
 * - The policy is asked with the input as its key describes it (policyInput, activeOrgPolicyInput,
 *   filterPolicyInput): the declared fields and nothing else, so a property a caller's object
 *   carries besides the type can neither reach the policy nor be missing from the key.
 * - A string goes into the key as its length and itself; a boolean, null and undefined as a letter
 *   of their own; anything else (an id given as a number, the rare fields' objects and lists) as
 *   `#` and its JSON and `#`. JSON reads back unambiguously, so no part can run into the next,
 *   whatever an attacker puts in an id.
 *
 * Written field by field rather than as the input's JSON and its hash: a kept answer is found in
 * well under a microsecond this way. test/input-key.test.ts changes each field of a fully
 * populated input in turn and checks that the key and the policy's input change with it: a field
 * added to these types and left out here fails it.
 */
import { createHash } from 'node:crypto';
import type { ActiveOrgInput, AuthzInput, FilterInput, ResourceRef, Subject, VisibleInput } from './types.ts';

function part(value: unknown): string {
  if (typeof value === 'string') return `${value.length}:${value}`;
  if (value === true) return 'T';
  if (value === false) return 'F';
  if (value === null) return 'N';
  if (value === undefined) return 'U';
  return `#${JSON.stringify(value)}#`;
}

/** Every field of the subject: the policy reads them all (authz/subject). */
export function subjectKey(subject: Subject): string {
  return `${part(subject.id)}${part(subject.kind)}${part(subject.server_admin)}${part(subject.disabled)}`;
}

/** The subject the policy is asked with, for an answer kept under subjectKey: its declared fields only. */
export function subjectCopy(subject: Subject): Subject {
  return { id: subject.id, kind: subject.kind, server_admin: subject.server_admin, disabled: subject.disabled };
}

/** A resource by each field any of its shapes has (scopes.target tells the shapes apart by which are set). */
function resourceKey(resource: ResourceRef | undefined): string {
  if (resource === undefined) return 'U';
  const { kind, uid, id, scope } = resource as Partial<Record<'kind' | 'uid' | 'id' | 'scope', unknown>>;
  return `{${part(kind)}${part(uid)}${part(id)}${part(scope)}`;
}

function resourceCopy(resource: ResourceRef): ResourceRef {
  const { kind, uid, id, scope } = resource as Partial<Record<'kind' | 'uid' | 'id' | 'scope', string>>;
  return { kind, uid, id, scope } as ResourceRef;
}

type RareField = Exclude<keyof AuthzInput, 'subject' | 'org_id' | 'action' | 'resource'>;

/** The fields few decisions carry (chat, delegation, org membership changes, moves, setup, requirements, authorship), each keyed whole. */
const RARE_FIELDS = Object.keys({
  chat: true,
  delegate: true,
  target_user: true,
  destination: true,
  setup: true,
  requires: true,
  author: true,
} satisfies Record<RareField, true>) as RareField[];

/** The fields few decisions carry, as one key: '' when there are none (most decisions). */
function rareFieldsKey(input: AuthzInput): string {
  let rare = '';
  for (const field of RARE_FIELDS) if (input[field] !== undefined) rare += `${field}=${part(input[field])}`;
  return rare;
}

/** The key of an authorize() answer: every field policyInput(input) asks with. */
export function decisionKey(input: AuthzInput): string {
  return `${subjectKey(input.subject)}${part(input.org_id)}${part(input.action)}${resourceKey(input.resource)}${rareFieldsKey(input)}`;
}

/** The key of a permissions() answer. */
export function permissionsKey(subject: Subject, orgId: string | null): string {
  return `${subjectKey(subject)}${part(orgId)}`;
}

/** The input the policy is asked with for a kept authorize() answer: its declared fields. */
export function policyInput(input: AuthzInput): AuthzInput {
  const copy: AuthzInput = { subject: subjectCopy(input.subject), org_id: input.org_id, action: input.action };
  if (input.resource !== undefined) copy.resource = resourceCopy(input.resource);
  for (const field of RARE_FIELDS) if (input[field] !== undefined) (copy as unknown as Record<string, unknown>)[field] = input[field];
  return copy;
}

/** The key of an activeOrg() answer. */
export function activeOrgKey(input: ActiveOrgInput): string {
  return `${subjectKey(input.subject)}${part(input.subject.pinned_org)}${part(input.org_id)}${part(input.org.is_member)}`;
}

/** The input the policy is asked with for an answer kept under activeOrgKey(input). */
export function activeOrgPolicyInput(input: ActiveOrgInput): ActiveOrgInput {
  const subject = subjectCopy(input.subject) as ActiveOrgInput['subject'];
  subject.pinned_org = input.subject.pinned_org;
  return { subject, org_id: input.org_id, org: { is_member: input.org.is_member } };
}

/** The key of a visible() answer: every field of its input. */
export function visibleKey(input: VisibleInput): string {
  return `${subjectKey(input.subject)}${part(input.org_id)}${part(input.action)}${part(input.kind)}`;
}

/** The input the policy is asked with for an answer kept under visibleKey(input). */
export function visiblePolicyInput(input: VisibleInput): VisibleInput {
  return { subject: subjectCopy(input.subject), org_id: input.org_id, action: input.action, kind: input.kind };
}

type FilterItem = FilterInput['resources'][number];

/**
 * The key of a filter() answer: the SHA-256 of every field, each item's in its order. A list
 * runs to thousands of items (every team of a large org), so the key is its digest rather than
 * tens of kilobytes kept beside each answer.
 */
export function filterKey(input: FilterInput): string {
  let key = `${subjectKey(input.subject)}${part(input.org_id)}${part(input.action)}`;
  for (const item of input.resources) key += `${resourceKey(item)}${part(item.requires)}`;
  return createHash('sha256').update(key).digest('base64');
}

/** The input the policy is asked with for an answer kept under filterKey(input). */
export function filterPolicyInput(input: FilterInput): FilterInput {
  const resources = input.resources.map((item): FilterItem => {
    const copy: FilterItem = resourceCopy(item);
    if (item.requires !== undefined) copy.requires = item.requires;
    return copy;
  });
  return { subject: subjectCopy(input.subject), org_id: input.org_id, action: input.action, resources };
}
