/**
 * The answers the engine keeps: one `lru-cache` per kind of answer, each keyed by the seqs of the
 * org's document it was given against (its own stream's and the global one's) and the question
 * (src/authz/input-key.ts). The policy reads only its input and its org's document, and the
 * document at a pair of seqs holds every change up to them, so an answer is right for as long
 * as the document stays at those seqs. A change moves the seq before any later answer is given
 * (src/authz/documents.ts), so an answer given before it can never be found again: nothing is
 * cleared, the old entries age out.
 */
import { LRUCache } from 'lru-cache';
import type { LoadedDocument } from './loaded-document.ts';
import type { Decision, PermissionMap, VisibleSet } from './types.ts';

/**
 * How many authorize() answers are kept, over every org: the least recently asked goes first.
 * Traffic repeats a working set of questions (a page's checks, a user's dashboards), and a kept
 * answer costs a key and a map lookup instead of an evaluation. About 300 bytes each (the key and
 * the cache's entry; a deny keeps its reasons too): 10 MiB or a little more at the bound.
 */
export const MAX_KEPT_DECISIONS = 32_768;
/**
 * How many filter() answers are kept, over every org. A list is evaluated item by item, 2.5 to 4
 * µs each (4 ms for the 1,000 teams of an org at scale S), and the same caller asks for the same
 * list again as they page through it or come back to it. Each answer holds an index per allowed
 * item: at most 80 KiB for a list of 10,000.
 */
export const MAX_KEPT_FILTERS = 256;
/**
 * How many visible() answers are kept, over every org: a caller pages through a list and comes
 * back to it. Each holds the uids of the folders and items the caller may see, a few KiB.
 */
export const MAX_KEPT_VISIBLE_SETS = 1024;
/** How many permission maps are kept, over every org (a subject's `{action: [scopes]}`). */
export const MAX_KEPT_PERMISSION_MAPS = 4096;
/** How many active-org answers are kept: they read only their input, so they stay right whatever changes. */
export const MAX_CACHED_ANSWERS = 512;
/** A question whose key is longer than this (a role's delegated permissions, a chat context, an odd id) is evaluated every time rather than kept. */
export const MAX_CACHED_INPUT_CHARS = 2048;

/** Answers given against org documents, each found under the document's seqs and its question's key. */
export class AnswerCache<V extends object> {
  private readonly cache: LRUCache<string, V>;

  constructor(max: number) {
    this.cache = new LRUCache<string, V>({ max });
  }

  get size(): number {
    return this.cache.size;
  }

  /** The answer given to the question `key` against the document as it is now, or undefined. */
  get(document: LoadedDocument, key: string): V | undefined {
    return this.cache.get(`${document.seq}:${document.globalSeq}:${key}`);
  }

  set(document: LoadedDocument, key: string, value: V): void {
    if (key.length <= MAX_CACHED_INPUT_CHARS) this.cache.set(`${document.seq}:${document.globalSeq}:${key}`, value);
  }
}

/** The engine's kept answers: activeOrg()'s read only their input, so they are kept under it alone. */
export function answerCaches(maxKeptDecisions = MAX_KEPT_DECISIONS) {
  return {
    decisions: new AnswerCache<Readonly<Decision>>(maxKeptDecisions),
    filters: new AnswerCache<readonly number[]>(MAX_KEPT_FILTERS),
    visibleSets: new AnswerCache<Readonly<VisibleSet>>(MAX_KEPT_VISIBLE_SETS),
    permissionMaps: new AnswerCache<Readonly<PermissionMap>>(MAX_KEPT_PERMISSION_MAPS),
    activeOrg: new LRUCache<string, Readonly<Decision>>({ max: MAX_CACHED_ANSWERS }),
  };
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
