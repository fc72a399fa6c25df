/**
 * What every external login does once the provider vouched for an identity: find the user by
 * (auth module, issuer, subject); else link the user with the same email, but only when the
 * provider verified it (never by login); else create one when the provider allows sign-up, in its
 * default org with its default role. A disabled user or a service account is refused. The link
 * keeps the provider's tokens sealed (AES-256-GCM under SECRET_KEY), and the session is issued
 * as for a local login — all in one transaction with its audit entries.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { recordAudit, type Actor } from '../../audit/writer.ts';
import type { Config } from '../../config.ts';
import type { Tx } from '../../db/transaction.ts';
import { UNSAFE_CHARACTERS } from '../../http/schemas.ts';
import { findOrgById } from '../../orgs/store.ts';
import { enforceOrgQuota } from '../../quotas/org-quotas.ts';
import type { Services } from '../../services.ts';
import { findAuthLink, insertAuthLink, updateAuthLinkTokens } from '../auth-links.store.ts';
import { userTarget } from '../session-revocation.ts';
import { issueSession } from '../sessions.ts';
import {
  addOrgMember,
  findMembershipsOfUser,
  findUserByEmail,
  findUserById,
  findUserClashing,
  insertUser,
  markUserSeen,
  type UserRow,
} from '../users.store.ts';
import { syncProviderTeams } from './team-sync.ts';
import { ExternalLoginError, type ExternalIdentity, type LoginProvider } from './types.ts';

/** What a refused user is told, whatever the cause (disabled, service account): nothing to probe. */
export const EXTERNAL_LOGIN_REFUSED = 'login failed: this account cannot sign in';

/** Provider text (a display name) loses what the service refuses in names: controls and bidirectional marks. */
const UNSAFE = new RegExp(`[${UNSAFE_CHARACTERS}]`, 'gu');
const clean = (value: string) => value.replace(UNSAFE, '').trim().slice(0, 190);

/** A login name for a new user: the provider's suggestion, else the email's local part, made unique. */
async function freeLogin(tx: Tx, provider: LoginProvider, identity: ExternalIdentity): Promise<string> {
  const suggested = identity.login ?? identity.email?.split('@')[0] ?? `${provider.id}-${identity.subject}`;
  const base =
    suggested
      .toLowerCase()
      .replace(/[^a-z0-9._@+-]/g, '')
      .slice(0, 150) || provider.id;
  for (let candidate = base; ; candidate = `${base}-${randomBytes(3).toString('hex')}`) {
    if (!(await findUserClashing(tx.db, [candidate]))) return candidate;
  }
}

async function signUp(tx: Tx, config: Config, actor: Actor, provider: LoginProvider, identity: ExternalIdentity, now: number): Promise<UserRow> {
  const { settings } = provider;
  if (!settings.allowSignUp)
    throw new ExternalLoginError('no account is linked to this login and sign-up is disabled: ask an administrator for access', 'sign-up disabled');
  if (identity.email && (await findUserClashing(tx.db, [identity.email]))) {
    // Unverified, the email proves nothing (linking would hand that account over); verified, it is another account's login.
    throw new ExternalLoginError(
      'an account with this email already exists and is not linked to this login',
      identity.emailVerified ? 'email is the login of another account' : 'unverified email of an existing account',
    );
  }
  if (!(await findOrgById(tx.db, settings.defaultOrgId)))
    throw new ExternalLoginError('sign-up is misconfigured: ask an administrator', `default org ${settings.defaultOrgId} not found`);
  await enforceOrgQuota(tx, config, settings.defaultOrgId, 'users', now);
  const login = await freeLogin(tx, provider, identity);
  const userId = await insertUser(
    tx.db,
    { login, email: identity.email, name: clean(identity.name ?? '') || login, passwordHash: null, defaultOrgId: settings.defaultOrgId },
    now,
  );
  await addOrgMember(tx, settings.defaultOrgId, userId, settings.defaultRole, now);
  await recordAudit(
    tx.db,
    actor,
    {
      action: 'user.created',
      orgId: settings.defaultOrgId,
      target: userTarget({ id: userId, login }),
      metadata: { orgRole: settings.defaultRole, via: provider.authModule },
    },
    now,
  );
  return (await findUserById(tx.db, userId))!;
}

/** The user this identity signs in as, linking or creating one as the rules allow. */
async function resolveUser(tx: Tx, config: Config, actor: Actor, provider: LoginProvider, identity: ExternalIdentity, now: number) {
  const link = await findAuthLink(tx.db, provider.authModule, identity.issuer, identity.subject);
  if (link) return { user: await findUserById(tx.db, link.user_id), linkId: link.id, how: 'linked' as const };
  const byEmail = identity.email && identity.emailVerified ? await findUserByEmail(tx.db, identity.email) : undefined;
  const user = byEmail ?? (await signUp(tx, config, actor, provider, identity, now));
  return { user, linkId: null, how: byEmail ? ('linked by verified email' as const) : ('signed up' as const) };
}

export interface ExternalSignIn {
  userId: string;
  sessionToken: string;
}

/** Signs the identity in: a session for its user, or an ExternalLoginError saying why not. */
export async function signInExternal(
  services: Services,
  ctx: Context,
  actor: Actor,
  provider: LoginProvider,
  identity: ExternalIdentity,
): Promise<ExternalSignIn> {
  if (identity.subject.length > 190 || identity.issuer.length > 190)
    throw new ExternalLoginError(EXTERNAL_LOGIN_REFUSED, 'issuer or subject longer than 190 characters');
  const now = services.clock.now();
  const tokensSealed = services.secretBox.seal(JSON.stringify(identity.tokens));
  return services.transact(async (tx) => {
    const { user, linkId, how } = await resolveUser(tx, services.config, actor, provider, identity, now);
    if (!user || user.is_service_account) throw new ExternalLoginError(EXTERNAL_LOGIN_REFUSED, 'service account');
    if (user.is_disabled) throw new ExternalLoginError(EXTERNAL_LOGIN_REFUSED, 'disabled user');
    const asUser: Actor = { ...actor, type: 'user', id: user.id, name: user.login };
    if (linkId) {
      await updateAuthLinkTokens(tx.db, linkId, tokensSealed, now);
    } else {
      await insertAuthLink(
        tx.db,
        { userId: user.id, authModule: provider.authModule, issuer: identity.issuer, authId: identity.subject, label: provider.label, tokensSealed },
        now,
      );
      if (how === 'linked by verified email') {
        await recordAudit(tx.db, asUser, { action: 'user.auth_link_added', target: userTarget(user), metadata: { authModule: provider.authModule } }, now);
      }
    }
    if (identity.teams) await syncProviderTeams(tx, asUser, provider.settings.defaultOrgId, user, identity.teams, provider.authModule, now);
    const session = await issueSession(tx, ctx, user.id, now);
    await markUserSeen(tx.db, user.id, now);
    const orgs = await findMembershipsOfUser(tx.db, user.id);
    await recordAudit(
      tx.db,
      asUser,
      {
        action: 'user.login',
        orgId: user.default_org_id ?? orgs[0]?.orgId ?? null,
        target: { type: 'session', id: session.sessionId },
        metadata: { method: provider.authModule },
      },
      now,
    );
    return { userId: user.id, sessionToken: session.token };
  });
}
