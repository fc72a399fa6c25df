/**
 * What a directory entry makes of its user, at each LDAP login and on an admin's sync: the user
 * found by its link (module `ldap`, the entry's DN); else, with LDAP_ALLOW_EMAIL_LINKING, the
 * account holding the entry's email when nothing else guards it (external-accounts.ts; never by
 * login: an account named like a directory user may be anybody's); else a new one; its name,
 * email and login follow the directory; and the group mappings set its org memberships, roles
 * and server-admin flag.
 *
 * A sync never leaves an org without an Admin, nor the server without an enabled server admin:
 * such a change is skipped, logged and audited as a failure, and the rest applies. A changed role,
 * a removal or a changed server-admin flag ends the user's sessions, as when an admin does it.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { recordAudit, type Actor } from '../../../audit/writer.ts';
import type { OrgRole } from '../../../authz/types.ts';
import type { Config } from '../../../config.ts';
import type { Tx } from '../../../db/transaction.ts';
import { findHumanAdminIds, lockOrg, removeOrgMembership, setMemberRole } from '../../../orgs/store.ts';
import { emailSchema, loginSchema, UNSAFE_CHARACTERS } from '../../../http/schemas.ts';
import { enforceOrgQuota } from '../../../quotas/org-quotas.ts';
import { findLinkOfIdentity, linkIdentity, touchAuthLink } from '../../auth-links.store.ts';
import { revokeAllSessionsOf, userTarget } from '../../session-revocation.ts';
import { accountToJoinByEmail, checkExplicitLink, recordLinkAdded, signUpExternal, type ExternalProvider } from '../external-accounts.ts';
import { ExternalLoginError } from '../types.ts';
import {
  addOrgMember,
  findMembershipsOfUser,
  findUserById,
  findUserClashing,
  lockEnabledServerAdminIds,
  setDefaultOrg,
  setUserServerAdmin,
  updateUserProfile,
  type UserRow,
} from '../../users.store.ts';
import type { DirectoryEntry } from './client.ts';
import { mapAccess, normalizeDn, type DirectoryMatch, type MappedAccess } from './directory.ts';

export const LDAP_AUTH_MODULE = 'ldap';

// What the service stores of a directory profile: the login and email rules of the API, names without unsafe characters.
const LOGIN = new RegExp(loginSchema.pattern);
const isValidLogin = (value: string) => value.length <= loginSchema.maxLength && LOGIN.test(value);
const EMAIL = new RegExp(emailSchema.pattern);
const UNSAFE = new RegExp(`[${UNSAFE_CHARACTERS}]`, 'g');

/** The link's key: the normalised DN, or its hash when it does not fit the column. */
export function identityKey(dn: string): string {
  const normalized = normalizeDn(dn);
  return normalized.length <= 190 ? normalized : `sha256:${createHash('sha256').update(normalized).digest('hex')}`;
}

export interface SyncContext {
  config: Config;
  logger: Logger;
  actor: Actor;
  now: number;
  /** A login: once the user is known, the changes are the user's own doing in the audit log. */
  selfService: boolean;
}

export type SyncOutcome = { user: UserRow } | { refused: string; userId: string | null };

/** The directory's view of the profile: what the service can store of it. */
function profileOf(entry: DirectoryEntry) {
  const email = entry.email && entry.email.length <= 190 && EMAIL.test(entry.email) ? entry.email.toLowerCase() : null;
  const login = entry.username.toLowerCase();
  const name = (entry.name ?? '').replace(UNSAFE, '').trim().slice(0, 190) || login;
  return { login, email, name };
}

const ldapProvider = (config: Config): ExternalProvider => ({
  authModule: LDAP_AUTH_MODULE,
  label: 'LDAP',
  allowEmailLinking: config.ldap.allowEmailLinking,
  orgId: null,
});

async function resolveUser(tx: Tx, sync: SyncContext, entry: DirectoryEntry): Promise<SyncOutcome> {
  const link = await findLinkOfIdentity(tx.db, LDAP_AUTH_MODULE, identityKey(entry.dn));
  const linkedUser = link && (await findUserById(tx.db, link.user_id));
  if (link && linkedUser) {
    await touchAuthLink(tx.db, link.id, sync.now);
    return { user: linkedUser };
  }
  const profile = profileOf(entry);
  if (!isValidLogin(profile.login)) return { refused: 'directory username is not a valid login', userId: null };
  const provider = ldapProvider(sync.config);
  let joined: UserRow | undefined;
  try {
    joined = await accountToJoinByEmail(tx, provider, profile.email);
  } catch (err) {
    if (err instanceof ExternalLoginError) return { refused: err.reason, userId: null };
    throw err;
  }
  const user = joined ?? (await signUpExternal(tx, sync.config, sync.actor, provider, { ...profile, org: null }, sync.now));
  await linkIdentity(tx.db, { userId: user.id, authModule: LDAP_AUTH_MODULE, authId: identityKey(entry.dn), label: 'LDAP' }, sync.now);
  if (joined) await recordLinkAdded(tx, sync.actor, provider, user, 'email', sync.now);
  return { user };
}

/**
 * Ties the directory entry to the signed-in user `userId` as its LDAP login (the explicit link
 * flow: the user proved who they are, and the directory accepted the entry's password). The
 * entry must be nobody else's, and an account has at most one LDAP entry.
 */
export async function linkDirectoryEntry(tx: Tx, config: Config, actor: Actor, entry: DirectoryEntry, userId: string, now: number): Promise<void> {
  const provider = ldapProvider(config);
  const key = identityKey(entry.dn);
  if (await checkExplicitLink(tx, provider, userId, { issuer: '', subject: key }, true)) return;
  await linkIdentity(tx.db, { userId, authModule: LDAP_AUTH_MODULE, authId: key, label: 'LDAP' }, now);
  await recordLinkAdded(tx, actor, provider, (await findUserById(tx.db, userId))!, 'signed-in user', now);
}

/** Name, email and login as the directory has them; a value another account holds stays as it is. */
async function followProfile(tx: Tx, sync: SyncContext, user: UserRow, entry: DirectoryEntry): Promise<void> {
  const wanted = profileOf(entry);
  const changes: { name?: string; email?: string; login?: string } = {};
  if (wanted.name !== user.name) changes.name = wanted.name;
  for (const field of ['email', 'login'] as const) {
    const value = wanted[field];
    if (value && value !== user[field] && (field !== 'login' || isValidLogin(value)) && !(await findUserClashing(tx.db, [value], user.id)))
      changes[field] = value;
  }
  const fields = Object.keys(changes).sort();
  if (fields.length === 0) return;
  await updateUserProfile(tx.db, user.id, changes, sync.now);
  await recordAudit(
    tx.db,
    sync.actor,
    { action: 'user.updated', target: userTarget({ id: user.id, login: changes.login ?? user.login }), metadata: { fields, by: LDAP_AUTH_MODULE } },
    sync.now,
  );
}

async function keptBack(tx: Tx, sync: SyncContext, user: UserRow, action: string, reason: string, orgId: string | null): Promise<void> {
  sync.logger.warn({ userId: user.id, action, orgId, reason }, 'LDAP sync skipped a change');
  await recordAudit(tx.db, sync.actor, { action, orgId, outcome: 'failure', target: userTarget(user), metadata: { reason, via: LDAP_AUTH_MODULE } }, sync.now);
}

async function isLastAdminOf(tx: Tx, orgId: string, userId: string): Promise<boolean> {
  return !(await findHumanAdminIds(tx.db, orgId)).some((id) => id !== userId);
}

/** Memberships to what the mappings say; returns whether a role changed or a membership ended. */
async function applyMemberships(tx: Tx, sync: SyncContext, user: UserRow, orgRoles: Map<string, OrgRole>): Promise<boolean> {
  const held = new Map((await findMembershipsOfUser(tx.db, user.id)).map((membership) => [membership.orgId, membership.role]));
  let standingChanged = false;
  for (const [orgId, role] of orgRoles) {
    const org = await lockOrg(tx.db, orgId);
    if (!org) {
      sync.logger.warn({ orgId }, 'an LDAP group mapping names an org that does not exist');
      continue;
    }
    const current = held.get(orgId);
    if (current === role) continue;
    const metadata = { org: org.name, via: LDAP_AUTH_MODULE };
    if (current === undefined) {
      await enforceOrgQuota(tx, sync.config, orgId, 'users', sync.now);
      await addOrgMember(tx, orgId, user.id, role, sync.now);
      await recordAudit(tx.db, sync.actor, { action: 'org.member_added', orgId, target: userTarget(user), metadata: { ...metadata, role } }, sync.now);
    } else if (current === 'Admin' && (await isLastAdminOf(tx, orgId, user.id))) {
      await keptBack(tx, sync, user, 'org.member_role_changed', 'last admin', orgId);
    } else {
      await setMemberRole(tx, orgId, user.id, role);
      await recordAudit(
        tx.db,
        sync.actor,
        { action: 'org.member_role_changed', orgId, target: userTarget(user), metadata: { ...metadata, from: current, to: role } },
        sync.now,
      );
      standingChanged = true;
    }
  }
  for (const [orgId, role] of held) {
    if (orgRoles.has(orgId)) continue;
    const org = await lockOrg(tx.db, orgId);
    if (role === 'Admin' && (await isLastAdminOf(tx, orgId, user.id))) {
      await keptBack(tx, sync, user, 'org.member_removed', 'last admin', orgId);
      continue;
    }
    await removeOrgMembership(tx, orgId, user.id);
    await recordAudit(
      tx.db,
      sync.actor,
      { action: 'org.member_removed', orgId, target: userTarget(user), metadata: { org: org?.name, role, via: LDAP_AUTH_MODULE } },
      sync.now,
    );
    standingChanged = true;
  }
  return standingChanged;
}

/** The server-admin flag, when the mappings manage it; never the last enabled server admin's. */
async function applyServerAdmin(tx: Tx, sync: SyncContext, user: UserRow, svcAdmin: boolean | null): Promise<boolean> {
  if (svcAdmin === null || svcAdmin === !!user.is_svc_admin) return false;
  if (!svcAdmin && !user.is_disabled && !(await lockEnabledServerAdminIds(tx.db)).some((id) => id !== user.id)) {
    await keptBack(tx, sync, user, 'user.role_changed', 'last server admin', null);
    return false;
  }
  await setUserServerAdmin(tx.db, user.id, svcAdmin, sync.now);
  await recordAudit(
    tx.db,
    sync.actor,
    { action: 'user.role_changed', target: userTarget(user), metadata: { isSvcAdmin: svcAdmin, via: LDAP_AUTH_MODULE } },
    sync.now,
  );
  return true;
}

/** Applies the mapped access to the user; a user in no mapped group (when allowed) keeps what it has. */
export async function applyAccess(tx: Tx, sync: SyncContext, user: UserRow, access: MappedAccess): Promise<void> {
  if (access.matched.length === 0) return;
  const membershipsChanged = await applyMemberships(tx, sync, user, access.orgRoles);
  const flagChanged = await applyServerAdmin(tx, sync, user, access.svcAdmin);
  const current = (await findUserById(tx.db, user.id))!;
  const orgs = await findMembershipsOfUser(tx.db, user.id);
  if (!current.default_org_id && orgs[0]) await setDefaultOrg(tx.db, user.id, orgs[0].orgId, sync.now);
  if (membershipsChanged || flagChanged) await revokeAllSessionsOf(tx, sync.actor, user, 'org roles or server admin flag changed by the LDAP sync', sync.now);
}

/** The whole sync of one directory entry, in the caller's transaction. */
export async function syncDirectoryUser(tx: Tx, sync: SyncContext, match: DirectoryMatch): Promise<SyncOutcome> {
  const resolved = await resolveUser(tx, sync, match.entry);
  if ('refused' in resolved) return resolved;
  const { user } = resolved;
  if (user.is_service_account) return { refused: 'service account', userId: user.id };
  if (user.is_disabled) return { refused: 'disabled user', userId: user.id };
  const acting = sync.selfService ? { ...sync, actor: { ...sync.actor, type: 'user' as const, id: user.id, name: user.login } } : sync;
  await followProfile(tx, acting, user, match.entry);
  await applyAccess(tx, acting, user, mapAccess(match.server, match.entry));
  return { user: (await findUserById(tx.db, user.id))! };
}
