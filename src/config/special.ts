/**
 * The variables whose reading is their own: the database URL, the secrets generated outside
 * production, the legacy API keys, the lists of addresses and networks, and PEM keys and certificates.
 */
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { IpRanges, type EntryKind } from '../net/ip-ranges.ts';
import { list, required, REQUIRED } from './kinds.ts';
import { ConfigError, REDACTED, Variable, type LoadContext } from './variable.ts';

function unwritableDataDir(dataDir: string, err: unknown): ConfigError {
  return new ConfigError(`DATA_DIR ${dataDir} is not a writable directory (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
}

/**
 * Boot's check that the embedded SQLite file can be created: the directory is made if missing and
 * a file is written and removed, which also catches a read-only filesystem, whoever runs it.
 */
export function assertDataDirWritable(config: { databaseUrl: string | null; dataDir: string }): void {
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

/** DATABASE_URL without its password, or the embedded SQLite file when it is unset. */
export function describeDatabase(config: { databaseUrl: string | null; sqliteFile: string }): string {
  if (!config.databaseUrl) return `sqlite:${config.sqliteFile}`;
  if (config.databaseUrl.startsWith('sqlite:')) return config.databaseUrl;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = REDACTED;
  return url.toString();
}

/** A URL naming a database this service cannot open is refused: silently falling back to SQLite would hide it. */
export function databaseUrl(name: string, meaning: string): Variable<string | null> {
  return new Variable({
    name,
    form: '`mysql://…` or `sqlite:<file>`',
    defaultText: '*(unset: SQLite)*',
    meaning,
    show: (_url, config) => describeDatabase(config as { databaseUrl: string | null; sqliteFile: string }),
    read(ctx) {
      const url = ctx.env[name]?.trim();
      if (!url) return null;
      if (url.startsWith('sqlite:')) return url;
      if (/^mysql2?:\/\//i.test(url)) {
        if (!URL.canParse(url)) throw new ConfigError(`${name} is not a valid URL (mysql://user:password@host:3306/database)`);
        return url;
      }
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
      throw new ConfigError(`${name} must start with mysql:// or sqlite:, got ${scheme ? `"${scheme}:"` : 'no scheme'}`);
    },
  });
}

/**
 * A secret from the environment; in production it is required. Elsewhere a random one is made
 * once and kept under the data directory, so that restarts can still open what was sealed.
 */
export function generatedSecret(name: string, meaning: string): Variable<string> {
  return new Variable({
    name,
    form: 'at least 32 characters',
    defaultText: `generated once into \`$DATA_DIR/${name.toLowerCase()}.generated\` outside production`,
    meaning,
    secret: true,
    read({ env, nodeEnv, dataDir }: LoadContext) {
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
    },
  });
}

/** `::ffff:10.0.0.1` (IPv4-mapped IPv6, as node reports IPv4 peers on dual-stack sockets) is 10.0.0.1. */
export function normalizeIp(ip: string): string {
  // on every request's path: most peers are not IPv4-mapped, and a prefix check is far cheaper than the replace
  return ip.startsWith('::ffff:') ? ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1') : ip;
}

/** A list of CIDRs (or with `kind`, addresses too), each checked here so a bad entry stops startup with the entry named. */
export function ipRanges(name: string, kind: EntryKind, meaning: string): Variable<string[]> {
  return list(name, {
    form: kind === 'cidr' ? 'comma-separated CIDRs' : 'comma-separated addresses and CIDRs',
    meaning,
    entries(entries) {
      try {
        new IpRanges(entries, name, kind);
      } catch (err) {
        throw new ConfigError((err as Error).message);
      }
      // a proxy is compared with the socket's peer, whose IPv4 address node may report IPv4-mapped
      return kind === 'cidr' ? entries : entries.map(normalizeIp);
    },
  });
}

export const LEGACY_KEY_ROLES = ['Admin', 'Editor', 'Viewer'] as const;
export const LEGACY_KEY_MIN_LENGTH = 16;
const LEGACY_KEY_NAME = /^[A-Za-z0-9._-]{1,100}$/;

export interface LegacyApiKey {
  name: string;
  role: (typeof LEGACY_KEY_ROLES)[number];
  key: string;
}

/**
 * Deprecated `API_KEYS`: a comma-separated list of `<name>:<role>:<key>`. An invalid entry stops
 * startup with the entry named by position and name, never by its key; the settings show each
 * entry with its key REDACTED.
 */
export function legacyApiKeys(name: string, meaning: string): Variable<LegacyApiKey[]> {
  return list<LegacyApiKey>(name, {
    form: '`<name>:<role>:<key>,…`',
    meaning,
    secret: true,
    show: (keys) => keys.map((entry) => `${entry.name}:${entry.role}:${REDACTED}`),
    entries(entries) {
      const keys: LegacyApiKey[] = [];
      entries.forEach((entry, index) => {
        const [keyName = '', role = '', ...rest] = entry.split(':');
        const key = rest.join(':');
        const fail = (why: string) => {
          throw new ConfigError(`${name} entry ${index + 1}${LEGACY_KEY_NAME.test(keyName) ? ` ("${keyName}")` : ''}: ${why}`);
        };
        if (!LEGACY_KEY_NAME.test(keyName)) fail('expected <name>:<role>:<key> with a name of letters, digits, ".", "_" or "-" (at most 100)');
        const canonicalRole = LEGACY_KEY_ROLES.find((candidate) => candidate.toLowerCase() === role.trim().toLowerCase());
        if (!canonicalRole) fail('the role must be Admin, Editor or Viewer');
        if (key.length < LEGACY_KEY_MIN_LENGTH) fail(`the key must be at least ${LEGACY_KEY_MIN_LENGTH} characters`);
        if (/\s/.test(key)) fail('the key must not contain spaces');
        if (key.startsWith('svc_')) fail('the key must not start with svc_, the prefix of the tokens the service issues');
        if (keys.some((other) => other.name === keyName)) fail('the name is used by an earlier entry');
        if (keys.some((other) => other.key === key)) fail('the key is used by an earlier entry');
        keys.push({ name: keyName, role: canonicalRole!, key });
      });
      return keys;
    },
  });
}

type PemKind = 'certificate' | 'private key';
interface PemSpec {
  meaning: string;
  secret?: boolean;
}

function readPem(name: string, kind: PemKind, ctx: LoadContext): string | null {
  const raw = ctx.env[name]?.trim();
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

/**
 * A PEM given inline (`-----BEGIN …`, with real or `\n`-escaped line breaks, as env files carry
 * them) or as the path of a file holding it; `kind` is checked by parsing it.
 */
export function pem(name: string, kind: PemKind, spec: PemSpec): Variable<string | null> {
  return new Variable({
    name,
    form: `PEM ${kind} (inline or file path)`,
    defaultText: '',
    meaning: spec.meaning,
    secret: spec.secret,
    read: (ctx) => readPem(name, kind, ctx),
  });
}

/** A PEM that must be given when its group is on. */
export function requiredPem(name: string, kind: PemKind, spec: PemSpec): Variable<string> {
  return new Variable({
    name,
    form: `PEM ${kind} (inline or file path)`,
    defaultText: REQUIRED,
    meaning: spec.meaning,
    secret: spec.secret,
    read: (ctx, requiredWhen) => readPem(name, kind, ctx) ?? required(name, requiredWhen),
  });
}
