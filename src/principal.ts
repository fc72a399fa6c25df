/**
 * The authenticated caller of a request: identity establishes it, the HTTP layer carries it, and
 * stores and domains read it, so it sits below all of them.
 */
export interface PrincipalUser {
  id: string;
  login: string;
  email: string | null;
  name: string;
  isSvcAdmin: boolean;
  isDisabled: boolean;
  isServiceAccount: boolean;
  defaultOrgId: string | null;
}

export interface Principal {
  user: PrincipalUser;
  /** How the request authenticated. */
  via: 'session' | 'token';
  sessionId: string | null;
  /** A service-account token acts only in its account's org; null for sessions and PATs. */
  pinnedOrgId: string | null;
  /** A session that must enrol a second factor (MFA_REQUIRED_FOR) before it may do anything else. */
  mfaEnrolmentPending?: boolean;
}
