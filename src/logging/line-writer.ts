/**
 * One kind of log line, in pino's own format, written without pino's per-field work: the line
 * the service writes on every request. For each field pino looks up a serializer, a stringifier
 * and the field's type, and runs a JSON.stringify per nested object; here the fields go through
 * one JSON.stringify, between the pieces pino itself puts around them (level, time and the
 * logger's bindings before, the message and the line's end after). The pieces are cut from a line
 * pino writes for the message alone, which the logger's destination (made by createLineLogger)
 * hands to the writer instead of writing it; they are cut again after the logger's setBindings.
 *
 * Only a logger made by createLineLogger, with options that leave the fields as their plain JSON,
 * takes that path. Any other logger (a child, one made elsewhere) and one whose options shape
 * the line (a log formatter, a mixin, a serializer of one of the fields, redaction, hooks, a
 * message prefix, a nested key), or whose destination wants each line's metadata, gets the line
 * from pino itself.
 */
import pino, { type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';

export type LineWriter = (fields: Record<string, unknown>) => void;

/** pino's documented mark of a destination that reads each line's level and message from the logger. */
const NEEDS_METADATA = Symbol.for('pino.metadata');

/**
 * The destination of a logger made by createLineLogger: it passes pino's lines on, except one
 * that a writer asked to see (capture), which is handed to it instead of being written.
 */
class LineDestination implements DestinationStream {
  private captured: string | null = null;
  private capturing = false;
  /** What the logger's time function answered last: where the time stands in a captured line. */
  lastTime = '';
  /** Counts the logger's setBindings calls: a writer's captured bindings are stale past one. */
  bindingsVersion = 0;

  constructor(
    readonly destination: DestinationStream,
    readonly options: LoggerOptions,
    /** The logger's time: its `timestamp` option, or pino's default. */
    readonly time: () => string,
  ) {}

  /** The line pino writes while `log` runs, not written. */
  capture(log: () => void): string | null {
    this.capturing = true;
    this.captured = null;
    try {
      log();
    } finally {
      this.capturing = false;
    }
    return this.captured;
  }

  write(line: string): void {
    if (this.capturing) this.captured = line;
    else this.destination.write(line);
  }
}

const destinations = new WeakMap<Logger, LineDestination>();

/**
 * A pino logger, as `pino(options, destination)`, whose lineWriter lines skip pino's per-field
 * work where the options allow it.
 */
export function createLineLogger(options: LoggerOptions, destination: DestinationStream): Logger {
  if ((destination as unknown as Record<symbol, unknown>)[NEEDS_METADATA]) return pino(options, destination);
  const time = options.timestamp === false ? () => '' : typeof options.timestamp === 'function' ? options.timestamp : pino.stdTimeFunctions.epochTime;
  const lines = new LineDestination(destination, options, time);
  const logger = pino({ ...options, timestamp: () => (lines.lastTime = time()) }, lines);
  const setBindings = logger.setBindings.bind(logger);
  logger.setBindings = (bindings) => {
    setBindings(bindings);
    lines.bindingsVersion += 1;
  };
  destinations.set(logger, lines);
  return logger;
}

/** Whether pino would write these fields, or the message, other than as their plain JSON. */
function shapedByPino(options: LoggerOptions, fieldNames: readonly string[]): boolean {
  const serializers = (options.serializers ?? {}) as Record<string, unknown>;
  return (
    !!options.formatters?.log ||
    !!options.mixin ||
    fieldNames.some((name) => !!serializers[name]) ||
    !!serializers[options.messageKey ?? 'msg'] ||
    !!options.redact ||
    !!options.hooks?.logMethod ||
    !!options.hooks?.streamWrite ||
    options.msgPrefix !== undefined ||
    !!options.nestedKey
  );
}

/** A line pino wrote for no fields, cut where the time and the fields go. */
interface LineTemplate {
  /** Up to the time: `{"level":30`. */
  head: string;
  /** Between the time and the fields: the logger's bindings. */
  bindings: string;
  bindingsVersion: number;
}

/** The template of `lines`' logger at `level`, from a line pino writes for the message alone; null when pino's line is not of that shape. */
function captureTemplate(logger: Logger, lines: LineDestination, level: Level, msg: string, tail: string): LineTemplate | null {
  const line = lines.capture(() => logger[level](msg));
  if (line === null || !line.endsWith(tail)) return null;
  // pino writes the time right after the level; without a time, head and bindings are one piece
  const at = lines.lastTime === '' ? line.length - tail.length : line.indexOf(lines.lastTime);
  if (at < 0) return null;
  return { head: line.slice(0, at), bindings: line.slice(at + lines.lastTime.length, line.length - tail.length), bindingsVersion: lines.bindingsVersion };
}

/**
 * Writes `fields` at `level` with the message `msg`, as `logger[level](fields, msg)` would;
 * `fieldNames` are every field a line may carry (a serializer of any of them leaves the
 * writing to pino).
 */
export function lineWriter(logger: Logger, level: Level, msg: string, fieldNames: readonly string[]): LineWriter {
  const lines = destinations.get(logger);
  const throughPino: LineWriter = (fields) => logger[level](fields, msg);
  if (!lines || shapedByPino(lines.options, fieldNames)) return throughPino;
  const { messageKey = 'msg', crlf = false } = lines.options;
  const tail = `,${JSON.stringify(messageKey)}:${JSON.stringify(msg)}}${crlf ? '\r\n' : '\n'}`;
  let template: LineTemplate | null = null;
  let templated = true;
  return (fields) => {
    if (!templated) return throughPino(fields);
    if (!logger.isLevelEnabled(level)) return;
    if (template === null || template.bindingsVersion !== lines.bindingsVersion) {
      template = captureTemplate(logger, lines, level, msg, tail);
      if (template === null) {
        // pino writes this line otherwise than expected: it writes every one itself
        templated = false;
        return throughPino(fields);
      }
    }
    const json = JSON.stringify(fields);
    lines.destination.write(template.head + lines.time() + template.bindings + (json.length > 2 ? `,${json.slice(1, -1)}` : '') + tail);
  };
}
