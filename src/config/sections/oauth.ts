/**
 * The variables of the OAuth 2.0 login providers (OAUTH_<P>_*): each is off, its configuration
 * null and refused at both endpoints, until its client id is set.
 */
import { choice, flag, list, REQUIRED, text, url } from '../kinds.ts';
import { ConfigError, Optional, Variable, type Infer } from '../variable.ts';

export const OAUTH_PROVIDERS = ['codehost', 'workspace', 'generic'] as const;
export type OAuthProviderId = (typeof OAUTH_PROVIDERS)[number];
const OAUTH_ROLES = ['Admin', 'Editor', 'Viewer', 'None'] as const;

/** What every provider has: client credentials and what an unknown user gets. */
function common(provider: OAuthProviderId) {
  const prefix = `OAUTH_${provider.toUpperCase()}_`;
  return {
    clientId: text(`${prefix}CLIENT_ID`, { meaning: 'the client id; setting it turns the provider on, and then the secret is required' }),
    clientSecret: text(`${prefix}CLIENT_SECRET`, { secret: true, defaultText: REQUIRED, meaning: 'the client secret' }),
    allowSignUp: flag(`${prefix}ALLOW_SIGN_UP`, { default: false, meaning: '`true` creates a user for an identity that matches none' }),
    /** An identity with no link of its own may join the existing account with its verified email (external-accounts.ts). */
    allowEmailLinking: flag(`${prefix}ALLOW_EMAIL_LINKING`, {
      default: false,
      meaning:
        '`true` lets an identity without a link join the existing account holding its verified email, when nothing else guards that account (see [external accounts](identity-providers.md#external-accounts-and-linking))',
    }),
    defaultRole: choice(`${prefix}DEFAULT_ROLE`, OAUTH_ROLES, { default: 'Viewer', meaning: 'org role of a created user (never server admin)' }),
    defaultOrgId: text(`${prefix}DEFAULT_ORG_ID`, {
      default: 'org_main',
      meaning: "the org a created user joins (it must exist; the org's `users` quota applies)",
    }),
  };
}

/** A provider, on when its client id is set; a client id without its secret is a mistake worth stopping for. */
function provider<M extends ReturnType<typeof common>>(id: OAuthProviderId, members: M) {
  const clientIdName = `OAUTH_${id.toUpperCase()}_CLIENT_ID`;
  return new Optional({ isOn: ({ env }) => !!env[clientIdName]?.trim(), requiredWhen: `${clientIdName} is set` }, members);
}

const lowercased = (entries: string[]) => entries.map((entry) => entry.toLowerCase());

const genericScopes = new Variable<string[]>({
  name: 'OAUTH_GENERIC_SCOPES',
  form: 'space-separated scopes, `openid` among them',
  defaultText: '`openid email profile`',
  meaning: 'the scopes requested',
  show: (scopes) => scopes,
  read({ env }) {
    const scopes = (env.OAUTH_GENERIC_SCOPES?.trim() || 'openid email profile').split(/\s+/);
    if (!scopes.includes('openid')) throw new ConfigError('OAUTH_GENERIC_SCOPES must include openid (the login needs an ID token)');
    return scopes;
  },
});

export const oauth = {
  /** GitHub-shaped OAuth 2.0 (not OIDC): endpoints default to github.com's. */
  codehost: provider('codehost', {
    ...common('codehost'),
    authUrl: url('OAUTH_CODEHOST_AUTH_URL', { default: 'https://github.com/login/oauth/authorize', meaning: "the code host's authorize address" }),
    tokenUrl: url('OAUTH_CODEHOST_TOKEN_URL', { default: 'https://github.com/login/oauth/access_token', meaning: "the code host's token address" }),
    apiUrl: url('OAUTH_CODEHOST_API_URL', {
      default: 'https://api.github.com',
      meaning: "the code host's REST API address",
      shape: (address) => address.replace(/\/+$/, ''),
    }),
    allowedOrganizations: list('OAUTH_CODEHOST_ALLOWED_ORGANIZATIONS', {
      defaultText: '*(empty: any)*',
      meaning: 'code-host organizations; only their members sign in',
      entries: lowercased,
    }),
    syncTeams: flag('OAUTH_CODEHOST_SYNC_TEAMS', {
      default: false,
      meaning:
        "`true` makes the user's code-host teams (`<org>/<team slug>`) decide, at each login, membership of the default org's teams named the same (case-insensitive); teams named otherwise are not touched",
    }),
  }),
  /** Google-shaped OpenID Connect: the issuer defaults to Google's. */
  workspace: provider('workspace', {
    ...common('workspace'),
    issuerUrl: url('OAUTH_WORKSPACE_ISSUER_URL', { default: 'https://accounts.google.com', meaning: "the workspace provider's OpenID issuer" }),
    allowedDomains: list('OAUTH_WORKSPACE_ALLOWED_DOMAINS', {
      defaultText: '*(empty: any)*',
      meaning:
        'email domains; only a verified email whose domain is exactly one of them signs in (and a hosted-domain `hd` claim, when sent, must be listed too)',
      entries: lowercased,
    }),
  }),
  generic: provider('generic', {
    ...common('generic'),
    issuerUrl: url('OAUTH_GENERIC_ISSUER_URL', {
      defaultText: REQUIRED,
      meaning: 'the issuer, found by OpenID discovery (`<issuer>/.well-known/openid-configuration`)',
    }),
    scopes: genericScopes,
    emailAttributeName: text('OAUTH_GENERIC_EMAIL_ATTRIBUTE_NAME', { default: 'email', meaning: 'the claim (ID token or userinfo) that holds the email' }),
  }),
};

export type OAuthConfig = Infer<typeof oauth>;
export type OAuthProviderConfig = Infer<ReturnType<typeof common>>;
export type OAuthDefaultRole = OAuthProviderConfig['defaultRole'];
