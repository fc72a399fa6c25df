/** `perpage` and `page` (from 1) for list endpoints; responses carry `totalCount` with the items. */
import type { PageWindow } from '../db/search.ts';

export const MAX_PER_PAGE = 1000;
export const DEFAULT_PER_PAGE = 100;
/** The last page whose offset is still an exact integer in JavaScript (and a valid OFFSET on both databases). */
export const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / MAX_PER_PAGE);

export const paginationQuerySchema = {
  perpage: { type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE },
  page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
} as const;

export interface Page extends PageWindow {
  page: number;
  perPage: number;
}

export function pageOf(query: { perpage?: number; page?: number }): Page {
  const perPage = query.perpage ?? DEFAULT_PER_PAGE;
  const page = query.page ?? 1;
  return { limit: perPage, offset: (page - 1) * perPage, page, perPage };
}

/** What every list endpoint answers: `{totalCount, <items>, page, perPage}`, the items under `key`. */
export type ListPage<K extends string, T> = { totalCount: number } & { [key in K]: T[] } & { page: number; perPage: number };

/** The answer of a list endpoint: one page of rows (a store's findPage) through their presenter, with the total. */
export function listPage<K extends string, Row, T>(key: K, page: Page, found: { totalCount: number; rows: Row[] }, present: (row: Row) => T): ListPage<K, T> {
  return { totalCount: found.totalCount, [key]: found.rows.map((row) => present(row)), page: page.page, perPage: page.perPage } as ListPage<K, T>;
}

/** The query of a plain list: paging only. */
export const listQuerySchema = {
  type: 'object',
  properties: { ...paginationQuerySchema },
  additionalProperties: false,
} as const;

/** The query of a searchable list: paging plus `query`, a case-insensitive substring. */
export const searchQuerySchema = {
  type: 'object',
  properties: { ...paginationQuerySchema, query: { type: 'string', maxLength: 190 } },
  additionalProperties: false,
} as const;
