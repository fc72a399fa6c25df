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
import type { AuthzInput } from './types.ts';
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
