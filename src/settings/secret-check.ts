/**
 * Instances on one database must share their secrets: a session cookie signed by one is checked
 * by another, and what one sealed another opens. The first boot stores a check value of each
 * secret (an HMAC keyed by the secret, never the secret itself); a later boot whose secret gives
 * another value refuses to start instead of half-working.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { ConfigError, type Config } from '../config.ts';
import { insertSettingIfAbsent, readSetting, writeSetting } from './store.ts';

export const CHECKED_SECRETS = { JWT_SECRET: 'jwtSecret', SECRET_KEY: 'secretKey' } as const;
export type CheckedSecret = keyof typeof CHECKED_SECRETS;

export const secretCheckKey = (name: CheckedSecret) => `secret_check:${name}`;

export function secretCheckValue(name: CheckedSecret, secret: string): string {
  return createHmac('sha256', secret).update(`gatehouse:secret-check:${name}`).digest('hex');
}

/**
 * Records the check values at first boot and compares them afterwards; a secret named in
 * ROTATE_SECRETS has its new check value recorded instead (a deliberate rotation).
 */
export async function checkSecrets(db: Knex, config: Pick<Config, 'jwtSecret' | 'secretKey' | 'rotateSecrets'>, now: number): Promise<void> {
  for (const [name, field] of Object.entries(CHECKED_SECRETS) as Array<[CheckedSecret, (typeof CHECKED_SECRETS)[CheckedSecret]]>) {
    const mine = secretCheckValue(name, config[field]);
    if (config.rotateSecrets.includes(name)) {
      await writeSetting(db, secretCheckKey(name), mine, now);
      continue;
    }
    await insertSettingIfAbsent(db, secretCheckKey(name), mine, now);
    const recorded = await readSetting<string>(db, secretCheckKey(name));
    if (recorded === null || recorded.length !== mine.length || !timingSafeEqual(Buffer.from(recorded), Buffer.from(mine))) {
      throw new ConfigError(
        `${name} differs from the one this database was first used with: give every instance on one database the same ${name} ` +
          `(a generated one is not shared), or set ROTATE_SECRETS=${name} on every instance to adopt a new one`,
      );
    }
  }
}
