/**
 * Every environment variable of the service, typed, validated and defaulted in one place.
 * The README's variable table is written from this file; keep them in step.
 */
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface Config {
  env: 'production' | 'development' | 'test';
  /** The address to listen on (HOST); empty: every interface. */
  host: string;
  port: number;
  /** `mysql://…` selects MySQL/MariaDB; anything else is the embedded SQLite file. */
  databaseUrl: string | null;
  sqliteFile: string;
  /** How long boot waits for the database to answer (DB_CONNECT_TIMEOUT_MS) before giving up. */
  dbConnectTimeoutMs: number;
  logLevel: string;
  bodyLimitBytes: number;
  legacyAclEnabled: boolean;
  session: {
    maxLifetimeMs: number;
    idleTimeoutMs: number;
    rotationIntervalMs: number;
    rotationGraceMs: number;
    cookieSecure: boolean;
    invalidateAllOnBoot: boolean;
  };
  /** `DISABLE_LOGIN_FORM=true`: local password login is hidden and refused. */
  disableLoginForm: boolean;
  /** Proxies whose X-Forwarded-For names the client; empty = the socket's address is the client. */
  trustedProxies: string[];
  /** Allowed browser origins; empty = any origin (without credentials). */
  corsOrigins: string[];
  seedAdmin: { email: string; password: string; login: string; name: string } | null;
  auditRetentionDays: number;
  /** How often an instance re-reads the policy-data revisions written by other instances. */
  authzRevisionPollMs: number;
  /** How many org policy documents an instance keeps loaded (least recently used dropped first). */
  authzMaxLoadedOrgs: number;
  /** Test mode: every loaded policy document is checked against a fresh build after each commit. */
  authzVerifyDocuments: boolean;
  policyWasmPath: string;
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
  /** SAML login (SAML_ENABLED=true), null when off. */
  saml: SamlConfig | null;
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
  attributeMapping: SamlAttributeMapping;
}

export interface LegacyApiKey {
  name: string;
  role: 'Admin' | 'Editor' | 'Viewer';
  key: string;
}

export class ConfigError extends Error {}

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
  return ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
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
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, generated, { mode: 0o600 });
  return generated;
}

function readUrl(env: Env, name: string, fallback?: string): string {
  const raw = env[name]?.trim() || fallback;
  if (!raw) throw new ConfigError(`${name} is required when SAML_ENABLED=true`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw;
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
    attributeMapping: {
      login: attribute('SAML_ATTRIBUTE_MAPPING_LOGIN', 'NameID'),
      email: attribute('SAML_ATTRIBUTE_MAPPING_EMAIL', 'email'),
      name: attribute('SAML_ATTRIBUTE_MAPPING_NAME', 'displayName'),
      groups: env.SAML_ATTRIBUTE_MAPPING_GROUPS?.trim() || null,
    },
  };
}

function readRotateSecrets(env: Env): Config['rotateSecrets'] {
  return readList(env, 'ROTATE_SECRETS').map((name) => {
    if (name !== 'JWT_SECRET' && name !== 'SECRET_KEY') throw new ConfigError(`ROTATE_SECRETS names JWT_SECRET or SECRET_KEY, got "${name}"`);
    return name;
  });
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development';
  const dataDir = env.DATA_DIR || path.resolve('data');
  return {
    env: nodeEnv,
    host: env.HOST?.trim() ?? '',
    port: readPort(env),
    databaseUrl: env.DATABASE_URL?.trim() || null,
    sqliteFile: path.join(dataDir, 'gatehouse.sqlite'),
    dbConnectTimeoutMs: readInt(env, 'DB_CONNECT_TIMEOUT_MS', 60_000, 0),
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
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
    trustedProxies: readList(env, 'TRUSTED_PROXIES').map(normalizeIp),
    corsOrigins: readList(env, 'CORS_ORIGINS').filter((origin) => origin !== '*'),
    auditRetentionDays: readInt(env, 'AUDIT_RETENTION_DAYS', 90, 1),
    authzRevisionPollMs: readInt(env, 'AUTHZ_REVISION_POLL_MS', 1000, 50),
    authzMaxLoadedOrgs: readInt(env, 'AUTHZ_MAX_LOADED_ORGS', 256, 1),
    authzVerifyDocuments: readBool(env, 'AUTHZ_VERIFY_DOCUMENTS', nodeEnv === 'test'),
    policyWasmPath: env.POLICY_WASM_PATH || path.resolve('policies/build/authz.wasm'),
    quotaDefaults: Object.fromEntries(QUOTA_TARGETS.map((target) => [target, readInt(env, QUOTA_VARIABLES[target], -1, -1)])) as Record<QuotaTarget, number>,
    secretKey: readSecret(env, 'SECRET_KEY', nodeEnv, dataDir),
    jwtSecret: readSecret(env, 'JWT_SECRET', nodeEnv, dataDir),
    rotateSecrets: readRotateSecrets(env),
    apiKeys: readApiKeys(env),
    saml: readSaml(env),
  };
}
