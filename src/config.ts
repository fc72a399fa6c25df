/**
 * The service's configuration, declared once in src/config/schema.ts (one entry per environment
 * variable) and read by src/config/load.ts; this module is what the rest of the service imports.
 */
import type { Config } from './config/schema.ts';

export type { Config } from './config/schema.ts';
export { effectiveSettings, loadConfig, VARIABLES } from './config/load.ts';
export { ConfigError, REDACTED, type Env } from './config/variable.ts';
export { assertDataDirWritable, describeDatabase, LEGACY_KEY_MIN_LENGTH, normalizeIp, type LegacyApiKey } from './config/special.ts';
export { DEFAULT_RATE_LIMIT_PER_MINUTE, LOG_LEVELS, type LogLevel } from './config/sections/service.ts';
export { QUOTA_TARGETS, type QuotaTarget } from './config/sections/access.ts';
export { OAUTH_PROVIDERS, type OAuthConfig, type OAuthDefaultRole, type OAuthProviderConfig, type OAuthProviderId } from './config/sections/oauth.ts';

export type SamlConfig = NonNullable<Config['saml']>;
export type SamlAttributeMapping = SamlConfig['attributeMapping'];
