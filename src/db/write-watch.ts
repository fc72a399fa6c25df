/**
 * Which writes this process makes to some tables, as a generation number that moves with each
 * one: a read cache keeps what it loaded only when the generation did not move meanwhile, and
 * empties itself when it moves. Writes are seen through knex's query events, so no store has to
 * remember to report one.
 *
 * The generation moves when a write statement is sent, again when an autocommitted one has
 * completed, and again when a transaction that held one has ended (createServices reports the
 * end): a load that read the rows before the commit is then either refused or emptied away. Updates
 * of only the columns named as bookkeeping (last_seen_at) do not count, so that the reads that
 * write them do not empty the caches; every other insert, update and delete does (an insert
 * lengthens a cached list).
 */
import type { Knex } from 'knex';

interface QueryEvent {
  sql?: string;
  __knexTxId?: string;
}

const WRITE = /^\s*(update|delete\s+from|insert\s+into|replace\s+into)\s+[`"]?(\w+)[`"]?\s*(.*)$/is;
const SET_COLUMN = /[`"](\w+)[`"]\s*=/g;

export class WriteWatch {
  private generationNumber = 0;
  private writeCount = 0;
  private readonly listeners = new Set<() => void>();

  /** `tables`: each watched table with the columns whose updates alone do not count. */
  constructor(
    db: Knex,
    private readonly tables: Readonly<Record<string, readonly string[]>>,
  ) {
    db.on('query', (query: QueryEvent) => {
      if (!this.isWatchedWrite(query.sql)) return;
      this.writeCount += 1;
      this.advance();
    });
    db.on('query-response', (_response: unknown, query: QueryEvent) => {
      if (!query.__knexTxId && this.isWatchedWrite(query.sql)) this.advance();
    });
  }

  get generation(): number {
    return this.generationNumber;
  }

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** How many watched writes were sent so far: a transaction notes it before it starts… */
  get writesSent(): number {
    return this.writeCount;
  }

  /** …and after it has committed or rolled back, moves the generation if one was sent meanwhile. */
  transactionEnded(writesSentBefore: number): void {
    if (this.writeCount !== writesSentBefore) this.advance();
  }

  private advance(): void {
    this.generationNumber += 1;
    for (const listener of this.listeners) listener();
  }

  private isWatchedWrite(sql: string | undefined): boolean {
    // every query passes here: a read leaves at its first letter
    if (!sql || sql.startsWith('select')) return false;
    const match = WRITE.exec(sql);
    if (!match) return false;
    const [, verb, table, rest] = match as unknown as [string, string, string, string];
    const bookkeeping = this.tables[table.toLowerCase()];
    if (!bookkeeping) return false;
    if (verb.toLowerCase() !== 'update') return true;
    const setClause = rest.replace(/^set\s+/i, '').split(/\swhere\s/i)[0] ?? '';
    const columns = [...setClause.matchAll(SET_COLUMN)].map((found) => found[1]!);
    return columns.length === 0 || columns.some((column) => !bookkeeping.includes(column));
  }
}

/**
 * services.transact calls it as a transaction begins, and what it returns once the transaction
 * has ended (committed or rolled back): each watch that saw a write meanwhile moves again.
 */
export function transactionBegins(watches: readonly WriteWatch[]): () => void {
  const sentBefore = watches.map((watch) => watch.writesSent);
  return () => watches.forEach((watch, i) => watch.transactionEnded(sentBefore[i]!));
}
