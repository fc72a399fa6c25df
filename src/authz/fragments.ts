/**
 * What a committed change touched in an org's policy data. A transaction that names its
 * fragments lets the engine patch just those places of the loaded document (a grant change at
 * org scale S is visible in milliseconds); naming none makes the engine rebuild the document.
 */
export type PolicyFragment =
  | { kind: 'role'; uid: string }
  | { kind: 'member'; userId: string }
  | { kind: 'team'; teamId: string }
  /** The folders whose ancestor chain changed (made, moved with their subtree, deleted); no uids: the whole tree. */
  | { kind: 'folders'; uids?: string[] }
  | { kind: 'dashboard'; uid: string }
  | { kind: 'alert_rule'; uid: string }
  | { kind: 'legacy_acl' };

/** The change notice of one org: the fragments it touched, or everything. */
export type OrgChange = PolicyFragment[] | 'all';

export function mergeChange(current: OrgChange | undefined, next: OrgChange): OrgChange {
  if (current === 'all' || next === 'all') return 'all';
  return [...(current ?? []), ...next];
}
