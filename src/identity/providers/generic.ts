/** The generic OpenID Connect provider: any issuer found by discovery (OAUTH_GENERIC_*). */
import type { Config } from '../../config.ts';
import { allowsHttp, OidcProvider } from './oidc.ts';

export function genericProvider(config: Config): OidcProvider | null {
  const generic = config.oauth.generic;
  if (!generic) return null;
  return new OidcProvider({
    id: 'generic',
    label: 'OpenID Connect',
    settings: generic,
    issuerUrl: generic.issuerUrl,
    scopes: generic.scopes,
    emailClaim: generic.emailAttributeName,
    allowHttp: allowsHttp(config, generic.issuerUrl),
  });
}
