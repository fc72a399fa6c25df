/**
 * One LDAP server, through ldapts: connect (ldaps, StartTLS or plain; certificates verified unless
 * ssl_skip_verify), bind as the service account, find a user by the search filter, and check a
 * user's password with a bind of its own on a fresh connection.
 */
import net from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client, InvalidCredentialsError } from 'ldapts';
import type { LdapServerSettings } from './config.ts';

/** The server could not be reached, or refused the service bind: the next server is tried. */
export class LdapServerUnavailable extends Error {}

export interface DirectoryEntry {
  dn: string;
  username: string;
  email: string | null;
  name: string | null;
  groups: string[];
}

/** RFC 4515: the characters that mean something in a filter value, and NUL, as `\XX`. */
export function escapeFilterValue(value: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is one of the characters RFC 4515 escapes
  return value.replace(/[\\*()\u0000]/g, (char) => `\\${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export const serverLabel = (server: LdapServerSettings) => `${server.useSsl ? 'ldaps' : 'ldap'}://${server.host}:${server.port}`;

function tlsOptions(server: LdapServerSettings): ConnectionOptions {
  return {
    rejectUnauthorized: !server.sslSkipVerify,
    ...(server.rootCaCert && { ca: [server.rootCaCert] }),
    // SNI takes host names only; an address is still checked against the certificate's IP names
    ...(!net.isIP(server.host) && { servername: server.host }),
  };
}

async function connect(server: LdapServerSettings): Promise<Client> {
  const client = new Client({
    url: serverLabel(server),
    timeout: server.timeoutMs,
    connectTimeout: server.timeoutMs,
    ...(server.useSsl && { tlsOptions: tlsOptions(server) }),
  });
  if (server.startTls) await client.startTLS(tlsOptions(server));
  return client;
}

async function close(client: Client): Promise<void> {
  await client.unbind().catch(() => undefined);
}

/** A connection bound as the service account; any failure is the server's unavailability. */
async function serviceConnection(server: LdapServerSettings): Promise<Client> {
  let client: Client | null = null;
  try {
    client = await connect(server);
    await client.bind(server.bindDn, server.bindPassword);
    return client;
  } catch (err) {
    if (client) await close(client);
    const reason =
      err instanceof InvalidCredentialsError ? 'the service bind (bind_dn, bind_password) was refused' : (err as Error).message || (err as Error).name;
    throw new LdapServerUnavailable(`${serverLabel(server)}: ${reason}`);
  }
}

const values = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((item) => (Buffer.isBuffer(item) ? item.toString('utf8') : String(item)));
const first = (value: unknown): string | null => values(value)[0] ?? null;

/**
 * The entry whose search filter matches `login` under the search bases; null when none does, or
 * when more than one does (an ambiguous login signs nobody in).
 */
export async function findDirectoryUser(server: LdapServerSettings, login: string): Promise<DirectoryEntry | null> {
  const client = await serviceConnection(server);
  try {
    const filter = server.searchFilter.replaceAll('%s', escapeFilterValue(login));
    const { attributes } = server;
    const found = [];
    for (const base of server.searchBaseDns) {
      const { searchEntries } = await client.search(base, {
        scope: 'sub',
        filter,
        sizeLimit: 2,
        attributes: [attributes.username, attributes.email, attributes.name, attributes.memberOf],
      });
      found.push(...searchEntries);
    }
    if (found.length !== 1) return null;
    const [entry] = found as [Record<string, unknown> & { dn: string }];
    const username = first(entry[attributes.username]);
    if (!username) return null;
    return { dn: entry.dn, username, email: first(entry[attributes.email]), name: first(entry[attributes.name]), groups: values(entry[attributes.memberOf]) };
  } catch (err) {
    if (err instanceof LdapServerUnavailable) throw err;
    throw new LdapServerUnavailable(`${serverLabel(server)}: search failed: ${(err as Error).message || (err as Error).name}`);
  } finally {
    await close(client);
  }
}

/** Whether `password` binds as `dn`. Never called with an empty password (an unauthenticated bind would pass). */
export async function passwordBinds(server: LdapServerSettings, dn: string, password: string): Promise<boolean> {
  if (password === '') return false;
  let client: Client | null = null;
  try {
    client = await connect(server);
    await client.bind(dn, password);
    return true;
  } catch (err) {
    if (err instanceof InvalidCredentialsError) return false;
    throw new LdapServerUnavailable(`${serverLabel(server)}: user bind failed: ${(err as Error).message || (err as Error).name}`);
  } finally {
    if (client) await close(client);
  }
}

/** For the status endpoint: can the server be reached, and does the service bind work. */
export async function checkServer(server: LdapServerSettings): Promise<{ available: boolean; error: string | null }> {
  try {
    await close(await serviceConnection(server));
    return { available: true, error: null };
  } catch (err) {
    return { available: false, error: (err as Error).message };
  }
}
