/**
 * The fields of a query to a connector's backend, as `POST /api/connectors/:uid/query` and the
 * chat tools `metrics_query` and `logs_query` take them (times in unix seconds).
 */
import { MAX_EPOCH_SECONDS } from '../http/schemas.ts';
import { MAX_LOG_LIMIT } from './backends/loki.ts';

/** A time the backend is asked about: any a Date holds. */
const unixSeconds = { type: 'number', minimum: -MAX_EPOCH_SECONDS, maximum: MAX_EPOCH_SECONDS } as const;

export const QUERY_FIELDS = {
  query: { type: 'string', minLength: 1, maxLength: 20_000 },
  time: unixSeconds,
  start: unixSeconds,
  end: unixSeconds,
  step: { type: 'number', exclusiveMinimum: 0, maximum: MAX_EPOCH_SECONDS },
} as const;

/** Log connectors only: how many lines, newest or oldest first. */
export const LOG_QUERY_FIELDS = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_LOG_LIMIT },
  direction: { type: 'string', enum: ['backward', 'forward'] },
} as const;

export const INSTANT_BY_DEFAULT = { type: 'string', enum: ['instant', 'range'], default: 'instant' } as const;
export const RANGE_BY_DEFAULT = { type: 'string', enum: ['instant', 'range'], default: 'range' } as const;
