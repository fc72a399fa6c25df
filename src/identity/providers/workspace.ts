/**
 * The workspace identity provider: Google-shaped OpenID Connect. OAUTH_WORKSPACE_ALLOWED_DOMAINS
 * admits only verified emails whose domain is exactly a listed one: one `@`, ASCII only (a
 * look-alike Unicode domain is another domain), compared whole, so `a@evil-example.com`,
 * `a@example.com.evil` and `a@evil.com@example.com` are refused for `example.com`. A hosted
 * domain (`hd`) claim, when the provider sends one, must be listed too.
 */
import type { Config } from '../../config.ts';
import { allowsHttp, OidcProvider } from './oidc.ts';
import { ExternalLoginError, type ExternalIdentity } from './types.ts';

const ASCII_EMAIL = /^[\x21-\x3f\x41-\x7e]+@([a-z0-9-]+(\.[a-z0-9-]+)+)$/;

/** The domain of an email with exactly one `@` and an ASCII domain, or null. */
export function emailDomain(email: string): string | null {
  const match = ASCII_EMAIL.exec(email.toLowerCase());
  return match ? match[1]! : null;
}

export function admitDomain(allowedDomains: string[], identity: ExternalIdentity, claims: Record<string, unknown>): void {
  if (allowedDomains.length === 0) return;
  const domain = identity.email && identity.emailVerified ? emailDomain(identity.email) : null;
  if (!domain || !allowedDomains.includes(domain)) throw new ExternalLoginError('your email domain is not allowed to sign in here');
  if (claims.hd !== undefined && (typeof claims.hd !== 'string' || !allowedDomains.includes(claims.hd))) {
    throw new ExternalLoginError('your workspace domain is not allowed to sign in here');
  }
}

export function workspaceProvider(config: Config): OidcProvider | null {
  const workspace = config.oauth.workspace;
  if (!workspace) return null;
  return new OidcProvider({
    id: 'workspace',
    label: 'Workspace',
    settings: workspace,
    issuerUrl: workspace.issuerUrl,
    scopes: ['openid', 'email', 'profile'],
    emailClaim: 'email',
    allowHttp: allowsHttp(config, workspace.issuerUrl),
    admit: (identity, claims) => admitDomain(workspace.allowedDomains, identity, claims),
  });
}
