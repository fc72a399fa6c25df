/** The shared services every route module and job receives; built once in app.ts. */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { POLICY_TABLES } from './authz/document.ts';
import type { AuthzEngine } from './authz/engine.ts';
import type { Config } from './config.ts';
import type { SecretBox } from './crypto/secretbox.ts';
import type { ReadCache } from './db/read-cache.ts';
import { transact, type PolicyChangeListener, type Tx } from './db/transaction.ts';
import { WriteWatches } from './db/write-watch.ts';
import { createIdentityCaches, type IdentityCaches } from './identity/caches.ts';
import { createTeamListCache } from './teams/list-cache.ts';
import type { ListedTeam } from './teams/store.ts';
import type { OutboundClient } from './outbound/client.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { LdapDirectory } from './identity/providers/ldap/directory.ts';
import type { LoginProviderRegistry } from './identity/providers/registry.ts';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Services {
  config: Config;
  db: Knex;
  engine: AuthzEngine;
  clock: Clock;
  logger: Logger;
  secretBox: SecretBox;
  /** Every request the service makes to a backend goes through it. */
  outbound: OutboundClient;
  metrics: Metrics;
  /** The LDAP servers when SVC_AUTH_LDAP_ENABLED=true, else null. */
  ldap: LdapDirectory | null;
  /** The configured external login providers (OAuth 2.0). */
  loginProviders: LoginProviderRegistry;
  /** What authenticated requests read about their caller, per instance (src/identity/caches.ts). */
  caches: IdentityCaches;
  /** Each org's team list without a search, per instance (src/teams/list-cache.ts). */
  teamLists: ReadCache<ListedTeam[]>;
  /** Runs `work` in one transaction; policy changes it marks reach the engine after commit. */
  transact<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

export function createServices(parts: Omit<Services, 'transact' | 'caches' | 'teamLists'>): Services {
  const writes = new WriteWatches(parts.db);
  const { engine } = parts;
  // Test mode (AUTHZ_VERIFY_DOCUMENTS) checks the loaded documents after a commit, and only after
  // one that wrote a table they are read from; otherwise the engine listens itself and no write is
  // watched for it.
  const policyWrites = parts.config.authzVerifyDocuments ? writes.watch(Object.fromEntries(POLICY_TABLES.map((table) => [table, []]))) : null;
  const listenerOfTransaction = (): PolicyChangeListener => {
    if (!policyWrites) return engine;
    const writesBefore = policyWrites.writesSent;
    return {
      policyDataChanged: (changes, revisions) => engine.policyDataChanged(changes, revisions),
      verifyAfterCommit: () => (policyWrites.writesSent === writesBefore ? Promise.resolve() : engine.verifyAfterCommit()),
    };
  };
  return {
    ...parts,
    caches: createIdentityCaches(writes, parts.config.principalCacheTtlMs),
    teamLists: createTeamListCache(writes, parts.config.principalCacheTtlMs),
    async transact(work) {
      const ended = writes.transactionBegins();
      const listener = listenerOfTransaction();
      try {
        return await transact(parts.db, listener, work);
      } finally {
        // after the commit (or rollback): a load that read the rows before it is not kept
        ended();
      }
    },
  };
}
