/**
 * What runs at boot after the migrations: the default org with its roles, the global roles,
 * the optional session wipe, and the headless first administrator (SEED_ADMIN_*).
 *
 * Several instances may boot at once on one empty database: the seeding of the org and the roles
 * takes the bootstrap lock, so the first one seeds and the others, waiting their turn, find it
 * done; the first admin has the setup lock of its own.
 */
import { ROLE_CREATION_LOCK } from './accesscontrol/roles.ts';
import { seedGlobalRoles, seedOrgRoles } from './accesscontrol/seed.ts';
import { recordAudit, SYSTEM_ACTOR } from './audit/writer.ts';
import { MIN_PASSWORD_LENGTH } from './crypto/password.ts';
import { createFirstAdmin, SETUP_LOCK_KEY } from './identity/setup.ts';
import { deleteAllSessions } from './identity/sessions.store.ts';
import { anyHumanUserExists } from './identity/users.store.ts';
import { DEFAULT_ORG_ID, DEFAULT_ORG_NAME, findOrgById, insertOrg } from './orgs/store.ts';
import { withoutQueryTimeout } from './db/query-timeout.ts';
import type { Services } from './services.ts';
import { ensureLockRow, lockSetting } from './settings/store.ts';

const BOOTSTRAP_LOCK = 'bootstrap.lock';

/** Boot's seeding; its queries are not bounded by DB_QUERY_TIMEOUT_MS (an instance may wait for another's seeding). */
export function bootstrap(services: Services): Promise<void> {
  return withoutQueryTimeout(() => seed(services));
}

async function seed(services: Services): Promise<void> {
  const now = services.clock.now();
  for (const lock of [BOOTSTRAP_LOCK, SETUP_LOCK_KEY, ROLE_CREATION_LOCK]) await ensureLockRow(services.db, lock, now);
  await services.transact(async (tx) => {
    await lockSetting(tx.db, BOOTSTRAP_LOCK);
    if (!(await findOrgById(tx.db, DEFAULT_ORG_ID))) {
      await insertOrg(tx.db, { id: DEFAULT_ORG_ID, name: DEFAULT_ORG_NAME }, now);
      await recordAudit(
        tx.db,
        SYSTEM_ACTOR,
        { action: 'org.created', orgId: DEFAULT_ORG_ID, target: { type: 'org', id: DEFAULT_ORG_ID, name: DEFAULT_ORG_NAME } },
        now,
      );
    }
    const global = await seedGlobalRoles(tx, now);
    const org = await seedOrgRoles(tx, DEFAULT_ORG_ID, now);
    if (global.created + global.updated + org.created + org.updated > 0) {
      await recordAudit(tx.db, SYSTEM_ACTOR, { action: 'role.seeded', orgId: DEFAULT_ORG_ID, metadata: { global, org } }, now);
    }
  });

  if (services.config.session.invalidateAllOnBoot) {
    const wiped = await services.transact(async (tx) => {
      const count = await deleteAllSessions(tx.db);
      await recordAudit(tx.db, SYSTEM_ACTOR, { action: 'session.revoked_all', metadata: { reason: 'INVALIDATE_ALL_SESSIONS_ON_BOOT', count } }, now);
      return count;
    });
    services.logger.info({ wiped }, 'invalidated all sessions at boot');
  }

  await seedAdminFromEnvironment(services);
}

async function seedAdminFromEnvironment(services: Services): Promise<void> {
  const seed = services.config.seedAdmin;
  if (!seed) return;
  if (seed.password.length < MIN_PASSWORD_LENGTH) {
    services.logger.warn(`SEED_ADMIN_PASSWORD is shorter than ${MIN_PASSWORD_LENGTH} characters; no admin was seeded`);
    return;
  }
  if (await anyHumanUserExists(services.db)) return;
  const created = await createFirstAdmin(services, { login: seed.login, email: seed.email, name: seed.name, password: seed.password }, SYSTEM_ACTOR);
  if (created) services.logger.info({ userId: created.userId }, 'seeded the first administrator from SEED_ADMIN_*');
}
