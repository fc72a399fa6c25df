/**
 * DB constraint errors, translated in one place for both dialects: a duplicate is a 409 with a
 * message, a dangling reference a 409 too; nothing of the driver's text reaches the client.
 */
import { ConflictError } from '../errors.ts';

interface DriverError {
  code?: string;
  errno?: number;
  message?: string;
}

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'ER_DUP_ENTRY']);
const REFERENCE_CODES = new Set([
  'SQLITE_CONSTRAINT_FOREIGNKEY',
  'ER_NO_REFERENCED_ROW_2',
  'ER_ROW_IS_REFERENCED_2',
]);

/** Returns the HTTP error for a constraint violation, or null when `err` is something else. */
export function translateDbError(err: unknown): ConflictError | null {
  const code = (err as DriverError | null)?.code;
  if (!code) return null;
  if (UNIQUE_CODES.has(code)) return new ConflictError('a resource with the same unique value already exists');
  if (REFERENCE_CODES.has(code)) return new ConflictError('the change conflicts with a related resource');
  return null;
}
