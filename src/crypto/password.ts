/**
 * Local passwords: scrypt (N=16384, r=8, p=1, dkLen=64) stored as `<salt_hex>:<hash_hex>`.
 * node's async scrypt runs on the libuv thread pool, off the event loop.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ServiceUnavailableError } from '../errors.ts';

export const MIN_PASSWORD_LENGTH = 12;
const KEY_LENGTH = 64;
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** How many scrypt derivations this process has run: what a login costs, counted, not timed (the login test reads it). */
let derivations = 0;
export const keyDerivationCount = (): number => derivations;

/**
 * scrypt is CPU-bound, and off the event loop is not off the machine: on two cores a burst of
 * logins takes the core the event loop needs to serve everyone else. So at most `concurrency`
 * derivations run at once and `queue` more wait their turn, first come first served; a caller
 * beyond that is refused at once with 503 and Retry-After rather than left hanging.
 */
export class KeyDerivationGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private concurrency: number,
    private queue: number,
  ) {}

  /** PASSWORD_HASH_CONCURRENCY and PASSWORD_HASH_QUEUE, set once at start. */
  configure(limits: { concurrency: number; queue: number }): void {
    this.concurrency = limits.concurrency;
    this.queue = limits.queue;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) this.running += 1;
    else if (this.waiting.length < this.queue) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else throw new ServiceUnavailableError('too many password checks at once: retry in a moment', 1);
    try {
      return await work();
    } finally {
      // The turn passes straight to the next in line; only when nobody waits is it given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/** Leaves a core for the event loop: every core but one hashes, and never fewer than one. */
export const DEFAULT_HASH_CONCURRENCY = Math.max(1, availableParallelism() - 1);
export const DEFAULT_HASH_QUEUE = 64;

export const keyDerivations = new KeyDerivationGate(DEFAULT_HASH_CONCURRENCY, DEFAULT_HASH_QUEUE);

function derive(password: string, salt: Buffer): Promise<Buffer> {
  return keyDerivations.run(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        derivations += 1;
        scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, PARAMS, (err, key) => (err ? reject(err) : resolve(key)));
      }),
  );
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
