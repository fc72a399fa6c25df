/**
 * OpenID Connect providers (generic, workspace) on openid-client: discovery once (retried after a
 * failure), the authorization URL with state, nonce and PKCE S256, and on callback the code
 * exchange with openid-client's ID token checks (issuer, audience, expiry, nonce, and — with its
 * non-repudiation checks on — the signature under the issuer's published keys with the expected
 * algorithm, so never `none`), then userinfo, whose `sub` must be the token's.
 */
import * as client from 'openid-client';
import type { Config, OAuthProviderConfig, OAuthProviderId } from '../../config.ts';
import { ExternalLoginError, providerEmail, type ExternalIdentity, type LoginChecks, type LoginProvider } from './types.ts';

/** How long discovery, token and userinfo requests may take. */
export const REQUEST_TIMEOUT_SECONDS = 10;

export interface OidcSettings {
  id: OAuthProviderId;
  label: string;
  settings: OAuthProviderConfig;
  issuerUrl: string;
  scopes: string[];
  emailClaim: string;
  /** Plain-http issuers are for the tests' in-process provider only. */
  allowHttp: boolean;
  /** The provider's own rules (allowed domains), on the identity and all its claims. */
  admit?(identity: ExternalIdentity, claims: Record<string, unknown>): void;
}

/** openid-client refuses plain http; the tests run their providers on loopback http. */
export function allowsHttp(config: Config, url: string): boolean {
  return config.env === 'test' && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null);

export class OidcProvider implements LoginProvider {
  readonly id: OAuthProviderId;
  readonly authModule: string;
  readonly label: string;
  readonly settings: OAuthProviderConfig;
  private discovered: Promise<client.Configuration> | null = null;

  constructor(private readonly oidc: OidcSettings) {
    this.id = oidc.id;
    this.authModule = `oauth_${oidc.id}`;
    this.label = oidc.label;
    this.settings = oidc.settings;
  }

  private configuration(): Promise<client.Configuration> {
    this.discovered ??= client
      .discovery(
        new URL(this.oidc.issuerUrl),
        this.settings.clientId,
        { client_secret: this.settings.clientSecret },
        client.ClientSecretPost(this.settings.clientSecret),
        {
          timeout: REQUEST_TIMEOUT_SECONDS,
          // openid-client trusts TLS for an ID token from the token endpoint; we check its signature too.
          execute: [client.enableNonRepudiationChecks, ...(this.oidc.allowHttp ? [client.allowInsecureRequests] : [])],
        },
      )
      .catch((err: unknown) => {
        // The next login tries again: the issuer may only have been down for a moment.
        this.discovered = null;
        throw err;
      });
    return this.discovered;
  }

  async authorizationUrl(redirectUri: string, checks: LoginChecks): Promise<URL> {
    const configuration = await this.configuration();
    return client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: this.oidc.scopes.join(' '),
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  async identify(callbackUrl: URL, redirectUri: string, checks: LoginChecks): Promise<ExternalIdentity> {
    const configuration = await this.configuration();
    const currentUrl = new URL(redirectUri);
    currentUrl.search = callbackUrl.search;
    const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      pkceCodeVerifier: checks.codeVerifier,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (!idClaims) throw new ExternalLoginError('the provider returned no ID token');
    const userinfo = await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
    const claims: Record<string, unknown> = { ...idClaims, ...userinfo };
    const email = providerEmail(claims[this.oidc.emailClaim]);
    const identity: ExternalIdentity = {
      issuer: idClaims.iss,
      subject: idClaims.sub,
      email,
      emailVerified: email !== null && claims.email_verified === true,
      name: text(claims.name),
      login: text(claims.preferred_username),
      tokens: { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, idToken: tokens.id_token },
    };
    this.oidc.admit?.(identity, claims);
    return identity;
  }
}
