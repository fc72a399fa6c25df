/**
 * Local passwords: scrypt (N=16384, r=8, p=1, dkLen=64) stored as `<salt_hex>:<hash_hex>`.
 * node's async scrypt runs on the libuv thread pool, off the event loop.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export const MIN_PASSWORD_LENGTH = 12;
const KEY_LENGTH = 64;
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** How many scrypt derivations this process has run: what a login costs, counted, not timed (the login test reads it). */
let derivations = 0;
export const keyDerivationCount = (): number => derivations;

function derive(password: string, salt: Buffer): Promise<Buffer> {
  derivations += 1;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, PARAMS, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt);
  return `${salt.toString('hex')}:${key.toString('hex')}`;
}

/** A hash to compare against when the user is unknown, so both paths cost one scrypt. */
let decoyHash: Promise<string> | null = null;
function getDecoyHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return decoyHash;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const usable = stored && /^[0-9a-f]+:[0-9a-f]{128}$/.test(stored);
  const [saltHex, keyHex] = (usable ? stored : await getDecoyHash()).split(':') as [string, string];
  const key = await derive(password, Buffer.from(saltHex, 'hex'));
  return timingSafeEqual(key, Buffer.from(keyHex, 'hex')) && !!usable;
}
