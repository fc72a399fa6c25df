/**
 * What every external login provider offers the login flow: where to send the browser, and how
 * to turn the provider's answer into an identity. Everything after that (finding, linking or
 * creating the user, the session, the audit entry) is the same for all of them (external-login.ts).
 */
import type { OAuthProviderConfig, OAuthProviderId } from '../../config.ts';
import { UNSAFE_CHARACTERS } from '../../http/schemas.ts';

const EMAIL = new RegExp(`^[^\\s@${UNSAFE_CHARACTERS}]+@[^\\s@${UNSAFE_CHARACTERS}]+$`, 'u');

/** A provider's email claim as the service keeps emails (lower-cased, one `@`, at most 190), or null. */
export function providerEmail(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const email = value.trim().toLowerCase();
  return email.length <= 190 && EMAIL.test(email) ? email : null;
}

/** The per-login secrets the state cookie carries from the redirect to the callback. */
export interface LoginChecks {
  state: string;
  /** PKCE (S256) verifier; the provider gets its challenge. */
  codeVerifier: string;
  /** OpenID Connect only: the ID token must carry it back. */
  nonce: string;
}

/** Who the provider says the user is, after the provider's own checks passed. */
export interface ExternalIdentity {
  issuer: string;
  subject: string;
  /** Lower-cased; null when the provider gave none. */
  email: string | null;
  /** True only when the provider said so explicitly. */
  emailVerified: boolean;
  name: string | null;
  /** A login name the provider suggests (`preferred_username`, the code host's login). */
  login: string | null;
  /** The provider's tokens, kept sealed with the link. */
  tokens: { accessToken: string; refreshToken?: string; idToken?: string };
  /** Code host team sync: the provider teams of the user, as `<org>/<team slug>`; undefined = no sync. */
  teams?: string[];
}

/**
 * A refusal by the login rules (domain, organization, sign-up off, disabled user): its message
 * is shown on the login page; `reason` (default: the message) goes to the audit log only.
 */
export class ExternalLoginError extends Error {
  constructor(
    message: string,
    readonly reason: string = message,
  ) {
    super(message);
  }
}

export interface LoginProvider {
  id: OAuthProviderId;
  /** `oauth_<id>`: the auth module of its links. */
  authModule: string;
  /** The label its links and the login page show. */
  label: string;
  settings: OAuthProviderConfig;
  authorizationUrl(redirectUri: string, checks: LoginChecks): Promise<URL>;
  /** Validates the callback (state, code exchange, tokens) and fetches the user's identity. */
  identify(callbackUrl: URL, redirectUri: string, checks: LoginChecks): Promise<ExternalIdentity>;
}
