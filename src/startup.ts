/** Opens the database, migrates it, checks and loads the policy, and assembles the services. */
import type { Logger } from 'pino';
import { DecisionLog, readPolicyBuildInfo } from './authz/decision-log.ts';
import { AuthzEngine } from './authz/engine.ts';
import { PolicyModule } from './authz/wasm.ts';
import type { Config } from './config.ts';
import { keyDerivations } from './crypto/password.ts';
import { SecretBox } from './crypto/secretbox.ts';
import { waitForDatabase } from './db/connect.ts';
import { createDb } from './db/knex.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createOutboundClient } from './outbound/index.ts';
import { Metrics } from './metrics/metrics.ts';
import { LdapDirectory } from './identity/providers/ldap/directory.ts';
import { LoginProviderRegistry } from './identity/providers/registry.ts';
import { checkSecrets } from './settings/secret-check.ts';
import { createServices, systemClock, type Clock, type Services } from './services.ts';

export async function startServices(config: Config, logger: Logger, clock: Clock = systemClock): Promise<Services> {
  keyDerivations.configure(config.passwordHashing);
  // A bad LDAP file or an unwritable decision log is the operator's to fix before anything opens (a ConfigError: exit 2).
  const ldap = config.ldap.enabled ? LdapDirectory.load(config.ldap.configFile, logger) : null;
  const decisionLog = config.decisionLog && DecisionLog.open(config.decisionLog, readPolicyBuildInfo(config.policyWasmPath));
  const db = createDb(config);
  try {
    await waitForDatabase(db, config.dbConnectTimeoutMs, logger);
    await migrateToLatest(db, logger);
    await checkSecrets(db, config, clock.now());
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const policy = await PolicyModule.fromFile(config.policyWasmPath);
  const metrics = new Metrics();
  const engine = new AuthzEngine(
    db,
    policy,
    { legacyAclEnabled: config.legacyAclEnabled, maxLoadedOrgs: config.authzMaxLoadedOrgs, verifyDocuments: config.authzVerifyDocuments },
    logger,
    metrics,
    decisionLog,
  );
  engine.startRevisionPoll(config.authzRevisionPollMs);
  metrics.watchPolicyEngine(() => engine.stats());
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
