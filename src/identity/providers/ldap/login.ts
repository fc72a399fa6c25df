/**
 * The LDAP half of POST /api/login: the directory checks the password, then the entry is synced
 * into its user (sync.ts) in one transaction. The login route issues the session as for a local
 * login; every refusal here reaches the caller as the same 401 as a wrong local password.
 */
import type { Actor } from '../../../audit/writer.ts';
import type { Services } from '../../../services.ts';
import type { UserRow } from '../../users.store.ts';
import { syncDirectoryUser } from './sync.ts';

export type LdapLoginOutcome = { user: UserRow } | { refused: string; userId: string | null };

export async function signInWithLdap(services: Services, actor: Actor, login: string, password: string): Promise<LdapLoginOutcome> {
  const directory = services.ldap;
  if (!directory) return { refused: 'LDAP is not enabled', userId: null };
  const checked = await directory.authenticate(login, password);
  if (!checked.ok) return { refused: `ldap: ${checked.reason}`, userId: null };
  const now = services.clock.now();
  return services.transact((tx) => syncDirectoryUser(tx, { config: services.config, logger: services.logger, actor, now, selfService: true }, checked.match));
}
