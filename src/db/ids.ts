import { randomBytes } from 'node:crypto';

/** Opaque string ids: `<prefix>_<16 hex>`. No colons, so an id can sit inside a scope. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}
