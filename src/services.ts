/** The shared services every route module and job receives; built once in app.ts. */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AuthzEngine } from './authz/engine.ts';
import type { Config } from './config.ts';
import type { SecretBox } from './crypto/secretbox.ts';
import { transact, type Tx } from './db/transaction.ts';
import { WriteWatch } from './db/write-watch.ts';
import { CREDENTIAL_TABLES, CredentialCache } from './identity/credential-cache.ts';
import type { ApiTokenRow } from './identity/api-tokens.store.ts';
import type { SessionRow } from './identity/sessions.store.ts';
import type { UserRow } from './identity/users.store.ts';
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
  /** The rows behind sessions and API tokens, per instance (src/identity/credential-cache.ts). */
  credentials: {
    sessions: CredentialCache<{ session: SessionRow; user: UserRow }>;
    tokens: CredentialCache<{ token: ApiTokenRow; owner: UserRow }>;
  };
  /** Runs `work` in one transaction; policy changes it marks reach the engine after commit. */
  transact<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

export function createServices(parts: Omit<Services, 'transact' | 'credentials'>): Services {
  const watch = new WriteWatch(parts.db, CREDENTIAL_TABLES);
  const ttlMs = parts.config.principalCacheTtlMs;
  return {
    ...parts,
    credentials: { sessions: new CredentialCache(watch, ttlMs), tokens: new CredentialCache(watch, ttlMs) },
    async transact(work) {
      const writesBefore = watch.writesSent;
      try {
        return await transact(parts.db, parts.engine, work);
      } finally {
        // after the commit (or rollback): a load that read the rows before it is not kept
        watch.transactionEnded(writesBefore);
      }
    },
  };
}
