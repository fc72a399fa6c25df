/**
 * Bulk writes in statements of a bounded size. SQLite takes at most 32,766 parameters per
 * statement; 500 rows of the widest table written in bulk (the audit log's fourteen columns)
 * stay well inside it, as do id lists of 500.
 */
export const ROWS_PER_STATEMENT = 500;

/** `items` handed to `work` ROWS_PER_STATEMENT at a time, one statement after the other. */
export async function inStatementChunks<T>(items: readonly T[], work: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) await work(items.slice(i, i + ROWS_PER_STATEMENT));
}
