/** Opens the database, migrates it, checks and loads the policy, and assembles the services. */
import type { Logger } from 'pino';
import { AuthzEngine } from './authz/engine.ts';
import { PolicyModule } from './authz/wasm.ts';
import type { Config } from './config.ts';
import { keyDerivations } from './crypto/password.ts';
import { SecretBox } from './crypto/secretbox.ts';
import { waitForDatabase } from './db/connect.ts';
import { createDb } from './db/knex.ts';
import { migrateToLatest } from './db/migrate.ts';
import { LoginProviderRegistry } from './identity/providers/registry.ts';
import { checkSecrets } from './settings/secret-check.ts';
import { createServices, systemClock, type Clock, type Services } from './services.ts';

export async function startServices(config: Config, logger: Logger, clock: Clock = systemClock): Promise<Services> {
  keyDerivations.configure(config.passwordHashing);
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
  const engine = new AuthzEngine(
    db,
    policy,
    { legacyAclEnabled: config.legacyAclEnabled, maxLoadedOrgs: config.authzMaxLoadedOrgs, verifyDocuments: config.authzVerifyDocuments },
    logger,
  );
  engine.startRevisionPoll(config.authzRevisionPollMs);
  return createServices({ config, db, engine, clock, logger, secretBox: new SecretBox(config.secretKey), loginProviders: new LoginProviderRegistry(config) });
}
