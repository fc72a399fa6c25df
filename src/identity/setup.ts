/**
 * The first administrator: created once, by the setup wizard or by SEED_ADMIN_* at boot, as a
 * server admin who is Admin of org_main. The check "no user exists" and the insert run under
 * the setup row lock, so of any number of racing requests exactly one wins. The wizard's other
 * changes, open to anyone until then, re-check it under the same lock.
 */
import type { Knex } from 'knex';
import type { Actor } from '../audit/writer.ts';
import { recordAudit, recordFailure } from '../audit/writer.ts';
import { hashPassword } from '../crypto/password.ts';
import type { Tx } from '../db/transaction.ts';
import { ConflictError } from '../errors.ts';
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

/** Creates the first admin, or returns null when a user already exists. */
export async function createFirstAdmin(services: Services, admin: FirstAdmin, actor: Actor): Promise<{ userId: string; orgId: string } | null> {
  const passwordHash = await hashPassword(admin.password);
  const now = services.clock.now();
  const userId = await services.transact((tx) => insertFirstAdmin(tx, { ...admin, passwordHash }, actor, now));
  return userId ? { userId, orgId: DEFAULT_ORG_ID } : null;
}

/**
 * Creates the first admin in `tx` (the setup wizard signs it in there) and returns its id, or
 * null when a user already exists.
 */
export async function insertFirstAdmin(
  tx: Tx,
  admin: Omit<FirstAdmin, 'password'> & { passwordHash: string },
  actor: Actor,
  now: number,
): Promise<string | null> {
  await lockSetting(tx.db, SETUP_LOCK_KEY);
  if (await anyHumanUserExists(tx.db)) return null;
  const userId = await insertServerAdmin(tx, admin, actor, 'setup', now);
  const target = { type: 'user', id: userId, name: admin.login.toLowerCase() };
  await recordAudit(tx.db, actor, { action: 'setup.admin_created', orgId: DEFAULT_ORG_ID, target }, now);
  return userId;
}

/**
 * A server admin who is Admin of org_main, audited as created `via` the setup or the admin CLI.
 * The login and email must be free (the caller checks, or the unique index refuses a race).
 */
export async function insertServerAdmin(
  tx: Tx,
  admin: Omit<FirstAdmin, 'password' | 'email'> & { email: string | null; passwordHash: string },
  actor: Actor,
  via: 'setup' | 'cli',
  now: number,
): Promise<string> {
  const userId = await insertUser(
    tx.db,
    { login: admin.login, email: admin.email, name: admin.name, passwordHash: admin.passwordHash, isSvcAdmin: true, defaultOrgId: DEFAULT_ORG_ID },
    now,
  );
  await addOrgMember(tx, DEFAULT_ORG_ID, userId, 'Admin', now);
  const target = { type: 'user', id: userId, name: admin.login.toLowerCase() };
  await recordAudit(tx.db, actor, { action: 'user.created', orgId: DEFAULT_ORG_ID, target, metadata: { isSvcAdmin: true, orgRole: 'Admin', via } }, now);
  return userId;
}

/** The policy's input.setup: the wizard is open to anyone while no user exists. */
export async function setupFacts(db: Knex): Promise<{ open: boolean }> {
  return { open: !(await anyHumanUserExists(db)) };
}

/**
 * Writes a setup change the policy allowed on `setup`. A change allowed because setup was open
 * is re-checked in the transaction that writes, under the setup lock the first admin's creation
 * takes: it lands before that creation or not at all (409, audited as `action` failed), never
 * after it. A change allowed to a server admin depends on no such fact.
 */
export async function writeSetupChange(
  services: Services,
  actor: Actor,
  setup: { open: boolean },
  action: string,
  write: (tx: Tx) => Promise<void>,
): Promise<void> {
  const written = await services.transact(async (tx) => {
    if (setup.open) {
      await lockSetting(tx.db, SETUP_LOCK_KEY);
      if (await anyHumanUserExists(tx.db)) return false;
    }
    await write(tx);
    return true;
  });
  if (!written) {
    await recordFailure(services, actor, { action, metadata: { reason: 'the first admin was created meanwhile' } });
    throw new ConflictError('setup is done: the first admin was created meanwhile; sign in as a server admin to change it');
  }
}
