/**
 * The configured LDAP servers, tried in order, and what a directory entry maps to. The settings
 * are read at startup and again on POST /api/admin/ldap/reload (a bad file keeps the old ones).
 * The first server that answers and knows the login decides: the servers are meant as replicas
 * or as directories of different people, so a login found on one is not looked for on the next.
 */
import type { Logger } from 'pino';
import type { OrgRole } from '../../../authz/types.ts';
import { checkServer, findDirectoryUser, LdapServerUnavailable, passwordBinds, serverLabel, type DirectoryEntry } from './client.ts';
import { loadLdapSettings, type LdapGroupMapping, type LdapServerSettings, type LdapSettings } from './config.ts';

export interface DirectoryMatch {
  server: LdapServerSettings;
  entry: DirectoryEntry;
}

/** What the group mappings give an entry: org roles, the server-admin flag (null: not managed), and the mappings it matched. */
export interface MappedAccess {
  orgRoles: Map<string, OrgRole>;
  svcAdmin: boolean | null;
  matched: LdapGroupMapping[];
}

const ROLE_RANK: Record<OrgRole, number> = { None: 0, Viewer: 1, Editor: 2, Admin: 3 };

/**
 * DNs compare without case and without blanks around `,` and `=`. Each part between separators is
 * trimmed rather than the blanks matched by `\s*([,=])\s*`, which retries every blank of a run
 * from each one before it: a directory value of 40,000 blanks took it 4.8 s.
 */
export const normalizeDn = (dn: string) =>
  dn
    .toLowerCase()
    .split(/([,=])/)
    .map((part) => part.trim())
    .join('');

/**
 * Each org gets the highest role of the mappings the entry matches. The server-admin flag is
 * managed when some mapping of the server states svc_admin: then it is whether a matched one says
 * true, so leaving the admin group takes the flag away.
 */
export function mapAccess(server: LdapServerSettings, entry: DirectoryEntry): MappedAccess {
  const groups = new Set(entry.groups.map(normalizeDn));
  const matching = server.groupMappings.filter((mapping) => mapping.groupDn === '*' || groups.has(normalizeDn(mapping.groupDn)));
  const orgRoles = new Map<string, OrgRole>();
  for (const { orgId, orgRole } of matching) {
    const held = orgRoles.get(orgId);
    if (!held || ROLE_RANK[orgRole] > ROLE_RANK[held]) orgRoles.set(orgId, orgRole);
  }
  const managesAdmin = server.groupMappings.some((mapping) => mapping.svcAdmin !== null);
  return { orgRoles, svcAdmin: managesAdmin ? matching.some((mapping) => mapping.svcAdmin === true) : null, matched: matching };
}

/** Whether the entry may sign in: it matches a mapping, or its server lets unmapped users in. */
export const isAllowed = (match: DirectoryMatch) => match.server.allowUnmappedUsers || mapAccess(match.server, match.entry).matched.length > 0;

export type Authentication = { ok: true; match: DirectoryMatch } | { ok: false; reason: string };

export class LdapDirectory {
  private constructor(
    private settings: LdapSettings,
    private readonly logger: Logger,
  ) {}

  static load(file: string, logger: Logger): LdapDirectory {
    return new LdapDirectory(loadLdapSettings(file), logger);
  }

  /** Re-reads the file; throws ConfigError (and keeps the current settings) when it is bad. */
  reload(): void {
    this.settings = loadLdapSettings(this.settings.file);
  }

  get file(): string {
    return this.settings.file;
  }

  /** The entry of `login` on the first server that answers and knows it; null when none does. */
  async find(login: string): Promise<DirectoryMatch | null> {
    let unavailable = 0;
    for (const server of this.settings.servers) {
      try {
        const entry = await findDirectoryUser(server, login);
        if (entry) return { server, entry };
      } catch (err) {
        if (!(err instanceof LdapServerUnavailable)) throw err;
        unavailable += 1;
        this.logger.warn({ server: serverLabel(server), err: err.message }, 'LDAP server unavailable, trying the next');
      }
    }
    if (unavailable === this.settings.servers.length) throw new LdapServerUnavailable('no LDAP server could be reached');
    return null;
  }

  /** Checks login and password against the directory. Empty passwords never reach a server. */
  async authenticate(login: string, password: string): Promise<Authentication> {
    if (password === '') return { ok: false, reason: 'empty password' };
    let match: DirectoryMatch | null;
    try {
      match = await this.find(login);
      if (!match) return { ok: false, reason: 'unknown user' };
      if (!(await passwordBinds(match.server, match.entry.dn, password))) return { ok: false, reason: 'wrong password' };
    } catch (err) {
      if (!(err instanceof LdapServerUnavailable)) throw err;
      this.logger.warn({ err: err.message }, 'LDAP login failed: directory unavailable');
      return { ok: false, reason: 'directory unavailable' };
    }
    if (!isAllowed(match)) return { ok: false, reason: 'in no mapped group' };
    return { ok: true, match };
  }

  /** Per server, in order: whether it answers and takes the service bind. Never the bind password. */
  async status() {
    return Promise.all(
      this.settings.servers.map(async (server) => ({ host: server.host, port: server.port, url: serverLabel(server), ...(await checkServer(server)) })),
    );
  }
}
