/**
 * What a SCIM client may say about a user, read from a resource (POST, PUT) or a list of PATCH
 * operations, into the few fields this service keeps: userName (the login), one email, a display
 * name, active and externalId. Read-only attributes (id, meta, groups) are ignored, as RFC 7643
 * asks, and so are attributes this service does not keep (phone numbers, the enterprise
 * extension); nothing a client sends reaches the server-admin flag, an org role or a password.
 */
import { compileGuard } from '../http/guard.ts';
import { emailSchema, loginSchema, nameSchema } from '../http/schemas.ts';
import { invalidPath, invalidValue } from './errors.ts';
import { USER_URN } from './presenter.ts';

export interface UserFields {
  userName: string;
  name: string;
  email: string | null;
  active: boolean;
  externalId: string | null;
}

export const externalIdSchema = { type: 'string', minLength: 1, maxLength: 190, pattern: nameSchema.pattern } as const;

const checkLogin = compileGuard('body.userName', loginSchema);
const checkEmail = compileGuard('body.emails.value', emailSchema);
const checkName = compileGuard('body.displayName', nameSchema);
const checkExternalId = compileGuard('body.externalId', externalIdSchema);

/** The object's own keys, lower-cased: SCIM attribute names are case-insensitive. */
function lowerKeys(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidValue(`${what} must be an object`);
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.toLowerCase(), inner]));
}

const URN_PREFIX = `${USER_URN}:`.toLowerCase();

/** A user's fields as a request sets them, before the display name is settled. */
interface Draft {
  userName?: string;
  displayName?: string | null;
  formatted?: string;
  givenName?: string;
  familyName?: string;
  email?: string | null;
  active?: boolean;
  externalId?: string | null;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalidValue(`${what} must be a string`);
  return value;
}

function active(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  // Microsoft Entra ID sends "True" and "False" in PATCH operations
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue('active must be a boolean');
}

/** The email a list of SCIM emails names: the primary one, else the first; none for an empty list. */
function primaryEmail(value: unknown): string | null {
  if (value === null) return null;
  if (!Array.isArray(value)) throw invalidValue('emails must be a list of {value, type, primary}');
  if (value.length === 0) return null;
  const entries = value.map((entry) => lowerKeys(entry, 'an email'));
  const chosen = entries.find((entry) => entry.primary === true) ?? entries[0]!;
  return text(chosen.value, 'emails.value');
}

function setName(draft: Draft, value: unknown): void {
  if (value === null) {
    draft.formatted = undefined;
    return;
  }
  const name = lowerKeys(value, 'name');
  if (name.formatted !== undefined) draft.formatted = text(name.formatted, 'name.formatted');
  if (name.givenname !== undefined) draft.givenName = text(name.givenname, 'name.givenName');
  if (name.familyname !== undefined) draft.familyName = text(name.familyname, 'name.familyName');
}

/** Sets one attribute (a lower-cased path without the core URN) on the draft. */
function setAttribute(draft: Draft, path: string, value: unknown): void {
  if (path === 'username') draft.userName = text(value, 'userName');
  else if (path === 'displayname') draft.displayName = value === null ? null : text(value, 'displayName');
  else if (path === 'name') setName(draft, value);
  else if (path === 'name.formatted') draft.formatted = text(value, 'name.formatted');
  else if (path === 'name.givenname') draft.givenName = text(value, 'name.givenName');
  else if (path === 'name.familyname') draft.familyName = text(value, 'name.familyName');
  else if (path === 'emails') draft.email = primaryEmail(value);
  // one email is kept: `emails.value` and `emails[type eq "work"].value` both name it
  else if (path === 'emails.value' || /^emails\[[^\]]*\]\.value$/.test(path)) draft.email = text(value, 'emails.value');
  else if (path === 'active') draft.active = active(value);
  else if (path === 'externalid') draft.externalId = value === null ? null : text(value, 'externalId');
  else if (path === 'password') throw invalidValue('password is not supported: SCIM users sign in through the identity provider');
}

const READ_ONLY = new Set(['id', 'meta', 'groups', 'schemas']);

function setResource(draft: Draft, resource: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(resource)) {
    const path = key.startsWith(URN_PREFIX) ? key.slice(URN_PREFIX.length) : key;
    if (path === 'name' && value !== null) setName(draft, value);
    else if (!READ_ONLY.has(path)) setAttribute(draft, path, value);
  }
}

/** The fields the draft settles to, over `current` (a PATCH) or nothing (a POST or PUT). */
function settle(draft: Draft, current: UserFields | null): UserFields {
  const userName = draft.userName ?? current?.userName;
  if (userName === undefined) throw invalidValue('userName is required');
  const composed = [draft.givenName, draft.familyName].filter((part) => part?.trim()).join(' ');
  const name = draft.displayName ?? draft.formatted ?? (composed || undefined) ?? (draft.displayName === null ? userName : current?.name) ?? userName;
  const fields: UserFields = {
    userName: checkLogin(userName) as string,
    name: checkName(name.trim() || userName) as string,
    email: draft.email === undefined ? (current?.email ?? null) : draft.email,
    active: draft.active ?? current?.active ?? true,
    externalId: draft.externalId === undefined ? (current?.externalId ?? null) : draft.externalId,
  };
  if (fields.email !== null) checkEmail(fields.email);
  if (fields.externalId !== null) checkExternalId(fields.externalId);
  return fields;
}

/** The user a POST or PUT body describes. */
export function userFromResource(body: unknown): UserFields {
  const draft: Draft = {};
  setResource(draft, lowerKeys(body, 'the request body'));
  return settle(draft, null);
}

export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** The operations of a PatchOp body, their names lower-cased (Entra ID sends "Replace"). */
export function patchOperations(body: unknown): PatchOperation[] {
  const request = lowerKeys(body, 'the request body');
  const operations = request.operations;
  if (!Array.isArray(operations) || operations.length === 0) throw invalidValue('Operations must be a non-empty list');
  if (operations.length > 100) throw invalidValue('a PATCH request may hold at most 100 operations');
  return operations.map((entry) => {
    const operation = lowerKeys(entry, 'an operation');
    const op = typeof operation.op === 'string' ? operation.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw invalidValue('op must be add, replace or remove');
    if (operation.path !== undefined && typeof operation.path !== 'string') throw invalidPath('path must be a string');
    return { op, path: operation.path as string | undefined, value: operation.value };
  });
}

/** The user after the PATCH operations, applied in order to `current`. */
export function patchUser(current: UserFields, operations: PatchOperation[]): UserFields {
  const draft: Draft = {};
  for (const operation of operations) {
    const path = operation.path?.trim().toLowerCase();
    const attribute = path?.startsWith(URN_PREFIX) ? path.slice(URN_PREFIX.length) : path;
    if (operation.op === 'remove') {
      if (attribute === undefined) throw invalidPath('a remove operation needs a path');
      if (attribute === 'externalid') draft.externalId = null;
      else if (attribute === 'displayname') draft.displayName = null;
      else if (attribute === 'emails' || attribute === 'emails.value' || /^emails\[[^\]]*\]$/.test(attribute)) draft.email = null;
      else throw invalidPath(`${operation.path} cannot be removed`);
    } else if (attribute === undefined) {
      setResource(draft, lowerKeys(operation.value, 'the value of an operation without a path'));
    } else if (!isKnownUserPath(attribute)) {
      throw invalidPath(`${operation.path} is not an attribute of a user this service keeps`);
    } else {
      setAttribute(draft, attribute, operation.value);
    }
  }
  return settle(draft, current);
}

function isKnownUserPath(path: string): boolean {
  return (
    [
      'username',
      'displayname',
      'name',
      'name.formatted',
      'name.givenname',
      'name.familyname',
      'emails',
      'emails.value',
      'active',
      'externalid',
      'password',
    ].includes(path) || /^emails\[[^\]]*\]\.value$/.test(path)
  );
}
