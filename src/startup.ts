/** Opens the database, migrates it, checks and loads the policy, and assembles the services. */
import type { Logger } from 'pino';
import { prepareAuditStream } from './audit/stream.ts';
import { DecisionLog, readPolicyBuildInfo } from './authz/decision-log.ts';
import { AuthzEngine } from './authz/engine.ts';
import { PolicyModule } from './authz/wasm.ts';
import { ConfigError, type Config } from './config.ts';
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
  // A bad LDAP file, a missing policy or an unwritable decision log is the operator's to fix before anything opens (a ConfigError: exit 2).
  const ldap = config.ldap.enabled ? LdapDirectory.load(config.ldap.configFile, logger) : null;
  const policy = await loadPolicy(config.policyWasmPath);
  const decisionLog = config.decisionLog && DecisionLog.open(config.decisionLog, readPolicyBuildInfo(config.policyWasmPath));
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
  const metrics = new Metrics();
  const engine = new AuthzEngine(
    db,
    policy,
    { legacyAclEnabled: config.legacyAclEnabled, maxLoadedOrgs: config.authzMaxLoadedOrgs, verifyDocuments: config.authzVerifyDocuments },
    logger,
    metrics,
    decisionLog,
  );
  engine.startChangePoll(config.authzRevisionPollMs);
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

/** The compiled policy; a missing or broken file is the operator's to fix (a ConfigError: exit 2), checked before the database opens. */
async function loadPolicy(file: string): Promise<PolicyModule> {
  try {
    return await PolicyModule.fromFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code)
      throw new ConfigError(`POLICY_WASM_PATH ${file} cannot be read (${code}): run npm run policy:build, or point POLICY_WASM_PATH at a built authz.wasm`);
    if (err instanceof WebAssembly.CompileError) throw new ConfigError(`POLICY_WASM_PATH ${file} is not a compiled policy (${err.message})`);
    throw err;
  }
}
