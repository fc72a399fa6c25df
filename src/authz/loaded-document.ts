/** An org's document as loaded in a wasm instance, and where it is in the change log. */
import type { PolicyInstance } from './wasm.ts';

/** A document loaded into a wasm instance, at a seq of the org's stream and of the global one. */
export interface LoadedDocument {
  instance: PolicyInstance;
  seq: number;
  globalSeq: number;
  documentBytes: number;
  /** With verifyDocuments: the loaded document as a plain value, rebuilt and patched alongside the wasm copy. */
  mirror: Record<string, unknown> | null;
}

export interface OrgPolicy extends LoadedDocument {
  /** When it was last asked, in engine ticks: the least recent goes first when too many are loaded. */
  lastUsed: number;
  /** The newest heads this instance knows of: the document answers only once it has reached them. */
  wantedSeq: number;
  wantedGlobalSeq: number;
  needsRebuild: boolean;
  /** The one step of work under way on this org's document; every other waits for it. */
  refreshing: Promise<void> | null;
  /** A document compacted in the background, swapped in (and brought to the heads) by the next step. */
  compacted: LoadedDocument | null;
}

/** Sets (or, with undefined, removes) the value at path, as PolicyInstance.patch does in wasm. */
export function patchMirror(mirror: Record<string, unknown>, path: string[], value: unknown): void {
  let node = mirror;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

/** Whether the document must take a step before it answers: heads it has not reached, a rebuild, or a compacted copy to swap in. */
export function behind(org: OrgPolicy): boolean {
  return org.needsRebuild || org.compacted !== null || org.seq < org.wantedSeq || org.globalSeq < org.wantedGlobalSeq;
}
