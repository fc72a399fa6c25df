/**
 * What every OAuth login does once the provider vouched for an identity: find the account by the
 * rules of external-accounts.ts (its link; else, where allowed, the account holding its verified
 * email; else a new user when the provider allows sign-up, in its default org with its default
 * role). A disabled user or a service account is refused. The link keeps the provider's tokens
 * sealed (AES-256-GCM under SECRET_KEY), and the login completes as every login does
 * (login-completion.ts) — all in one transaction with its audit entries.
 */
import type { Actor } from '../../audit/writer.ts';
import type { Config } from '../../config.ts';
import type { Tx } from '../../db/transaction.ts';
import { UNSAFE_CHARACTERS } from '../../http/schemas.ts';
import type { Services } from '../../services.ts';
import { findAuthLink, insertAuthLink, updateAuthLinkTokens } from '../auth-links.store.ts';
import { findUserById, type UserRow } from '../users.store.ts';
import { accountToJoinByEmail, checkExplicitLink, recordLinkAdded, signUpExternal, type ExternalProvider } from './external-accounts.ts';
import { syncProviderTeams } from './team-sync.ts';
import { ExternalLoginError, type ExternalIdentity, type LoginProvider } from './types.ts';

/** What a refused user is told, whatever the cause (disabled, service account): nothing to probe. */
export const EXTERNAL_LOGIN_REFUSED = 'login failed: this account cannot sign in';

/** Provider text (a display name) loses what the service refuses in names: controls and bidirectional marks. */
const UNSAFE = new RegExp(`[${UNSAFE_CHARACTERS}]`, 'gu');
const clean = (value: string) => value.replace(UNSAFE, '').trim().slice(0, 190);

const accountRulesOf = (provider: LoginProvider): ExternalProvider => ({
  authModule: provider.authModule,
  label: provider.label,
  allowEmailLinking: provider.settings.allowEmailLinking,
  orgId: provider.settings.defaultOrgId,
});

/** The user this identity signs in as, joining or creating one as the rules allow. */
async function resolveUser(tx: Tx, config: Config, actor: Actor, provider: LoginProvider, identity: ExternalIdentity, now: number) {
  const link = await findAuthLink(tx.db, provider.authModule, identity.issuer, identity.subject);
  if (link) return { user: await findUserById(tx.db, link.user_id), linkId: link.id, joinedByEmail: false };
  const rules = accountRulesOf(provider);
  const verifiedEmail = identity.emailVerified ? identity.email : null;
  const joined = await accountToJoinByEmail(tx, rules, verifiedEmail);
  if (joined) return { user: joined, linkId: null, joinedByEmail: true };
  if (!provider.settings.allowSignUp)
    throw new ExternalLoginError('no account is linked to this login and sign-up is disabled: ask an administrator for access', 'sign-up disabled');
  const { defaultOrgId, defaultRole } = provider.settings;
  const user = await signUpExternal(
    tx,
    config,
    actor,
    rules,
    {
      login: identity.login ?? verifiedEmail?.split('@')[0] ?? `${provider.id}-${identity.subject}`,
      email: verifiedEmail,
      name: clean(identity.name ?? ''),
      org: { id: defaultOrgId, role: defaultRole },
    },
    now,
  );
  return { user, linkId: null, joinedByEmail: false };
}

/**
 * Who the identity signs in as, in the login's transaction (login-completion.ts), with its link
 * and teams brought up to date; an ExternalLoginError says why nobody does.
 */
export function externalLoginUser(
  services: Services,
  actor: Actor,
  provider: LoginProvider,
  identity: ExternalIdentity,
): (tx: Tx, now: number) => Promise<UserRow> {
  if (identity.subject.length > 190 || identity.issuer.length > 190)
    throw new ExternalLoginError(EXTERNAL_LOGIN_REFUSED, 'issuer or subject longer than 190 characters');
  const tokensSealed = services.secretBox.seal(JSON.stringify(identity.tokens));
  return async (tx, now) => {
    const { user, linkId, joinedByEmail } = await resolveUser(tx, services.config, actor, provider, identity, now);
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
      if (joinedByEmail) await recordLinkAdded(tx, asUser, accountRulesOf(provider), user, 'email', now);
    }
    if (identity.teams) await syncProviderTeams(tx, asUser, provider.settings.defaultOrgId, user, identity.teams, provider.authModule, now);
    return user;
  };
}

/**
 * Ties the identity to the signed-in user `userId` as a further login (the explicit link flow:
 * the user proved who they are before it started). The identity must be nobody else's.
 */
export async function linkExternal(services: Services, actor: Actor, provider: LoginProvider, identity: ExternalIdentity, userId: string): Promise<void> {
  if (identity.subject.length > 190 || identity.issuer.length > 190)
    throw new ExternalLoginError(EXTERNAL_LOGIN_REFUSED, 'issuer or subject longer than 190 characters');
  const now = services.clock.now();
  const tokensSealed = services.secretBox.seal(JSON.stringify(identity.tokens));
  await services.transact(async (tx) => {
    const rules = accountRulesOf(provider);
    if (await checkExplicitLink(tx, rules, userId, identity)) {
      const link = (await findAuthLink(tx.db, provider.authModule, identity.issuer, identity.subject))!;
      await updateAuthLinkTokens(tx.db, link.id, tokensSealed, now);
      return;
    }
    const user = (await findUserById(tx.db, userId))!;
    await insertAuthLink(
      tx.db,
      { userId, authModule: provider.authModule, issuer: identity.issuer, authId: identity.subject, label: provider.label, tokensSealed },
      now,
    );
    await recordLinkAdded(tx, actor, rules, user, 'signed-in user', now);
  });
}
