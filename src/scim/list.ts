/** What the SCIM list endpoints share: their query (`filter`, `startIndex`, `count`) and its page. */
import { MAX_INT_COLUMN } from '../http/schemas.ts';
import { MAX_FILTER_LENGTH } from './filter.ts';

/** The most resources one page holds (ServiceProviderConfig `filter.maxResults`); a larger count gets this many. */
export const MAX_RESULTS = 1000;

export const listQuerySchema = {
  type: 'object',
  properties: {
    filter: { type: 'string', maxLength: MAX_FILTER_LENGTH },
    startIndex: { type: 'integer', minimum: -MAX_INT_COLUMN, maximum: MAX_INT_COLUMN },
    count: { type: 'integer', minimum: -MAX_INT_COLUMN, maximum: MAX_INT_COLUMN },
  },
  additionalProperties: false,
} as const;

/** RFC 7644 §3.4.2.4: a startIndex below 1 is 1, a negative count is 0. */
export function pageOfList(query: { startIndex?: number; count?: number }): { startIndex: number; limit: number; offset: number } {
  const startIndex = Math.max(1, query.startIndex ?? 1);
  const limit = Math.min(MAX_RESULTS, Math.max(0, query.count ?? 100));
  return { startIndex, limit, offset: startIndex - 1 };
}
