/**
 * DECISION_LOG=http: the decision log's entries posted in batches to DECISION_LOG_URL as OPA's
 * decision-log plugin posts them, a gzip-compressed JSON array of events (`Content-Encoding:
 * gzip`). Entries wait in a bounded buffer: past DECISION_LOG_BUFFER_SIZE a new entry is dropped
 * and counted; a batch the collector refuses (or cannot be reached for) is sent again after a
 * backoff that doubles up to MAX_BACKOFF_MS, the entries behind it waiting; what is left is sent
 * once more at shutdown.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { OutboundClient } from '../outbound/client.ts';

const gzipAsync = promisify(gzip);

/** How often the buffer is sent while nothing fails. */
export const FLUSH_INTERVAL_MS = 1_000;
/** At most this many entries per request: about 250 KiB of JSON before compression, so a collector's body limit is not met. */
export const MAX_BATCH_ENTRIES = 500;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

export interface DecisionDeliveryObserver {
  delivered(entries: number): void;
  dropped(entries: number): void;
}

export interface HttpSinkSettings {
  url: string;
  bufferSize: number;
  flushIntervalMs?: number;
  firstBackoffMs?: number;
}

export class HttpDecisionSink {
  /** JSON-encoded entries waiting, oldest first. */
  private readonly buffer: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private backoffMs = 0;
  private closed = false;

  constructor(
    private readonly settings: HttpSinkSettings,
    private readonly client: OutboundClient,
    private readonly observer: DecisionDeliveryObserver,
    private readonly onFailure: (err: unknown) => void,
  ) {
    this.schedule(this.settings.flushIntervalMs ?? FLUSH_INTERVAL_MS);
  }

  /** Takes one entry as the decision log writes it (a JSON line); dropped when the buffer is full. */
  write(line: string): void {
    if (this.buffer.length >= this.settings.bufferSize) {
      this.observer.dropped(1);
      return;
    }
    this.buffer.push(line.trimEnd());
  }

  get pending(): number {
    return this.buffer.length;
  }

  /** Sends what is buffered now, batch after batch, until it is empty or a batch fails. */
  flush(): Promise<void> {
    this.sending ??= this.sendAll().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  /** Stops the timer and sends what is left once (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.sending;
    await this.flush();
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.flush().then(() => this.schedule(this.backoffMs || (this.settings.flushIntervalMs ?? FLUSH_INTERVAL_MS)));
    }, ms);
    this.timer.unref();
  }

  private async sendAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const count = Math.min(this.buffer.length, MAX_BATCH_ENTRIES);
      const body = await gzipAsync(`[${this.buffer.slice(0, count).join(',')}]`);
      try {
        const answer = await this.client.request({
          method: 'POST',
          url: new URL(this.settings.url),
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body,
        });
        if (answer.status < 200 || answer.status >= 300) throw new Error(`the collector answered ${answer.status}`);
      } catch (err) {
        // the batch stays at the front; the next attempt waits longer
        this.backoffMs = Math.min(this.backoffMs ? this.backoffMs * 2 : (this.settings.firstBackoffMs ?? FIRST_BACKOFF_MS), MAX_BACKOFF_MS);
        this.onFailure(err);
        return;
      }
      this.buffer.splice(0, count);
      this.backoffMs = 0;
      this.observer.delivered(count);
    }
  }
}
