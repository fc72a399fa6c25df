/** Opens the database, migrates it, checks and loads the policy, and assembles the services. */
import type { Logger } from 'pino';
import { prepareAuditStream } from './audit/stream.ts';
import { DecisionLog } from './authz/decision-log.ts';
import { AuthzEngine } from './authz/engine.ts';
import { PolicyLoadError } from './authz/bundle.ts';
import { loadPolicySource, type LoadedPolicySource } from './authz/policy-source.ts';
import { ConfigError, type Config } from './config.ts';
import { keyDerivations } from './crypto/password.ts';
import { SecretBox } from './crypto/secretbox.ts';
import { waitForDatabase } from './db/connect.ts';
import { createDb } from './db/knex.ts';
import { migrateToLatest } from './db/migrate.ts';
import { AddressPolicy } from './outbound/address-policy.ts';
import { OutboundClient } from './outbound/client.ts';
import { createOutboundClient } from './outbound/index.ts';
import { Metrics } from './metrics/metrics.ts';
import { LdapDirectory } from './identity/providers/ldap/directory.ts';
import { LoginProviderRegistry } from './identity/providers/registry.ts';
import { checkSecrets } from './settings/secret-check.ts';
import { createServices, systemClock, type Clock, type Services } from './services.ts';

export async function startServices(config: Config, logger: Logger, clock: Clock = systemClock): Promise<Services> {
  keyDerivations.configure(config.passwordHashing);
  // A bad LDAP file, a missing policy or an unwritable decision log is the operator's to fix before anything opens (a ConfigError: exit 2).
  const ldap = config.ldap.enabled ? LdapDirectory.load(config.ldap.configFile, logger) : null;
  const policy = await loadPolicy(config);
  const metrics = new Metrics();
  const decisionLog =
    config.decisionLog &&
    DecisionLog.open(
      config.decisionLog,
      { opaVersion: policy.provenance.opaVersion, sourceHash: policy.provenance.revision },
      {
        // The collector is the operator's choice, not an org admin's: the connectors' address policy does not apply.
        client: new OutboundClient(new AddressPolicy(['0.0.0.0/0', '::/0'], []), config.outbound),
        observer: { delivered: (entries) => metrics.decisionLogDelivered(entries), dropped: (entries) => metrics.decisionLogDrop(entries) },
        onFailure: (err) => logger.warn({ err }, 'decision log delivery failed; the batch is sent again after a backoff'),
      },
    );
  const db = createDb(config);
  try {
    prepareAuditStream(config, db);
    await waitForDatabase(db, config.dbConnectTimeoutMs, logger);
    await migrateToLatest(db, logger);
    await checkSecrets(db, config, clock.now());
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const engine = new AuthzEngine(
    db,
    policy.module,
    {
      legacyAclEnabled: config.legacyAclEnabled,
      maxLoadedOrgs: config.authzMaxLoadedOrgs,
      verifyDocuments: config.authzVerifyDocuments,
      provenance: policy.provenance,
    },
    logger,
    metrics,
    decisionLog,
  );
  engine.startChangePoll(config.authzRevisionPollMs);
  metrics.watchPolicyEngine(() => engine.stats());
  metrics.watchPolicy(() => engine.provenance);
  metrics.watchDatabasePool(db);
  return createServices({
    config,
    db,
    engine,
    clock,
    logger,
    metrics,
    secretBox: new SecretBox(config.secretKey),
    outbound: createOutboundClient(config),
    ldap,
    loginProviders: new LoginProviderRegistry(config),
  });
}

/**
 * The compiled policy, or the signed bundle verified; a missing or broken file, or a bundle
 * refused (unsigned, another key, a file altered, added or removed), is the operator's to fix (a
 * ConfigError: exit 2), checked before the database opens.
 */
async function loadPolicy(config: Config): Promise<LoadedPolicySource> {
  try {
    return await loadPolicySource(config);
  } catch (err) {
    if (err instanceof PolicyLoadError) throw new ConfigError(config.policyBundle ? `policy bundle refused: ${err.message}` : err.message);
    throw err;
  }
}
