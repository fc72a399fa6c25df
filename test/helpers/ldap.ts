/**
 * LDAP test fixtures: a seeded slapd (people and groups) and the ldap.toml that points at it.
 * Without slapd the LDAP tests are skipped, and fail under CI (test/helpers/peers.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { groupDn, SERVICE_DN, SERVICE_PASSWORD, Slapd, SUFFIX } from './slapd.ts';

export { groupDn, userDn, Slapd, SUFFIX } from './slapd.ts';

export const PEOPLE = {
  alice: { uid: 'alice', password: 'alice in the directory', email: 'alice@example.test', name: 'Alice Admin' },
  bob: { uid: 'bob', password: 'bob in the directory', email: 'bob@example.test', name: 'Bob Staff' },
  carol: { uid: 'carol', password: 'carol in the directory', email: 'carol@example.test', name: 'Carol Nogroup' },
  dave: { uid: 'dave', password: 'dave in the directory', email: 'dave@example.test', name: 'Dave Ops' },
};

export const GROUPS = { admins: groupDn('admins'), staff: groupDn('staff'), editors: groupDn('editors') };

/** Starts slapd seeded with PEOPLE: alice in admins and staff, bob in staff, dave in editors, carol in none. */
export async function startDirectory(): Promise<Slapd> {
  const slapd = await Slapd.start();
  slapd.addUsers(Object.values(PEOPLE));
  slapd.addGroups([
    { cn: 'admins', members: ['alice'] },
    { cn: 'staff', members: ['alice', 'bob'] },
    { cn: 'editors', members: ['dave'] },
  ]);
  return slapd;
}

export interface ServerOptions {
  host?: string;
  port: number;
  useSsl?: boolean;
  startTls?: boolean;
  sslSkipVerify?: boolean;
  rootCaCert?: string;
  /** Default `(uid=%s)`. */
  searchFilter?: string;
  /** Extra TOML lines inside the [[servers]] table. */
  extra?: string[];
  /** [[servers.group_mappings]] tables; default: admins → org_main Admin + svc_admin, staff → org_main Viewer, editors → opsOrg Editor. */
  mappings?: Array<{ groupDn: string; orgId: string; orgRole: string; svcAdmin?: boolean }>;
}

export function defaultMappings(opsOrg: string): NonNullable<ServerOptions['mappings']> {
  return [
    { groupDn: GROUPS.admins, orgId: 'org_main', orgRole: 'Admin', svcAdmin: true },
    { groupDn: GROUPS.staff, orgId: 'org_main', orgRole: 'Viewer' },
    { groupDn: GROUPS.editors, orgId: opsOrg, orgRole: 'Editor' },
  ];
}

const q = (value: string) => JSON.stringify(value);

export function ldapToml(servers: ServerOptions[]): string {
  return servers
    .map((server) =>
      [
        '[[servers]]',
        `host = ${q(server.host ?? '127.0.0.1')}`,
        `port = ${server.port}`,
        `use_ssl = ${server.useSsl ?? false}`,
        `start_tls = ${server.startTls ?? false}`,
        ...(server.sslSkipVerify !== undefined ? [`ssl_skip_verify = ${server.sslSkipVerify}`] : []),
        ...(server.rootCaCert ? [`root_ca_cert = ${q(server.rootCaCert)}`] : []),
        `bind_dn = ${q(SERVICE_DN)}`,
        `bind_password = ${q(SERVICE_PASSWORD)}`,
        `search_base_dns = [${q(`ou=people,${SUFFIX}`)}]`,
        `search_filter = ${q(server.searchFilter ?? '(uid=%s)')}`,
        'timeout_seconds = 5',
        ...(server.extra ?? []),
        '',
        '[servers.attributes]',
        'username = "uid"',
        'email = "mail"',
        'name = "cn"',
        'member_of = "memberOf"',
        ...(server.mappings ?? []).flatMap((mapping) => [
          '',
          '[[servers.group_mappings]]',
          `group_dn = ${q(mapping.groupDn)}`,
          `org_id = ${q(mapping.orgId)}`,
          `org_role = ${q(mapping.orgRole)}`,
          ...(mapping.svcAdmin !== undefined ? [`svc_admin = ${mapping.svcAdmin}`] : []),
        ]),
      ].join('\n'),
    )
    .join('\n\n');
}

/** Writes an ldap.toml into a temp dir; returns its path and the env that enables LDAP with it. */
export function writeLdapConfig(servers: ServerOptions[]): { file: string; env: Record<string, string> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ldap-config-'));
  const file = path.join(dir, 'ldap.toml');
  fs.writeFileSync(file, ldapToml(servers));
  return { file, env: { SVC_AUTH_LDAP_ENABLED: 'true', LDAP_CONFIG_FILE: file } };
}
