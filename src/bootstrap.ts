/**
 * What runs at boot after the migrations: the default org with its roles, the global roles,
 * the optional session wipe, and the headless first administrator (SEED_ADMIN_*).
 */
import { ROLE_CREATION_LOCK } from './accesscontrol/roles.ts';
import { seedGlobalRoles, seedOrgRoles } from './accesscontrol/seed.ts';
import { recordAudit, SYSTEM_ACTOR } from './audit/writer.ts';
import { MIN_PASSWORD_LENGTH } from './crypto/password.ts';
import { createFirstAdmin, SETUP_LOCK_KEY } from './identity/setup.ts';
import { deleteAllSessions } from './identity/sessions.store.ts';
import { anyHumanUserExists } from './identity/users.store.ts';
import { DEFAULT_ORG_ID, DEFAULT_ORG_NAME, findOrgById, insertOrg } from './orgs/store.ts';
import type { Services } from './services.ts';
import { ensureLockRow } from './settings/store.ts';

export async function bootstrap(services: Services): Promise<void> {
  const now = services.clock.now();
  await ensureLockRow(services.db, SETUP_LOCK_KEY, now);
  await ensureLockRow(services.db, ROLE_CREATION_LOCK, now);
  await services.transact(async (tx) => {
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
