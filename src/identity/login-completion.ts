/**
 * The end of every login, whichever way the user proved who they are (a local password, LDAP, the
 * setup wizard's first admin, OAuth, SAML): in one transaction with what established the user, a
 * session for it, the user seen now and `user.login` audited with the method; once that committed,
 * the session cookie and the answer that sends the client on, only ever to a path of this service.
 */
import type { Context } from 'koa';
import { recordAudit, type Actor } from '../audit/writer.ts';
import type { Tx } from '../db/transaction.ts';
import { safeRedirect } from '../http/redirect.ts';
import type { Services } from '../services.ts';
import { issueSession, setSessionCookie } from './sessions.ts';
import { findMembershipsOfUser, markUserSeen } from './users.store.ts';

/** The fields of the user signing in that its login reads. */
export interface LoginUser {
  id: string;
  login: string;
  default_org_id: string | null;
}

export interface IssuedSession {
  sessionId: string;
  token: string;
}

/** How the client learns that it is signed in. */
export type LoginAnswer =
  /** A browser's navigation (OAuth, SAML): redirected to the target. */
  | { kind: 'navigation'; redirect: unknown }
  /**
   * The login form's request: 200 `{message, redirectUrl}` naming the target, and
   * `mfaEnrolmentRequired` when the session must enrol a second factor first (MFA_REQUIRED_FOR).
   */
  | { kind: 'form'; redirect: unknown; mfaEnrolmentRequired?: boolean }
  /** The setup wizard's first admin: 201 `{userId, orgId}`, its default org. */
  | { kind: 'created' };

export interface Login<U extends LoginUser> {
  /** The audit entry's `metadata.method`: `password`, `ldap`, `setup`, or the provider's auth module. */
  method: string;
  /** The audit entry's `metadata.secondFactor`, when one was given: `totp`, `recovery_code` or `passkey`. */
  secondFactor?: string;
  /** The request's actor; the login is audited as the user signing in, from the same address and agent. */
  actor: Actor;
  /**
   * Who signs in, found, linked, created or synced in the login's transaction; null when nobody
   * does (the setup wizard's race lost). It throws to refuse, and then nothing of the login stays.
   */
  user(tx: Tx, now: number): Promise<U | null>;
  /** What the session carries besides, in the same transaction (the SAML session index). */
  withSession?(tx: Tx, session: IssuedSession, user: U): Promise<void>;
  answer: LoginAnswer;
}

/** Completes a login and answers the client; returns who signed in, or null when nobody did (no cookie, no answer). */
export async function completeLogin<U extends LoginUser>(ctx: Context, services: Services, login: Login<U>): Promise<U | null> {
  const now = services.clock.now();
  const signedIn = await services.transact(async (tx) => {
    const user = await login.user(tx, now);
    if (!user) return null;
    const session = await issueSession(tx, ctx, user.id, now);
    await login.withSession?.(tx, session, user);
    await markUserSeen(tx.db, user.id, now);
    const orgs = await findMembershipsOfUser(tx.db, user.id);
    await recordAudit(
      tx.db,
      { ...login.actor, type: 'user', id: user.id, name: user.login },
      {
        action: 'user.login',
        orgId: user.default_org_id ?? orgs[0]?.orgId ?? null,
        target: { type: 'session', id: session.sessionId },
        metadata: { method: login.method, ...(login.secondFactor && { secondFactor: login.secondFactor }) },
      },
      now,
    );
    return { user, session };
  });
  if (!signedIn) return null;
  setSessionCookie(ctx, services.config, signedIn.session.token);
  answer(ctx, login.answer, signedIn.user);
  return signedIn.user;
}

function answer(ctx: Context, how: LoginAnswer, user: LoginUser): void {
  switch (how.kind) {
    case 'navigation':
      ctx.redirect(safeRedirect(how.redirect));
      return;
    case 'form':
      ctx.body = { message: 'logged in', redirectUrl: safeRedirect(how.redirect), ...(how.mfaEnrolmentRequired && { mfaEnrolmentRequired: true }) };
      return;
    case 'created':
      ctx.status = 201;
      ctx.body = { userId: user.id, orgId: user.default_org_id };
  }
}
