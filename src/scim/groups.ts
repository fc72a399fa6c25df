/**
 * What a SCIM client may say about a group (a team of the org): its displayName, externalId and
 * members, read from a resource (POST, PUT) or PATCH operations. Members are named by the SCIM
 * id of a user (`{value}`); a PATCH adds, removes (`members[value eq "…"]`, or a list of
 * values as Entra ID sends it) or replaces them.
 */
import { compileGuard } from '../http/guard.ts';
import { nonBlankNameSchema } from '../http/schemas.ts';
import { invalidFilter, invalidPath, invalidValue } from './errors.ts';
import { GROUP_URN } from './presenter.ts';
import { externalIdSchema, type PatchOperation } from './users.ts';
import { parse, type Filter } from 'scim2-parse-filter';

export interface GroupFields {
  displayName: string;
  externalId: string | null;
}

/** How the group's members change: set to exactly these, or some added and some removed. */
export type MemberChange = { kind: 'replace'; ids: string[] } | { kind: 'add'; ids: string[] } | { kind: 'remove'; ids: string[] } | { kind: 'removeAll' };

const checkName = compileGuard('body.displayName', nonBlankNameSchema);
const checkExternalId = compileGuard('body.externalId', externalIdSchema);
const URN_PREFIX = `${GROUP_URN}:`.toLowerCase();
const MAX_MEMBERS = 1000;

function lowerKeys(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidValue(`${what} must be an object`);
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.toLowerCase().replace(URN_PREFIX, ''), inner]));
}

/** The user ids of a SCIM member list (`[{value}]`). */
function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_MEMBERS) throw invalidValue(`a request may name at most ${MAX_MEMBERS} members`);
  return [
    ...new Set(
      list.map((entry) => {
        const id = lowerKeys(entry, 'a member').value;
        if (typeof id !== 'string' || id.length === 0 || id.length > 40) throw invalidValue('a member is {"value": "<user id>"}');
        return id;
      }),
    ),
  ];
}

function displayName(value: unknown): string {
  if (typeof value !== 'string') throw invalidValue('displayName must be a string');
  return (checkName(value) as string).trim();
}

function externalId(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw invalidValue('externalId must be a string');
  return checkExternalId(value) as string;
}

/** The group a POST or PUT body describes, with the members it lists (none when it lists none). */
export function groupFromResource(body: unknown): { fields: GroupFields; members: string[] } {
  const resource = lowerKeys(body, 'the request body');
  if (resource.displayname === undefined) throw invalidValue('displayName is required');
  return {
    fields: { displayName: displayName(resource.displayname), externalId: resource.externalid === undefined ? null : externalId(resource.externalid) },
    members: resource.members === undefined || resource.members === null ? [] : memberIds(resource.members),
  };
}

/** The user id a `members[value eq "…"]` path names. */
function memberOfPath(path: string): string {
  let filter: Filter;
  try {
    filter = parse(path);
  } catch {
    throw invalidPath(`${path} is not a valid path`);
  }
  if (filter.op !== '[]' || filter.attrPath.toLowerCase() !== 'members') throw invalidPath(`${path} is not a path of a group`);
  const inner = filter.valFilter;
  if (inner.op !== 'eq' || inner.attrPath.toLowerCase() !== 'value' || typeof inner.compValue !== 'string') {
    throw invalidFilter('a member is selected with members[value eq "<user id>"]');
  }
  return inner.compValue;
}

/** The group's fields and member changes after PATCH operations, in order. */
export function patchGroup(current: GroupFields, operations: PatchOperation[]): { fields: GroupFields; changes: MemberChange[] } {
  const fields = { ...current };
  const changes: MemberChange[] = [];
  const set = (attribute: string, value: unknown, op: string) => {
    if (attribute === 'displayname') fields.displayName = displayName(value);
    else if (attribute === 'externalid') fields.externalId = externalId(value);
    else if (attribute === 'members') changes.push({ kind: op === 'add' ? 'add' : 'replace', ids: value === null ? [] : memberIds(value) });
    else if (attribute !== 'id' && attribute !== 'meta' && attribute !== 'schemas') throw invalidPath(`${attribute} is not an attribute of a group`);
  };
  for (const operation of operations) {
    const raw = operation.path?.trim();
    const path = raw?.toLowerCase().replace(URN_PREFIX, '');
    if (operation.op === 'remove') {
      if (path === undefined) throw invalidPath('a remove operation needs a path');
      if (path === 'members') {
        changes.push(operation.value === undefined ? { kind: 'removeAll' } : { kind: 'remove', ids: memberIds(operation.value) });
      } else if (path.startsWith('members[')) {
        changes.push({ kind: 'remove', ids: [memberOfPath(raw!)] });
      } else if (path === 'externalid') {
        fields.externalId = null;
      } else {
        throw invalidPath(`${raw} cannot be removed`);
      }
    } else if (path === undefined) {
      for (const [attribute, value] of Object.entries(lowerKeys(operation.value, 'the value of an operation without a path')))
        set(attribute, value, operation.op);
    } else {
      set(path, operation.value, operation.op);
    }
  }
  return { fields, changes };
}
