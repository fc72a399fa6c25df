/**
 * DB errors, translated in one place for both dialects: a duplicate is a 409 with a message, a
 * dangling reference a 409 too, an unreachable database a 503 with Retry-After; nothing of the
 * driver's text reaches the client.
 */
import { ConflictError, ServiceError, ServiceUnavailableError } from '../errors.ts';
import { QUERY_TIMEOUT_CODE } from './query-timeout.ts';

interface DriverError {
  code?: string;
  errno?: number;
  message?: string;
  name?: string;
  /** mysql2: the connection is unusable (lost, refused, closed). */
  fatal?: boolean;
}

/** Seconds a client is asked to wait while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'SQLITE_BUSY',
  QUERY_TIMEOUT_CODE,
]);

/** The database cannot be reached or is too busy to answer: not the request's fault, and it passes. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const driver = err as DriverError | null;
  if (!driver || typeof driver !== 'object') return false;
  // knex's pool gave up waiting for a connection (acquireConnectionTimeout).
  if (driver.name === 'KnexTimeoutError') return true;
  return (!!driver.code && UNAVAILABLE_CODES.has(driver.code)) || driver.fatal === true;
}

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'ER_DUP_ENTRY']);
const REFERENCE_CODES = new Set(['SQLITE_CONSTRAINT_FOREIGNKEY', 'ER_NO_REFERENCED_ROW_2', 'ER_ROW_IS_REFERENCED_2']);

/** A duplicate key: for the callers that expect one and treat it as an answer, not an error. */
export function isUniqueViolation(err: unknown): boolean {
  return UNIQUE_CODES.has((err as DriverError | null)?.code ?? '');
}

/** Returns the HTTP error for a constraint violation or an outage, or null when `err` is something else. */
export function translateDbError(err: unknown): ServiceError | null {
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError('database unavailable', DATABASE_RETRY_AFTER_SECONDS);
  const code = (err as DriverError | null)?.code;
  if (!code) return null;
  if (UNIQUE_CODES.has(code)) return new ConflictError('a resource with the same unique value already exists');
  if (REFERENCE_CODES.has(code)) return new ConflictError('the change conflicts with a related resource');
  return null;
}
