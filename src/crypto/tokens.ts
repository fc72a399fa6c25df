/** Token material: random opaque tokens and the SHA-256 digests that are all we store. */
import { hash, randomBytes } from 'node:crypto';

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Every request with a credential digests it: the one-shot hash, at less than half the cost of a Hash object. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}
