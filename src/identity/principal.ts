/** The authenticated caller of a request. */
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
}
