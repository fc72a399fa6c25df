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

/** A write statement as knex sent it: its table, and for an update the columns it sets (null for an insert or a delete). */
export interface Write {
  table: string;
  setColumns: string[] | null;
}

export function parseWrite(sql: string | undefined): Write | null {
  // every query passes here: a read leaves at its first letter
  if (!sql || sql.startsWith('select')) return null;
  const match = WRITE.exec(sql);
  if (!match) return null;
  const [, verb, table, rest] = match as unknown as [string, string, string, string];
  if (verb.toLowerCase() !== 'update') return { table: table.toLowerCase(), setColumns: null };
  const setClause = rest.replace(/^set\s+/i, '').split(/\swhere\s/i)[0] ?? '';
  return { table: table.toLowerCase(), setColumns: [...setClause.matchAll(SET_COLUMN)].map((found) => found[1]!) };
}

/**
 * Every write watch of one database, behind one pair of knex listeners: each statement is parsed
 * once and offered to each watch.
 */
export class WriteWatches {
  private readonly watches: WriteWatch[] = [];

  constructor(db: Knex) {
    db.on('query', (query: QueryEvent) => {
      const write = parseWrite(query.sql);
      if (write) for (const watch of this.watches) if (watch.counts(write)) watch.writeSent();
    });
    db.on('query-response', (_response: unknown, query: QueryEvent) => {
      if (query.__knexTxId) return;
      const write = parseWrite(query.sql);
      if (write) for (const watch of this.watches) if (watch.counts(write)) watch.writeCompleted();
    });
  }

  /** A watch of `tables`: each watched table with the columns whose updates alone do not count. */
  watch(tables: Readonly<Record<string, readonly string[]>>): WriteWatch {
    const watch = new WriteWatch(tables);
    this.watches.push(watch);
    return watch;
  }

  /**
   * services.transact calls it as a transaction begins, and what it returns once the transaction
   * has ended (committed or rolled back): each watch that saw a write meanwhile moves again.
   */
  transactionBegins(): () => void {
    const watches = [...this.watches];
    const sentBefore = watches.map((watch) => watch.writesSent);
    return () => watches.forEach((watch, i) => watch.transactionEnded(sentBefore[i]!));
  }
}

/** The generation of some tables (made by WriteWatches.watch), and the caches to empty when it moves. */
export class WriteWatch {
  private generationNumber = 0;
  private writeCount = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly tables: Readonly<Record<string, readonly string[]>>) {}

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

  /** Whether `write` changes what the watched tables hold: an update of bookkeeping columns alone does not. */
  counts(write: Write): boolean {
    const bookkeeping = this.tables[write.table];
    if (!bookkeeping) return false;
    if (write.setColumns === null || write.setColumns.length === 0) return true;
    return write.setColumns.some((column) => !bookkeeping.includes(column));
  }

  /** A watched write was sent… */
  writeSent(): void {
    this.writeCount += 1;
    this.advance();
  }

  /** …and, outside a transaction, has completed. */
  writeCompleted(): void {
    this.advance();
  }

  private advance(): void {
    this.generationNumber += 1;
    for (const listener of this.listeners) listener();
  }
}
