import { randomBytes } from 'node:crypto';

/** Opaque string ids: `<prefix>_<16 hex>`. No colons, so an id can sit inside a scope. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

const UID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A short uid for a resource created without one (folders, dashboards, alert rules), as Grafana makes them. */
export function newUid(): string {
  return Array.from(randomBytes(14), (byte) => UID_ALPHABET[byte % UID_ALPHABET.length]).join('');
}
