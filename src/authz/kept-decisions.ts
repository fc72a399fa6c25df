/**
 * The authorize() answers the engine keeps, at most `max` of them, the least recently asked
 * dropped first. An answer is kept under its whole input (src/authz/input-key.ts says why that
 * is enough), and given only to an input that asks the same question.
 *
 * An entry is found under a short key, the subject's id, the action and the resource's uid, id
 * or scope, and every field of its question is then compared with the input's one by one, so two
 * questions that happen to share a key (an id holding the separator) never share an answer: the
 * second replaces the first. One key spelling out every field unambiguously (what this replaced)
 * cost about 3 µs of a kept answer's 5 to build, flatten and hash at 32,768 entries.
 */
import type { OrgPolicy } from './loaded-document.ts';
import type { AuthzInput, Decision, PermissionMap } from './types.ts';
import { rareFieldsKey } from './input-key.ts';
import { LruOrder, type LruLinks } from '../memo.ts';

interface Entry<V> extends LruLinks<Entry<V>> {
  key: string;
  /** Its question, compared field by field on every lookup. */
  subjectId: unknown;
  action: unknown;
  kind: unknown;
  serverAdmin: unknown;
  disabled: unknown;
  orgId: unknown;
  hasResource: boolean;
  resourceKind: unknown;
  uid: unknown;
  id: unknown;
  scope: unknown;
  rare: string;
  value: V;
}

/** A resource's fields, whichever of its shapes it has. */
type Fields = Partial<Record<'kind' | 'uid' | 'id' | 'scope', unknown>>;

/** Where an input's entry is: its subject, action and resource (a NUL between them; sameQuestion settles the rest). */
function keyOf(input: AuthzInput): string {
  const resource = input.resource as Fields | undefined;
  return `${input.subject.id}\0${input.action}\0${resource?.uid ?? resource?.id ?? resource?.scope}`;
}

function sameQuestion<V>(entry: Entry<V>, input: AuthzInput, rare: string): boolean {
  const { subject, resource } = input;
  if (entry.subjectId !== subject.id || entry.action !== input.action) return false;
  if (entry.kind !== subject.kind || entry.serverAdmin !== subject.server_admin || entry.disabled !== subject.disabled) return false;
  if (entry.orgId !== input.org_id || entry.rare !== rare || entry.hasResource !== (resource !== undefined)) return false;
  if (resource === undefined) return true;
  const fields = resource as Fields;
  return entry.resourceKind === fields.kind && entry.uid === fields.uid && entry.id === fields.id && entry.scope === fields.scope;
}

/** The characters of an input's strings and rare fields: what keeping it holds on to. */
function textLength(input: AuthzInput, rare: string): number {
  const fields = (input.resource ?? {}) as Fields;
  let length = rare.length;
  for (const value of [input.subject.id, input.subject.kind, input.org_id, input.action, fields.kind, fields.uid, fields.id, fields.scope]) {
    if (typeof value === 'string') length += value.length;
  }
  return length;
}

export class KeptDecisions<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly order = new LruOrder<Entry<V>>();

  /** `maxInputChars`: an input longer than this (a role's delegated permissions, a chat context) is not kept. */
  constructor(
    private readonly max: number,
    private readonly maxInputChars: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The answer kept for this very question, now the most recently asked; or undefined. */
  get(input: AuthzInput): V | undefined {
    const entry = this.entries.get(keyOf(input));
    if (!entry || !sameQuestion(entry, input, rareFieldsKey(input))) return undefined;
    this.order.makeNewest(entry);
    return entry.value;
  }

  /** Keeps `value` as the answer to `input`, in place of any answer kept under the same key. */
  set(input: AuthzInput, value: V): void {
    const rare = rareFieldsKey(input);
    if (textLength(input, rare) > this.maxInputChars) return;
    const key = keyOf(input);
    const replaced = this.entries.get(key);
    if (replaced) this.remove(replaced);
    else if (this.entries.size >= this.max && this.order.oldest) this.remove(this.order.oldest);
    const { subject } = input;
    const fields = (input.resource ?? {}) as Fields;
    const entry: Entry<V> = {
      key,
      subjectId: subject.id,
      action: input.action,
      kind: subject.kind,
      serverAdmin: subject.server_admin,
      disabled: subject.disabled,
      orgId: input.org_id,
      hasResource: input.resource !== undefined,
      resourceKind: fields.kind,
      uid: fields.uid,
      id: fields.id,
      scope: fields.scope,
      rare,
      value,
      newer: null,
      older: null,
    };
    this.entries.set(key, entry);
    this.order.makeNewest(entry);
  }

  private remove(entry: Entry<V>): void {
    this.order.unlink(entry);
    this.entries.delete(entry.key);
  }
}

/** An answer, right while its org's document is at the generation it was given under. */
export interface Kept<T> {
  org: OrgPolicy;
  generation: number;
  answer: T;
}

/** A kept answer still right for `org` as loaded now, or undefined. */
export function current<T>(kept: Kept<T> | undefined, org: OrgPolicy): T | undefined {
  return kept && kept.org === org && kept.generation === org.generation ? kept.answer : undefined;
}

/**
 * What authorize() answers when the policy allows (authz/enforce's true): the grants behind an allow are
 * not worked out on the enforcement path. explain() and, when it is on, the decision log get
 * them (authz/decision).
 */
export const ALLOWED: Readonly<Decision> = Object.freeze({ allow: true, reasons: Object.freeze([]) as unknown as Decision['reasons'] });

/** A decision shared by the requests that ask the same again: frozen, so none can change another's. */
export function frozenDecision(decision: Decision): Readonly<Decision> {
  Object.freeze(decision.reasons);
  return Object.freeze(decision);
}

/** A permission map shared by the requests that ask it again: frozen, so none of them can change another's answer. */
export function frozen(map: PermissionMap): Readonly<PermissionMap> {
  for (const scopes of Object.values(map)) Object.freeze(scopes);
  return Object.freeze(map);
}

/** At most this many active-org answers are kept, the least recently asked dropped first. */
export const MAX_CACHED_ANSWERS = 512;
/**
 * How many authorize() answers are kept, over every org: the least recently asked goes first.
 * Traffic repeats a working set of questions (a page's checks, a user's dashboards), and a kept
 * answer costs a map lookup instead of an evaluation. About 300 bytes each (its entry and key,
 * src/authz/kept-decisions.ts; a deny keeps its reasons too): 10 MiB or a little more at the bound.
 */
export const MAX_KEPT_DECISIONS = 32_768;
/**
 * How many filter() answers are kept, over every org. A list is evaluated item by item, 2.5 to 4
 * µs each (4 ms for the 1,000 teams of an org at scale S), and the same caller asks for the same
 * list again as they page through it or come back to it. Each answer holds an index per allowed
 * item: at most 80 KiB for a list of 10,000.
 */
export const MAX_KEPT_FILTERS = 256;
/** An input longer than this (a role's delegated permissions, a chat context, an odd id) is evaluated every time rather than kept. */
export const MAX_CACHED_INPUT_CHARS = 2048;
