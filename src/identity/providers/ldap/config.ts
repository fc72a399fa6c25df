/**
 * The LDAP configuration file (LDAP_CONFIG_FILE, default config/ldap.toml), parsed with smol-toml
 * and checked whole: a typo or a missing key stops startup (and a reload) with the key named,
 * never with the bind password's value.
 */
import fs from 'node:fs';
import { parse } from 'smol-toml';
import { ConfigError } from '../../../config.ts';
import { ORG_ROLES, type OrgRole } from '../../../authz/types.ts';

export interface LdapGroupMapping {
  /** A group's DN, or `*` for every user the server finds. */
  groupDn: string;
  orgId: string;
  orgRole: OrgRole;
  /** Whether members get the server-admin flag; unset says nothing about it. */
  svcAdmin: boolean | null;
}

export interface LdapServerSettings {
  host: string;
  port: number;
  useSsl: boolean;
  startTls: boolean;
  sslSkipVerify: boolean;
  /** PEM of the CAs to trust (root_ca_cert, read at load); null = the system's. */
  rootCaCert: string | null;
  bindDn: string;
  bindPassword: string;
  searchBaseDns: string[];
  /** The user search; `%s` is the login, escaped per RFC 4515. */
  searchFilter: string;
  attributes: { username: string; email: string; name: string; memberOf: string };
  groupMappings: LdapGroupMapping[];
  /** Users in no mapped group sign in too (keeping their memberships); default false: refused. */
  allowUnmappedUsers: boolean;
  timeoutMs: number;
}

export interface LdapSettings {
  file: string;
  servers: LdapServerSettings[];
}

type Table = Record<string, unknown>;

const SERVER_KEYS = [
  'host',
  'port',
  'use_ssl',
  'start_tls',
  'ssl_skip_verify',
  'root_ca_cert',
  'bind_dn',
  'bind_password',
  'search_base_dns',
  'search_filter',
  'attributes',
  'group_mappings',
  'allow_unmapped_users',
  'timeout_seconds',
];
const ATTRIBUTE_KEYS = ['username', 'email', 'name', 'member_of'];
const MAPPING_KEYS = ['group_dn', 'org_id', 'org_role', 'svc_admin'];

const isTable = (value: unknown): value is Table => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** Reads one table's keys with the path of each in the messages (`servers[0].port`). */
class Reader {
  constructor(
    private readonly file: string,
    private readonly table: Table,
    private readonly at: string,
    known: string[],
  ) {
    const unknown = Object.keys(table).filter((key) => !known.includes(key));
    if (unknown.length > 0) this.fail(`unknown key ${this.path(unknown[0]!)} (known: ${known.join(', ')})`);
  }

  fail(message: string): never {
    throw new ConfigError(`LDAP config ${this.file}: ${message}`);
  }

  path(key: string): string {
    return this.at ? `${this.at}.${key}` : key;
  }

  string(key: string, fallback?: string): string {
    const value = this.table[key] ?? fallback;
    if (typeof value !== 'string' || value.trim() === '') this.fail(`${this.path(key)} must be a non-empty string`);
    return value.trim();
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.table[key] ?? fallback;
    if (typeof value !== 'boolean') this.fail(`${this.path(key)} must be true or false`);
    return value;
  }

  optionalBool(key: string): boolean | null {
    return this.table[key] === undefined ? null : this.bool(key, false);
  }

  int(key: string, fallback: number, min: number, max: number): number {
    const value = this.table[key] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      this.fail(`${this.path(key)} must be an integer from ${min} to ${max}`);
    return value;
  }

  strings(key: string): string[] {
    const value = this.table[key];
    if (!Array.isArray(value) || value.length === 0 || value.some((item) => typeof item !== 'string' || item.trim() === '')) {
      this.fail(`${this.path(key)} must be a non-empty array of non-empty strings`);
    }
    return (value as string[]).map((item) => item.trim());
  }

  tables(key: string, required: boolean): Table[] {
    const value = this.table[key];
    if (value === undefined && !required) return [];
    if (!Array.isArray(value) || (required && value.length === 0) || !value.every(isTable))
      this.fail(`${this.path(key)} must be an array of tables ([[${this.path(key)}]])`);
    return value as Table[];
  }

  sub(key: string): Table {
    const value = this.table[key] ?? {};
    if (!isTable(value)) this.fail(`${this.path(key)} must be a table ([${this.path(key)}])`);
    return value;
  }
}

function readCa(reader: Reader, key: string, file: string | null): string | null {
  if (file === null) return null;
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    return reader.fail(`${reader.path(key)}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function readMapping(file: string, table: Table, at: string): LdapGroupMapping {
  const reader: Reader = new Reader(file, table, at, MAPPING_KEYS);
  const rawRole = reader.string('org_role');
  const orgRole = ORG_ROLES.find((role) => role.toLowerCase() === rawRole.toLowerCase());
  if (!orgRole) reader.fail(`${reader.path('org_role')} must be one of ${ORG_ROLES.join(', ')}`);
  return { groupDn: reader.string('group_dn'), orgId: reader.string('org_id'), orgRole, svcAdmin: reader.optionalBool('svc_admin') };
}

function readServer(file: string, table: Table, at: string): LdapServerSettings {
  const reader = new Reader(file, table, at, SERVER_KEYS);
  const useSsl = reader.bool('use_ssl', false);
  const startTls = reader.bool('start_tls', false);
  if (useSsl && startTls) reader.fail(`${at}: use_ssl (ldaps) and start_tls exclude each other`);
  const searchFilter = reader.string('search_filter');
  if (!searchFilter.includes('%s')) reader.fail(`${reader.path('search_filter')} must contain %s (the login)`);
  if (!searchFilter.startsWith('(') || !searchFilter.endsWith(')')) reader.fail(`${reader.path('search_filter')} must be a parenthesised LDAP filter`);
  const attributes = new Reader(file, reader.sub('attributes'), reader.path('attributes'), ATTRIBUTE_KEYS);
  const rootCaFile = table.root_ca_cert === undefined ? null : reader.string('root_ca_cert');
  return {
    host: reader.string('host'),
    port: reader.int('port', useSsl ? 636 : 389, 1, 65535),
    useSsl,
    startTls,
    sslSkipVerify: reader.bool('ssl_skip_verify', false),
    rootCaCert: readCa(reader, 'root_ca_cert', rootCaFile),
    bindDn: reader.string('bind_dn'),
    bindPassword: reader.string('bind_password'),
    searchBaseDns: reader.strings('search_base_dns'),
    searchFilter,
    attributes: {
      username: attributes.string('username', 'uid'),
      email: attributes.string('email', 'mail'),
      name: attributes.string('name', 'cn'),
      memberOf: attributes.string('member_of', 'memberOf'),
    },
    groupMappings: reader.tables('group_mappings', false).map((mapping, index) => readMapping(file, mapping, `${reader.path('group_mappings')}[${index}]`)),
    allowUnmappedUsers: reader.bool('allow_unmapped_users', false),
    timeoutMs: reader.int('timeout_seconds', 10, 1, 300) * 1000,
  };
}

/** Reads and checks the file; throws ConfigError naming what is wrong. */
export function loadLdapSettings(file: string): LdapSettings {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`LDAP config ${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let document: Table;
  try {
    document = parse(text) as Table;
  } catch (err) {
    // smol-toml's message quotes the offending line, which may be the bind password: only its position is kept.
    const { line, column } = err as { line?: number; column?: number };
    throw new ConfigError(`LDAP config ${file}: not valid TOML${line ? ` (line ${line}, column ${column})` : ''}`);
  }
  const reader = new Reader(file, document, '', ['servers']);
  return { file, servers: reader.tables('servers', true).map((server, index) => readServer(file, server, `servers[${index}]`)) };
}
