/**
 * Which account an external identity (OAuth, SAML, LDAP) signs in as, the same for every provider.
 *
 * An identity is found by its own link only: (auth module, issuer, subject). Without one it may
 * join the existing account that holds its email only when the operator turned email linking on
 * for that provider, the provider vouched for the email, and the account has no other way in: no
 * local password, no server-admin flag and no other login link. Anything else would let whoever
 * controls a provider account (or registers an email at a provider that does not check it) walk
 * into an account somebody else owns. A signed-in user links further logins explicitly
 * (`POST /api/user/auth-links/<provider>`), after proving again who they are.
 *
 * Without a link or an account to join, a new user is created: an unverified email is never
 * stored, and a login name another account holds gets a random suffix rather than that account.
 */
import { randomBytes } from 'node:crypto';
import { recordAudit, type Actor } from '../../audit/writer.ts';
import type { OrgRole } from '../../authz/types.ts';
import type { Config } from '../../config.ts';
import type { Tx } from '../../db/transaction.ts';
import { findOrgById } from '../../orgs/store.ts';
import { findProvisioningOrg } from '../../scim/store.ts';
import { enforceOrgQuota } from '../../quotas/org-quotas.ts';
import { countAuthLinksOfUser, findAuthLink, findLinkOfUser } from '../auth-links.store.ts';
import { userTarget } from '../session-revocation.ts';
import { addOrgMember, findUserById, findUserClashing, insertUser, lockUser, type UserRow } from '../users.store.ts';
import { ExternalLoginError } from './types.ts';

/** What the account rules need to know of a provider. */
export interface ExternalProvider {
  /** The auth module of its links: `oauth_<id>`, `saml`, `ldap`. */
  authModule: string;
  /** The name users know it by, in messages. */
  label: string;
  /** OAUTH_<P>_ALLOW_EMAIL_LINKING, SAML_ALLOW_EMAIL_LINKING, LDAP_ALLOW_EMAIL_LINKING. */
  allowEmailLinking: boolean;
  /** The org it signs new users into; null when none is fixed (LDAP: its group mappings decide). */
  orgId: string | null;
}

/** Why an account may not be joined by an identity's email alone; undefined when it may. */
async function emailLinkRefusal(tx: Tx, provider: ExternalProvider, account: UserRow): Promise<string | undefined> {
  if (account.is_service_account) return 'the account is a service account';
  if (account.password_hash) return 'the account has a local password';
  if (account.is_svc_admin) return 'the account is a server admin';
  if ((await countAuthLinksOfUser(tx.db, account.id)) > 0) return 'the account is linked to another login';
  // An org's SCIM client chooses the emails of the accounts it provisions: joining one by email
  // would hand a login to that org unless the provider signs its users into that org anyway.
  const provisioningOrg = await findProvisioningOrg(tx.db, account.id);
  if (provisioningOrg !== undefined && provisioningOrg !== provider.orgId) return 'the account was provisioned by SCIM for another org';
  return undefined;
}

/**
 * The existing account an identity without a link of its own joins by its `verifiedEmail`, or
 * undefined when no account holds that email (a sign-up follows). Throws an ExternalLoginError,
 * whose reason goes to the audit log, when one does and the rules above forbid joining it.
 */
export async function accountToJoinByEmail(tx: Tx, provider: ExternalProvider, verifiedEmail: string | null): Promise<UserRow | undefined> {
  if (!verifiedEmail) return undefined;
  const holder = await findUserClashing(tx.db, [verifiedEmail]);
  if (!holder) return undefined;
  const refuse = (reason: string) =>
    new ExternalLoginError(`an account with this email already exists: sign in to it and link ${provider.label} from your profile`, reason);
  if (holder.email !== verifiedEmail) throw refuse('the email is the login of another account');
  if (!provider.allowEmailLinking) throw refuse(`email linking is off for ${provider.authModule}`);
  // Locked, so a password or a flag set meanwhile cannot slip past the check.
  const account = (await lockUser(tx.db, holder.id))!;
  const refusal = await emailLinkRefusal(tx, provider, account);
  if (refusal) throw refuse(refusal);
  return account;
}

/** The login name `suggestion` as logins are kept (lower-case ASCII), or `fallback`, made unique with a suffix. */
async function freeLogin(tx: Tx, suggestion: string, fallback: string): Promise<string> {
  const base =
    suggestion
      .toLowerCase()
      .replace(/[^a-z0-9._@+-]/g, '')
      .slice(0, 150) || fallback;
  for (let candidate = base; ; candidate = `${base}-${randomBytes(3).toString('hex')}`) {
    if (!(await findUserClashing(tx.db, [candidate]))) return candidate;
  }
}

export interface NewExternalUser {
  /** The provider's login name for the user; another account's login gets a suffix. */
  login: string;
  /** Verified by the provider, or null: an unverified email is never stored. */
  email: string | null;
  name: string;
  /** The org the user joins with `role`; null: none (LDAP's group mappings decide). */
  org: { id: string; role: OrgRole } | null;
}

/** Creates the user of an identity that matched no account, audited as `user.created`. */
export async function signUpExternal(tx: Tx, config: Config, actor: Actor, provider: ExternalProvider, user: NewExternalUser, now: number): Promise<UserRow> {
  const { org } = user;
  if (org && !(await findOrgById(tx.db, org.id)))
    throw new ExternalLoginError('sign-up is misconfigured: ask an administrator', `default org ${org.id} not found`);
  if (org) await enforceOrgQuota(tx, config, org.id, 'users', now);
  const login = await freeLogin(tx, user.login, provider.authModule.replace('_', '-'));
  const userId = await insertUser(tx.db, { login, email: user.email, name: user.name || login, passwordHash: null, defaultOrgId: org?.id ?? null }, now);
  if (org) await addOrgMember(tx, org.id, userId, org.role, now);
  await recordAudit(
    tx.db,
    actor,
    {
      action: 'user.created',
      orgId: org?.id ?? null,
      target: userTarget({ id: userId, login }),
      metadata: { ...(org && { orgRole: org.role }), via: provider.authModule },
    },
    now,
  );
  return (await findUserById(tx.db, userId))!;
}

/** An identity to tie to an account: its key and, for OAuth, the provider's sealed tokens. */
export interface IdentityKey {
  issuer: string;
  subject: string;
}

/**
 * Checks that the signed-in `userId` may take this identity as a further login: the identity is
 * nobody else's, and (LDAP: one directory entry per account) the account has no other link of a
 * provider that allows only one. Returns whether the identity is already this user's own.
 */
export async function checkExplicitLink(tx: Tx, provider: ExternalProvider, userId: string, identity: IdentityKey, onePerAccount = false): Promise<boolean> {
  const existing = await findAuthLink(tx.db, provider.authModule, identity.issuer, identity.subject);
  if (existing && existing.user_id !== userId)
    throw new ExternalLoginError(`this ${provider.label} login is already linked to another account`, 'identity linked to another account');
  if (existing) return true;
  const account = await lockUser(tx.db, userId);
  if (!account || account.is_disabled || account.is_service_account)
    throw new ExternalLoginError('this account cannot link a login', 'account gone or disabled');
  if (onePerAccount && (await findLinkOfUser(tx.db, userId, provider.authModule)))
    throw new ExternalLoginError(`this account is already linked to another ${provider.label} login`, `account already has a ${provider.authModule} link`);
  return false;
}

/** Audits an identity tied to an account: by its email (`via: email`) or by the signed-in user. */
export function recordLinkAdded(
  tx: Tx,
  actor: Actor,
  provider: ExternalProvider,
  user: { id: string; login: string },
  via: 'email' | 'signed-in user',
  now: number,
) {
  return recordAudit(tx.db, actor, { action: 'user.auth_link_added', target: userTarget(user), metadata: { authModule: provider.authModule, via } }, now);
}
