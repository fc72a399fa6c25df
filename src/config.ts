/**
 * Every environment variable of the service, typed, validated and defaulted in one place.
 * The README's variable table is written from this file; keep them in step.
 */
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_HASH_CONCURRENCY, DEFAULT_HASH_QUEUE } from './crypto/password.ts';
import { DEFAULT_QUERY_TIMEOUT_MS } from './db/query-timeout.ts';
import type { DecisionLogSettings } from './authz/decision-log.ts';
import { IpRanges, type EntryKind } from './net/ip-ranges.ts';
import { ALLOWED_NETWORKS_VARIABLE } from './outbound/address-policy.ts';

export interface Config {
  env: 'production' | 'development' | 'test';
  /** The address to listen on (HOST); empty: every interface. */
  host: string;
  port: number;
  /** `mysql://…` selects MySQL/MariaDB, `sqlite:<file>` a given SQLite file; null the embedded one under DATA_DIR. */
  databaseUrl: string | null;
  /** Where the embedded SQLite file and the generated development secrets live (DATA_DIR). */
  dataDir: string;
  sqliteFile: string;
  /** How long boot waits for the database to answer (DB_CONNECT_TIMEOUT_MS) before giving up. */
  dbConnectTimeoutMs: number;
  /** How long a query may take, and a request wait for a connection, before it fails as the database being unavailable (src/db/query-timeout.ts). */
  dbQueryTimeoutMs: number;
  logLevel: LogLevel;
  /** METRICS_TOKEN: when set, GET /metrics asks for it as a Bearer token. */
  metricsToken: string | null;
  /** How long SIGTERM/SIGINT wait for requests in flight before the process exits anyway. */
  shutdownTimeoutMs: number;
  bodyLimitBytes: number;
  /** RATE_LIMIT_PER_MINUTE: requests per minute per token, signed-in user or anonymous address (0 = no limit); see http/rate-limit.ts. */
  rateLimitPerMinute: number;
  legacyAclEnabled: boolean;
  session: {
    maxLifetimeMs: number;
    idleTimeoutMs: number;
    rotationIntervalMs: number;
    rotationGraceMs: number;
    cookieSecure: boolean;
    invalidateAllOnBoot: boolean;
  };
  /** How many scrypt derivations run at once, and how many more may wait (beyond: 503). */
  passwordHashing: { concurrency: number; queue: number };
  /** `DISABLE_LOGIN_FORM=true`: local password login is hidden and refused. */
  disableLoginForm: boolean;
  /** Proxies (addresses or CIDRs) whose X-Forwarded-For names the client; empty = the socket's address is the client. */
  trustedProxies: string[];
  /** Allowed browser origins; empty = any origin (without credentials). */
  corsOrigins: string[];
  seedAdmin: { email: string; password: string; login: string; name: string } | null;
  auditRetentionDays: number;
  /** How often an instance re-reads the policy-data revisions written by other instances. */
  authzRevisionPollMs: number;
  /** How long an instance uses the session, token and user rows it read (src/identity/caches.ts), and an org's team list (src/teams/list-cache.ts), before reading them again; 0: never cached. */
  principalCacheTtlMs: number;
  /** Development and tests: every answer is checked against its route's declared response schema (src/http/responses.ts). */
  validateResponses: boolean;
  /** How many org policy documents an instance keeps loaded (least recently used dropped first). */
  authzMaxLoadedOrgs: number;
  /** Test mode: every loaded policy document is checked against a fresh build after each commit. */
  authzVerifyDocuments: boolean;
  policyWasmPath: string;
  /** DECISION_LOG: where authorize() decisions are logged (OPA's decision-log fields), null when off. */
  decisionLog: DecisionLogSettings | null;
  /** Default quota limits per target (-1 = unlimited), from the QUOTA_* variables. */
  quotaDefaults: Record<QuotaTarget, number>;
  /** Encrypts secrets at rest (AES-256-GCM). */
  secretKey: string;
  /** Signs the session cookie (HMAC-SHA256), and short-lived state handed to browsers. */
  jwtSecret: string;
  /** ROTATE_SECRETS: the secrets (JWT_SECRET, SECRET_KEY) whose new value this boot adopts for every instance. */
  rotateSecrets: Array<'JWT_SECRET' | 'SECRET_KEY'>;
  /**
   * Deprecated `API_KEYS`: the legacy keys `POST /api/serviceaccounts/migrate` turns into hidden
   * service accounts of org_main. A comma-separated list of `<name>:<role>:<key>`: name letters,
   * digits, `.`, `_` or `-` (at most 100, unique); role Admin, Editor or Viewer; key at least 16
   * characters without spaces (unique, not starting with `svc_`, which the service's own tokens
   * use; it may contain `:`). An invalid entry stops startup with the entry named (never its key).
   */
  apiKeys: LegacyApiKey[];
  /** CONNECTOR_ALLOWED_NETWORKS: CIDRs the service may reach although the address policy refuses them (loopback in development). */
  connectorAllowedNetworks: string[];
  /** How long an ops plan waits for its approval (OPS_PLAN_TTL_MS) before it expires. */
  opsPlanTtlMs: number;
  /** Limits of every request the service makes to a backend. */
  outbound: { connectTimeoutMs: number; timeoutMs: number; maxResponseBytes: number };
  /** OPS_READ_MAX_BYTES: the most an ops connector's read answers (lists are cut to fit, logs are cut by the cluster). */
  opsReadMaxBytes: number;
  /** SVC_AUTH_LDAP_ENABLED and the TOML file of the LDAP servers (LDAP_CONFIG_FILE); read by identity/providers/ldap. */
  ldap: { enabled: boolean; configFile: string; allowEmailLinking: boolean };
  /** The OAuth 2.0 login providers (OAUTH_<P>_*); null = not configured, refused at both endpoints. */
  oauth: OAuthConfig;
  /** SAML login (SAML_ENABLED=true), null when off. */
  saml: SamlConfig | null;
}

export const OAUTH_PROVIDERS = ['codehost', 'workspace', 'generic'] as const;
export type OAuthProviderId = (typeof OAUTH_PROVIDERS)[number];
export type OAuthDefaultRole = 'Admin' | 'Editor' | 'Viewer' | 'None';

/** What every OAuth provider has: client credentials and what an unknown user gets. */
export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  allowSignUp: boolean;
  /** An identity with no link of its own may join the existing account with its verified email (external-accounts.ts). */
  allowEmailLinking: boolean;
  defaultRole: OAuthDefaultRole;
  defaultOrgId: string;
}

export interface OAuthConfig {
  /** GitHub-shaped OAuth 2.0 (not OIDC): endpoints default to github.com's. */
  codehost: (OAuthProviderConfig & { authUrl: string; tokenUrl: string; apiUrl: string; allowedOrganizations: string[]; syncTeams: boolean }) | null;
  /** Google-shaped OpenID Connect: the issuer defaults to Google's. */
  workspace: (OAuthProviderConfig & { issuerUrl: string; allowedDomains: string[] }) | null;
  generic: (OAuthProviderConfig & { issuerUrl: string; scopes: string[]; emailAttributeName: string }) | null;
}

/** Which assertion attribute carries each user field; `NameID` names the subject's NameID. */
export interface SamlAttributeMapping {
  login: string;
  email: string;
  name: string;
  /** Group names for team sync into the default org; null = no sync. */
  groups: string | null;
}

export interface SamlConfig {
  /** The identity provider's sign-on URL (SAML_ENTRY_POINT): AuthnRequests go there. */
  entryPoint: string;
  /** Where single logout sends LogoutRequests (SAML_LOGOUT_URL, default the entry point). */
  logoutUrl: string;
  /** This service provider's entity id (SAML_ISSUER): the audience assertions must name. */
  issuer: string;
  /** The assertion consumer URL as the browser reaches it (SAML_CALLBACK_URL). */
  callbackUrl: string;
  /** The identity provider's signing certificate, PEM. */
  idpCert: string;
  /** When set (SAML_IDP_ISSUER), the Issuer every response and assertion must carry. */
  idpIssuer: string | null;
  /** Signs AuthnRequests and LogoutRequests when set (SAML_PRIVATE_KEY), PEM. */
  privateKey: string | null;
  /** The certificate of that key, published in the metadata (SAML_CERTIFICATE), PEM. */
  certificate: string | null;
  /** SAML_WANT_ASSERTIONS_SIGNED: the assertion itself must be signed, a signed response is not enough. */
  wantAssertionsSigned: boolean;
  /** SAML_ALLOW_EMAIL_LINKING: a NameID with no link may join the existing account with the asserted email. */
  allowEmailLinking: boolean;
  attributeMapping: SamlAttributeMapping;
}

export interface LegacyApiKey {
  name: string;
  role: 'Admin' | 'Editor' | 'Viewer';
  key: string;
}

export class ConfigError extends Error {}

/** RATE_LIMIT_PER_MINUTE outside NODE_ENV=test; the test suite's clock stands still, so there it is off unless set. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const QUOTA_TARGETS = ['users', 'dashboards', 'connectors', 'api_keys', 'service_accounts', 'alert_rules', 'folders'] as const;
export type QuotaTarget = (typeof QUOTA_TARGETS)[number];

/** The spec's variable of each target; api_keys counts the tokens of one service account. */
const QUOTA_VARIABLES: Record<QuotaTarget, string> = {
  users: 'QUOTA_USERS_PER_ORG',
  service_accounts: 'QUOTA_SERVICE_ACCOUNTS_PER_ORG',
  api_keys: 'QUOTA_API_KEYS_PER_SA',
  dashboards: 'QUOTA_DASHBOARDS_PER_ORG',
  connectors: 'QUOTA_DATASOURCES_PER_ORG',
  folders: 'QUOTA_FOLDERS_PER_ORG',
  alert_rules: 'QUOTA_ALERT_RULES_PER_ORG',
};

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min) throw new ConfigError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

function readPort(env: Env): number {
  const port = readInt(env, 'PORT', 3000, 0);
  if (port > 65535) throw new ConfigError(`PORT must be at most 65535, got ${port}`);
  return port;
}

function readLogLevel(env: Env, nodeEnv: Config['env']): LogLevel {
  const raw = env.LOG_LEVEL?.trim().toLowerCase();
  if (!raw) return nodeEnv === 'test' ? 'silent' : 'info';
  const level = LOG_LEVELS.find((candidate) => candidate === raw);
  if (!level) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  return level;
}

/** A URL naming a database this service cannot open is refused: silently falling back to SQLite would hide it. */
function readDatabaseUrl(env: Env): string | null {
  const url = env.DATABASE_URL?.trim();
  if (!url) return null;
  if (url.startsWith('sqlite:')) return url;
  if (/^mysql2?:\/\//i.test(url)) {
    if (!URL.canParse(url)) throw new ConfigError('DATABASE_URL is not a valid URL (mysql://user:password@host:3306/database)');
    return url;
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  throw new ConfigError(`DATABASE_URL must start with mysql:// or sqlite:, got ${scheme ? `"${scheme}:"` : 'no scheme'}`);
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const normalized = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalized)) return true;
  if (['false', '0', 'no', 'off'].includes(normalized)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function readList(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

const LEGACY_KEY_ROLES: ReadonlyArray<LegacyApiKey['role']> = ['Admin', 'Editor', 'Viewer'];
export const LEGACY_KEY_MIN_LENGTH = 16;
const LEGACY_KEY_NAME = /^[A-Za-z0-9._-]{1,100}$/;

function readApiKeys(env: Env): LegacyApiKey[] {
  const keys: LegacyApiKey[] = [];
  readList(env, 'API_KEYS').forEach((entry, index) => {
    const [name = '', role = '', ...rest] = entry.split(':');
    const key = rest.join(':');
    // The entry is named by position and name only: its key is a secret and must not reach the logs.
    const fail = (why: string) => {
      throw new ConfigError(`API_KEYS entry ${index + 1}${LEGACY_KEY_NAME.test(name) ? ` ("${name}")` : ''}: ${why}`);
    };
    if (!LEGACY_KEY_NAME.test(name)) fail('expected <name>:<role>:<key> with a name of letters, digits, ".", "_" or "-" (at most 100)');
    const canonicalRole = LEGACY_KEY_ROLES.find((candidate) => candidate.toLowerCase() === role.trim().toLowerCase());
    if (!canonicalRole) fail('the role must be Admin, Editor or Viewer');
    if (key.length < LEGACY_KEY_MIN_LENGTH) fail(`the key must be at least ${LEGACY_KEY_MIN_LENGTH} characters`);
    if (/\s/.test(key)) fail('the key must not contain spaces');
    if (key.startsWith('svc_')) fail('the key must not start with svc_, the prefix of the tokens the service issues');
    if (keys.some((other) => other.name === name)) fail('the name is used by an earlier entry');
    if (keys.some((other) => other.key === key)) fail('the key is used by an earlier entry');
    keys.push({ name, role: canonicalRole!, key });
  });
  return keys;
}

/** `::ffff:10.0.0.1` (IPv4-mapped IPv6, as node reports IPv4 peers on dual-stack sockets) is 10.0.0.1. */
export function normalizeIp(ip: string): string {
  // on every request's path: most peers are not IPv4-mapped, and a prefix check is far cheaper than the replace
  return ip.startsWith('::ffff:') ? ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1') : ip;
}

function readSeedAdmin(env: Env): Config['seedAdmin'] {
  const email = env.SEED_ADMIN_EMAIL?.trim();
  const password = env.SEED_ADMIN_PASSWORD;
  if (!email || !password) return null;
  return {
    email,
    password,
    login: env.SEED_ADMIN_LOGIN?.trim() || 'admin',
    name: env.SEED_ADMIN_NAME?.trim() || env.SEED_ADMIN_LOGIN?.trim() || 'admin',
  };
}

/**
 * A secret from the environment; in production it is required. Elsewhere a random one is made
 * once and kept under the data directory, so that restarts can still open what was sealed.
 */
function readSecret(env: Env, name: string, nodeEnv: Config['env'], dataDir: string): string {
  const value = env[name];
  if (value) {
    if (value.length < 32) throw new ConfigError(`${name} must be at least 32 characters`);
    return value;
  }
  if (nodeEnv === 'production') throw new ConfigError(`${name} is required in production (at least 32 random characters)`);
  const file = path.join(dataDir, `${name.toLowerCase()}.generated`);
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const generated = randomBytes(32).toString('base64url');
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, generated, { mode: 0o600 });
  } catch (err) {
    throw unwritableDataDir(dataDir, err);
  }
  return generated;
}

/** A list of CIDRs (or with `kind`, addresses too), each checked here so a bad entry stops startup with the entry named. */
function readIpRanges(env: Env, name: string, kind: EntryKind = 'cidr'): string[] {
  const entries = readList(env, name);
  try {
    new IpRanges(entries, name, kind);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return entries;
}

function unwritableDataDir(dataDir: string, err: unknown): ConfigError {
  return new ConfigError(`DATA_DIR ${dataDir} is not a writable directory (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
}

/**
 * Boot's check that the embedded SQLite file can be created: the directory is made if missing and
 * a file is written and removed, which also catches a read-only filesystem, whoever runs it.
 */
export function assertDataDirWritable(config: Pick<Config, 'databaseUrl' | 'dataDir'>): void {
  if (config.databaseUrl) return;
  const probe = path.join(config.dataDir, `.write-check-${process.pid}`);
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    throw unwritableDataDir(config.dataDir, err);
  }
}

const OAUTH_ROLES: readonly OAuthDefaultRole[] = ['Admin', 'Editor', 'Viewer', 'None'];

/** An http(s) URL from the environment, else `fallback`; `requiredWhen` says when it may not be missing. */
function readUrl(env: Env, name: string, fallback?: string, requiredWhen = 'SAML_ENABLED=true'): string {
  const raw = env[name]?.trim() || fallback;
  if (!raw) throw new ConfigError(`${name} is required when ${requiredWhen}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw;
}

/**
 * The settings every provider shares; null when OAUTH_<P>_CLIENT_ID is unset (the provider is
 * off). A client id without its secret is a mistake worth stopping for, not a disabled provider.
 */
function readOAuthProvider(env: Env, provider: OAuthProviderId): OAuthProviderConfig | null {
  const prefix = `OAUTH_${provider.toUpperCase()}_`;
  const clientId = env[`${prefix}CLIENT_ID`]?.trim();
  if (!clientId) return null;
  const clientSecret = env[`${prefix}CLIENT_SECRET`];
  if (!clientSecret) throw new ConfigError(`${prefix}CLIENT_SECRET is required when ${prefix}CLIENT_ID is set`);
  const rawRole = env[`${prefix}DEFAULT_ROLE`]?.trim() || 'Viewer';
  const defaultRole = OAUTH_ROLES.find((role) => role.toLowerCase() === rawRole.toLowerCase());
  if (!defaultRole) throw new ConfigError(`${prefix}DEFAULT_ROLE must be Admin, Editor, Viewer or None, got "${rawRole}"`);
  return {
    clientId,
    clientSecret,
    allowSignUp: readBool(env, `${prefix}ALLOW_SIGN_UP`, false),
    allowEmailLinking: readBool(env, `${prefix}ALLOW_EMAIL_LINKING`, false),
    defaultRole,
    defaultOrgId: env[`${prefix}DEFAULT_ORG_ID`]?.trim() || 'org_main',
  };
}

function readOAuth(env: Env): OAuthConfig {
  const codehost = readOAuthProvider(env, 'codehost');
  const workspace = readOAuthProvider(env, 'workspace');
  const generic = readOAuthProvider(env, 'generic');
  if (generic && !env.OAUTH_GENERIC_ISSUER_URL?.trim()) throw new ConfigError('OAUTH_GENERIC_ISSUER_URL is required when OAUTH_GENERIC_CLIENT_ID is set');
  const scopes = (env.OAUTH_GENERIC_SCOPES?.trim() || 'openid email profile').split(/\s+/);
  if (generic && !scopes.includes('openid')) throw new ConfigError('OAUTH_GENERIC_SCOPES must include openid (the login needs an ID token)');
  return {
    codehost: codehost && {
      ...codehost,
      authUrl: readUrl(env, 'OAUTH_CODEHOST_AUTH_URL', 'https://github.com/login/oauth/authorize'),
      tokenUrl: readUrl(env, 'OAUTH_CODEHOST_TOKEN_URL', 'https://github.com/login/oauth/access_token'),
      apiUrl: readUrl(env, 'OAUTH_CODEHOST_API_URL', 'https://api.github.com').replace(/\/+$/, ''),
      allowedOrganizations: readList(env, 'OAUTH_CODEHOST_ALLOWED_ORGANIZATIONS').map((org) => org.toLowerCase()),
      syncTeams: readBool(env, 'OAUTH_CODEHOST_SYNC_TEAMS', false),
    },
    workspace: workspace && {
      ...workspace,
      issuerUrl: readUrl(env, 'OAUTH_WORKSPACE_ISSUER_URL', 'https://accounts.google.com'),
      allowedDomains: readList(env, 'OAUTH_WORKSPACE_ALLOWED_DOMAINS').map((domain) => domain.toLowerCase()),
    },
    generic: generic && {
      ...generic,
      issuerUrl: readUrl(env, 'OAUTH_GENERIC_ISSUER_URL', '', 'OAUTH_GENERIC_CLIENT_ID is set'),
      scopes,
      emailAttributeName: env.OAUTH_GENERIC_EMAIL_ATTRIBUTE_NAME?.trim() || 'email',
    },
  };
}

/**
 * A PEM given inline (`-----BEGIN …`, with real or `\n`-escaped line breaks, as env files
 * carry them) or as the path of a file holding it; `kind` is checked by parsing it.
 */
function readPem(env: Env, name: string, kind: 'certificate' | 'private key'): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let pem: string;
  if (raw.startsWith('-----BEGIN')) {
    pem = raw.replace(/\\n/g, '\n');
  } else {
    try {
      pem = fs.readFileSync(raw, 'utf8');
    } catch {
      throw new ConfigError(`${name} is neither an inline PEM nor a readable file: "${raw}"`);
    }
  }
  try {
    if (kind === 'certificate') new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch {
    throw new ConfigError(`${name} does not hold a PEM ${kind}`);
  }
  return pem;
}

function readSaml(env: Env): SamlConfig | null {
  if (!readBool(env, 'SAML_ENABLED', false)) return null;
  const entryPoint = readUrl(env, 'SAML_ENTRY_POINT');
  const issuer = env.SAML_ISSUER?.trim();
  if (!issuer) throw new ConfigError('SAML_ISSUER is required when SAML_ENABLED=true');
  const idpCert = readPem(env, 'SAML_IDP_CERT', 'certificate');
  if (!idpCert) throw new ConfigError('SAML_IDP_CERT is required when SAML_ENABLED=true');
  const privateKey = readPem(env, 'SAML_PRIVATE_KEY', 'private key');
  const certificate = readPem(env, 'SAML_CERTIFICATE', 'certificate');
  if (certificate && !privateKey) throw new ConfigError('SAML_CERTIFICATE needs SAML_PRIVATE_KEY, the key it certifies');
  const attribute = (name: string, fallback: string) => env[name]?.trim() || fallback;
  return {
    entryPoint,
    logoutUrl: readUrl(env, 'SAML_LOGOUT_URL', entryPoint),
    issuer,
    callbackUrl: readUrl(env, 'SAML_CALLBACK_URL'),
    idpCert,
    idpIssuer: env.SAML_IDP_ISSUER?.trim() || null,
    privateKey,
    certificate,
    wantAssertionsSigned: readBool(env, 'SAML_WANT_ASSERTIONS_SIGNED', true),
    allowEmailLinking: readBool(env, 'SAML_ALLOW_EMAIL_LINKING', false),
    attributeMapping: {
      login: attribute('SAML_ATTRIBUTE_MAPPING_LOGIN', 'NameID'),
      email: attribute('SAML_ATTRIBUTE_MAPPING_EMAIL', 'email'),
      name: attribute('SAML_ATTRIBUTE_MAPPING_NAME', 'displayName'),
      groups: env.SAML_ATTRIBUTE_MAPPING_GROUPS?.trim() || null,
    },
  };
}

function readDecisionLog(env: Env, dataDir: string): DecisionLogSettings | null {
  const target = env.DECISION_LOG?.trim().toLowerCase();
  if (!target) return null;
  if (target !== 'file' && target !== 'stdout') throw new ConfigError(`DECISION_LOG must be file or stdout, got "${env.DECISION_LOG}"`);
  const rawSample = env.DECISION_LOG_SAMPLE?.trim() || '1';
  const sample = Number(rawSample);
  if (!/^\d*\.?\d+$/.test(rawSample) || sample > 1) {
    throw new ConfigError(`DECISION_LOG_SAMPLE must be a number from 0 to 1, got "${env.DECISION_LOG_SAMPLE}"`);
  }
  return { target, path: path.resolve(env.DECISION_LOG_PATH?.trim() || path.join(dataDir, 'decisions.log')), sample };
}

function readRotateSecrets(env: Env): Config['rotateSecrets'] {
  return readList(env, 'ROTATE_SECRETS').map((name) => {
    if (name !== 'JWT_SECRET' && name !== 'SECRET_KEY') throw new ConfigError(`ROTATE_SECRETS names JWT_SECRET or SECRET_KEY, got "${name}"`);
    return name;
  });
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development';
  const dataDir = path.resolve(env.DATA_DIR || 'data');
  return {
    env: nodeEnv,
    host: env.HOST?.trim() ?? '',
    port: readPort(env),
    databaseUrl: readDatabaseUrl(env),
    dataDir,
    sqliteFile: path.join(dataDir, 'gatehouse.sqlite'),
    dbConnectTimeoutMs: readInt(env, 'DB_CONNECT_TIMEOUT_MS', 60_000, 0),
    dbQueryTimeoutMs: readInt(env, 'DB_QUERY_TIMEOUT_MS', DEFAULT_QUERY_TIMEOUT_MS, 1),
    logLevel: readLogLevel(env, nodeEnv),
    metricsToken: env.METRICS_TOKEN || null,
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', nodeEnv === 'test' ? 0 : DEFAULT_RATE_LIMIT_PER_MINUTE, 0),
    legacyAclEnabled: readBool(env, 'LEGACY_ACL_ENABLED', true),
    session: {
      maxLifetimeMs: readInt(env, 'SESSION_MAX_LIFETIME_MS', 2_592_000_000, 1),
      idleTimeoutMs: readInt(env, 'SESSION_IDLE_TIMEOUT_MS', 604_800_000, 1),
      rotationIntervalMs: readInt(env, 'SESSION_ROTATION_INTERVAL_MS', 600_000, 1),
      rotationGraceMs: readInt(env, 'SESSION_ROTATION_GRACE_MS', 30_000, 0),
      cookieSecure: readBool(env, 'SESSION_COOKIE_SECURE', false),
      invalidateAllOnBoot: readBool(env, 'INVALIDATE_ALL_SESSIONS_ON_BOOT', false),
    },
    seedAdmin: readSeedAdmin(env),
    disableLoginForm: readBool(env, 'DISABLE_LOGIN_FORM', false),
    passwordHashing: {
      concurrency: readInt(env, 'PASSWORD_HASH_CONCURRENCY', DEFAULT_HASH_CONCURRENCY, 1),
      queue: readInt(env, 'PASSWORD_HASH_QUEUE', DEFAULT_HASH_QUEUE, 0),
    },
    trustedProxies: readIpRanges(env, 'TRUSTED_PROXIES', 'address-or-cidr').map(normalizeIp),
    corsOrigins: readList(env, 'CORS_ORIGINS').filter((origin) => origin !== '*'),
    auditRetentionDays: readInt(env, 'AUDIT_RETENTION_DAYS', 90, 1),
    authzRevisionPollMs: readInt(env, 'AUTHZ_REVISION_POLL_MS', 1000, 50),
    principalCacheTtlMs: readInt(env, 'PRINCIPAL_CACHE_TTL_MS', 1000, 0),
    validateResponses: readBool(env, 'RESPONSE_VALIDATION', false),
    authzMaxLoadedOrgs: readInt(env, 'AUTHZ_MAX_LOADED_ORGS', 256, 1),
    authzVerifyDocuments: readBool(env, 'AUTHZ_VERIFY_DOCUMENTS', nodeEnv === 'test'),
    policyWasmPath: env.POLICY_WASM_PATH || path.resolve('policies/build/authz.wasm'),
    decisionLog: readDecisionLog(env, dataDir),
    quotaDefaults: Object.fromEntries(QUOTA_TARGETS.map((target) => [target, readInt(env, QUOTA_VARIABLES[target], -1, -1)])) as Record<QuotaTarget, number>,
    secretKey: readSecret(env, 'SECRET_KEY', nodeEnv, dataDir),
    jwtSecret: readSecret(env, 'JWT_SECRET', nodeEnv, dataDir),
    rotateSecrets: readRotateSecrets(env),
    apiKeys: readApiKeys(env),
    connectorAllowedNetworks: readIpRanges(env, ALLOWED_NETWORKS_VARIABLE),
    opsPlanTtlMs: readInt(env, 'OPS_PLAN_TTL_MS', 3_600_000, 1),
    outbound: {
      connectTimeoutMs: readInt(env, 'OUTBOUND_CONNECT_TIMEOUT_MS', 5_000, 1),
      timeoutMs: readInt(env, 'OUTBOUND_TIMEOUT_MS', 30_000, 1),
      maxResponseBytes: readInt(env, 'OUTBOUND_MAX_RESPONSE_BYTES', 10 * 1024 * 1024, 1024),
    },
    opsReadMaxBytes: readInt(env, 'OPS_READ_MAX_BYTES', 1024 * 1024, 1024),
    ldap: {
      enabled: readBool(env, 'SVC_AUTH_LDAP_ENABLED', false),
      configFile: path.resolve(env.LDAP_CONFIG_FILE?.trim() || 'config/ldap.toml'),
      allowEmailLinking: readBool(env, 'LDAP_ALLOW_EMAIL_LINKING', false),
    },
    oauth: readOAuth(env),
    saml: readSaml(env),
  };
}

/** What stands for a secret wherever configuration is shown (GET /api/admin/settings, the start-up line). */
export const REDACTED = '*****';

const secret = (value: string | null | undefined) => (value ? REDACTED : null);

/** DATABASE_URL without its password, or the embedded SQLite file when it is unset. */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'sqliteFile'>): string {
  if (!config.databaseUrl) return `sqlite:${config.sqliteFile}`;
  if (config.databaseUrl.startsWith('sqlite:')) return config.databaseUrl;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = REDACTED;
  return url.toString();
}

/**
 * The effective configuration by variable name (GET /api/admin/settings): every variable of the
 * README's table with the value this instance runs with, secrets shown only as set (REDACTED)
 * or unset (null).
 */
export function effectiveSettings(config: Config): Record<string, string | number | boolean | string[] | null> {
  return {
    NODE_ENV: config.env,
    HOST: config.host,
    PORT: config.port,
    DATABASE_URL: describeDatabase(config),
    DB_CONNECT_TIMEOUT_MS: config.dbConnectTimeoutMs,
    DB_QUERY_TIMEOUT_MS: config.dbQueryTimeoutMs,
    DATA_DIR: config.dataDir,
    LOG_LEVEL: config.logLevel,
    BODY_LIMIT_BYTES: config.bodyLimitBytes,
    RATE_LIMIT_PER_MINUTE: config.rateLimitPerMinute,
    SECRET_KEY: secret(config.secretKey),
    JWT_SECRET: secret(config.jwtSecret),
    ROTATE_SECRETS: config.rotateSecrets,
    METRICS_TOKEN: secret(config.metricsToken),
    SHUTDOWN_TIMEOUT_MS: config.shutdownTimeoutMs,
    DISABLE_LOGIN_FORM: config.disableLoginForm,
    PASSWORD_HASH_CONCURRENCY: config.passwordHashing.concurrency,
    PASSWORD_HASH_QUEUE: config.passwordHashing.queue,
    TRUSTED_PROXIES: config.trustedProxies,
    CORS_ORIGINS: config.corsOrigins,
    LEGACY_ACL_ENABLED: config.legacyAclEnabled,
    SESSION_MAX_LIFETIME_MS: config.session.maxLifetimeMs,
    SESSION_IDLE_TIMEOUT_MS: config.session.idleTimeoutMs,
    SESSION_ROTATION_INTERVAL_MS: config.session.rotationIntervalMs,
    SESSION_ROTATION_GRACE_MS: config.session.rotationGraceMs,
    SESSION_COOKIE_SECURE: config.session.cookieSecure,
    INVALIDATE_ALL_SESSIONS_ON_BOOT: config.session.invalidateAllOnBoot,
    SEED_ADMIN_EMAIL: config.seedAdmin?.email ?? null,
    SEED_ADMIN_PASSWORD: secret(config.seedAdmin?.password),
    SEED_ADMIN_LOGIN: config.seedAdmin?.login ?? null,
    SEED_ADMIN_NAME: config.seedAdmin?.name ?? null,
    ...Object.fromEntries(QUOTA_TARGETS.map((target) => [QUOTA_VARIABLES[target], config.quotaDefaults[target]])),
    API_KEYS: config.apiKeys.map((entry) => `${entry.name}:${entry.role}:${REDACTED}`),
    AUDIT_RETENTION_DAYS: config.auditRetentionDays,
    AUTHZ_REVISION_POLL_MS: config.authzRevisionPollMs,
    PRINCIPAL_CACHE_TTL_MS: config.principalCacheTtlMs,
    RESPONSE_VALIDATION: config.validateResponses,
    AUTHZ_VERIFY_DOCUMENTS: config.authzVerifyDocuments,
    AUTHZ_MAX_LOADED_ORGS: config.authzMaxLoadedOrgs,
    POLICY_WASM_PATH: config.policyWasmPath,
    DECISION_LOG: config.decisionLog?.target ?? null,
    DECISION_LOG_PATH: config.decisionLog?.target === 'file' ? config.decisionLog.path : null,
    DECISION_LOG_SAMPLE: config.decisionLog?.sample ?? null,
    CONNECTOR_ALLOWED_NETWORKS: config.connectorAllowedNetworks,
    OPS_PLAN_TTL_MS: config.opsPlanTtlMs,
    OUTBOUND_CONNECT_TIMEOUT_MS: config.outbound.connectTimeoutMs,
    OUTBOUND_TIMEOUT_MS: config.outbound.timeoutMs,
    OUTBOUND_MAX_RESPONSE_BYTES: config.outbound.maxResponseBytes,
    OPS_READ_MAX_BYTES: config.opsReadMaxBytes,
    SVC_AUTH_LDAP_ENABLED: config.ldap.enabled,
    LDAP_CONFIG_FILE: config.ldap.configFile,
    LDAP_ALLOW_EMAIL_LINKING: config.ldap.allowEmailLinking,
    ...oauthSettings(config.oauth),
    ...samlSettings(config.saml),
  };
}

/** The SAML_* variables by name; with SAML off only SAML_ENABLED says anything. */
function samlSettings(saml: SamlConfig | null): Record<string, string | boolean | null> {
  return {
    SAML_ENABLED: saml !== null,
    SAML_ENTRY_POINT: saml?.entryPoint ?? null,
    SAML_LOGOUT_URL: saml?.logoutUrl ?? null,
    SAML_ISSUER: saml?.issuer ?? null,
    SAML_CALLBACK_URL: saml?.callbackUrl ?? null,
    SAML_IDP_CERT: saml?.idpCert ?? null,
    SAML_IDP_ISSUER: saml?.idpIssuer ?? null,
    SAML_PRIVATE_KEY: secret(saml?.privateKey),
    SAML_CERTIFICATE: saml?.certificate ?? null,
    SAML_WANT_ASSERTIONS_SIGNED: saml?.wantAssertionsSigned ?? null,
    SAML_ALLOW_EMAIL_LINKING: saml?.allowEmailLinking ?? null,
    SAML_ATTRIBUTE_MAPPING_LOGIN: saml?.attributeMapping.login ?? null,
    SAML_ATTRIBUTE_MAPPING_EMAIL: saml?.attributeMapping.email ?? null,
    SAML_ATTRIBUTE_MAPPING_NAME: saml?.attributeMapping.name ?? null,
    SAML_ATTRIBUTE_MAPPING_GROUPS: saml?.attributeMapping.groups ?? null,
  };
}

/** The OAUTH_* variables by name; a provider that is off (no client id) shows nulls. */
function oauthSettings(oauth: OAuthConfig): Record<string, string | boolean | string[] | null> {
  const settings: Record<string, string | boolean | string[] | null> = {};
  for (const id of OAUTH_PROVIDERS) {
    const provider = oauth[id];
    const prefix = `OAUTH_${id.toUpperCase()}_`;
    settings[`${prefix}CLIENT_ID`] = provider?.clientId ?? null;
    settings[`${prefix}CLIENT_SECRET`] = secret(provider?.clientSecret);
    settings[`${prefix}ALLOW_SIGN_UP`] = provider?.allowSignUp ?? null;
    settings[`${prefix}ALLOW_EMAIL_LINKING`] = provider?.allowEmailLinking ?? null;
    settings[`${prefix}DEFAULT_ROLE`] = provider?.defaultRole ?? null;
    settings[`${prefix}DEFAULT_ORG_ID`] = provider?.defaultOrgId ?? null;
  }
  const { codehost, workspace, generic } = oauth;
  return {
    ...settings,
    OAUTH_GENERIC_ISSUER_URL: generic?.issuerUrl ?? null,
    OAUTH_GENERIC_SCOPES: generic?.scopes ?? null,
    OAUTH_GENERIC_EMAIL_ATTRIBUTE_NAME: generic?.emailAttributeName ?? null,
    OAUTH_WORKSPACE_ISSUER_URL: workspace?.issuerUrl ?? null,
    OAUTH_WORKSPACE_ALLOWED_DOMAINS: workspace?.allowedDomains ?? null,
    OAUTH_CODEHOST_AUTH_URL: codehost?.authUrl ?? null,
    OAUTH_CODEHOST_TOKEN_URL: codehost?.tokenUrl ?? null,
    OAUTH_CODEHOST_API_URL: codehost?.apiUrl ?? null,
    OAUTH_CODEHOST_ALLOWED_ORGANIZATIONS: codehost?.allowedOrganizations ?? null,
    OAUTH_CODEHOST_SYNC_TEAMS: codehost?.syncTeams ?? null,
  };
}
