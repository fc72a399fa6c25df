/**
 * The code host: GitHub-shaped OAuth 2.0, not OpenID Connect. The code is exchanged (with PKCE)
 * at the token endpoint through openid-client, then the REST API says who the user is: `/user`
 * (the numeric id is the subject, stable across renames), `/user/emails` (only the primary
 * verified one counts), `/user/orgs` for OAUTH_CODEHOST_ALLOWED_ORGANIZATIONS and `/user/teams`
 * for team sync.
 */
import * as client from 'openid-client';
import type { Config } from '../../config.ts';
import { allowsHttp, REQUEST_TIMEOUT_SECONDS } from './oidc.ts';
import { ExternalLoginError, providerEmail, type ExternalIdentity, type LoginChecks, type LoginProvider } from './types.ts';

type CodehostConfig = NonNullable<Config['oauth']['codehost']>;

interface CodehostUser {
  id: number | string;
  login: string;
  name?: string | null;
}
interface CodehostEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

const SCOPES = 'read:user user:email read:org';

export class CodehostProvider implements LoginProvider {
  readonly id = 'codehost' as const;
  readonly authModule = 'oauth_codehost';
  readonly label = 'Code host';
  readonly settings: CodehostConfig;
  private readonly configuration: client.Configuration;

  constructor(
    private readonly codehost: CodehostConfig,
    allowHttp: boolean,
  ) {
    this.settings = codehost;
    this.configuration = new client.Configuration(
      { issuer: codehost.apiUrl, authorization_endpoint: codehost.authUrl, token_endpoint: codehost.tokenUrl },
      codehost.clientId,
      { client_secret: codehost.clientSecret },
      client.ClientSecretPost(codehost.clientSecret),
    );
    this.configuration.timeout = REQUEST_TIMEOUT_SECONDS;
    this.configuration[client.customFetch] = (url, options) => this.fetchRefusalsAsErrors(url, options);
    if (allowHttp) client.allowInsecureRequests(this.configuration);
  }

  /**
   * GitHub answers a refused code exchange with HTTP 200 and an `error` field; as a 400 it is
   * the OAuth error response openid-client reports (`bad_verification_code`), not a body without a token.
   */
  private async fetchRefusalsAsErrors(url: string, options: client.CustomFetchOptions): Promise<Response> {
    // The code host's addresses come from the operator's configuration, not from users, and
    // openid-client makes its other requests itself: this one wrapper stays on fetch too.
    // eslint-disable-next-line no-restricted-globals
    const response = await fetch(url, options as RequestInit);
    if (url !== this.codehost.tokenUrl || response.status !== 200) return response;
    const body: unknown = await response
      .clone()
      .json()
      .catch(() => null);
    if (!body || typeof body !== 'object' || !('error' in body)) return response;
    return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
  }

  async authorizationUrl(redirectUri: string, checks: LoginChecks): Promise<URL> {
    return client.buildAuthorizationUrl(this.configuration, {
      redirect_uri: redirectUri,
      scope: SCOPES,
      state: checks.state,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  private async api<T>(accessToken: string, path: string): Promise<T> {
    const response = await client.fetchProtectedResource(this.configuration, accessToken, new URL(`${this.codehost.apiUrl}${path}`), 'GET');
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    return (await response.json()) as T;
  }

  async identify(callbackUrl: URL, redirectUri: string, checks: LoginChecks): Promise<ExternalIdentity> {
    const currentUrl = new URL(redirectUri);
    currentUrl.search = callbackUrl.search;
    const tokens = await client.authorizationCodeGrant(this.configuration, currentUrl, { expectedState: checks.state, pkceCodeVerifier: checks.codeVerifier });
    const token = tokens.access_token;
    const user = await this.api<CodehostUser>(token, '/user');
    if (user.id === undefined || user.id === null || !/^\d+$/.test(String(user.id))) throw new Error('/user gave no numeric id');

    const { allowedOrganizations, syncTeams } = this.codehost;
    if (allowedOrganizations.length > 0) {
      const orgs = await this.api<Array<{ login: string }>>(token, '/user/orgs?per_page=100');
      if (!orgs.some((org) => allowedOrganizations.includes(String(org.login).toLowerCase()))) {
        throw new ExternalLoginError('you are not a member of an organization allowed to sign in here', `not in ${allowedOrganizations.join(', ')}`);
      }
    }
    const emails = await this.api<CodehostEmail[]>(token, '/user/emails?per_page=100');
    const primary = emails.find((entry) => entry.primary === true && entry.verified === true);
    const email = providerEmail(primary?.email);
    const teams = syncTeams
      ? (await this.api<Array<{ slug: string; organization: { login: string } }>>(token, '/user/teams?per_page=100')).map((team) =>
          `${team.organization.login}/${team.slug}`.toLowerCase(),
        )
      : undefined;
    return {
      issuer: this.codehost.apiUrl,
      subject: String(user.id),
      email,
      emailVerified: email !== null,
      name: typeof user.name === 'string' ? user.name : null,
      login: typeof user.login === 'string' ? user.login : null,
      tokens: { accessToken: token, refreshToken: tokens.refresh_token },
      teams,
    };
  }
}

export function codehostProvider(config: Config): CodehostProvider | null {
  const codehost = config.oauth.codehost;
  return codehost && new CodehostProvider(codehost, allowsHttp(config, codehost.apiUrl));
}
