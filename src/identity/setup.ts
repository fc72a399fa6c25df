/**
 * The first administrator: created once, by the setup wizard or by SEED_ADMIN_* at boot, as a
 * server admin who is Admin of org_main. The check "no user exists" and the insert run under
 * the setup row lock, so of any number of racing requests exactly one wins.
 */
import type { Actor } from '../audit/writer.ts';
import { recordAudit } from '../audit/writer.ts';
import { hashPassword } from '../crypto/password.ts';
import type { Tx } from '../db/transaction.ts';
import { DEFAULT_ORG_ID } from '../orgs/store.ts';
import type { Services } from '../services.ts';
import { lockSetting } from '../settings/store.ts';
import { addOrgMember, anyHumanUserExists, insertUser } from './users.store.ts';

export const SETUP_LOCK_KEY = 'setup.lock';

export interface FirstAdmin {
  login: string;
  email: string;
  name: string;
  password: string;
}

/**
 * Creates the first admin, or returns null when a user already exists. `alsoInTx` runs in the
 * same transaction (the wizard issues its session there).
 */
export async function createFirstAdmin<T>(
  services: Services,
  admin: FirstAdmin,
  actor: Actor,
  alsoInTx?: (tx: Tx, userId: string) => Promise<T>,
): Promise<{ userId: string; orgId: string; extra: T | undefined } | null> {
  const passwordHash = await hashPassword(admin.password);
  const now = services.clock.now();
  return services.transact(async (tx) => {
    await lockSetting(tx.db, SETUP_LOCK_KEY);
    if (await anyHumanUserExists(tx.db)) return null;
    const userId = await insertUser(
      tx.db,
      { login: admin.login, email: admin.email, name: admin.name, passwordHash, isSvcAdmin: true, defaultOrgId: DEFAULT_ORG_ID },
      now,
    );
    await addOrgMember(tx, DEFAULT_ORG_ID, userId, 'Admin', now);
    const target = { type: 'user', id: userId, name: admin.login.toLowerCase() };
    await recordAudit(
      tx.db,
      actor,
      { action: 'user.created', orgId: DEFAULT_ORG_ID, target, metadata: { isSvcAdmin: true, orgRole: 'Admin', via: 'setup' } },
      now,
    );
    await recordAudit(tx.db, actor, { action: 'setup.admin_created', orgId: DEFAULT_ORG_ID, target }, now);
    const extra = alsoInTx ? await alsoInTx(tx, userId) : undefined;
    return { userId, orgId: DEFAULT_ORG_ID, extra };
  });
}
