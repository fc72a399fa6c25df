/**
 * One kind of log line, in pino's own format, written without pino's per-field work: the line
 * the service writes on every request. For each field pino looks up a serializer, a stringifier
 * and the field's type, and runs a JSON.stringify per nested object; here the fields go through
 * one JSON.stringify, between the pieces pino itself puts around them (level, time and the
 * logger's bindings before, the message and the line's end after), read from the logger so the
 * line is the one pino would write. A logger that would shape the line otherwise (a log
 * formatter, a mixin, a serializer of one of the fields, redaction, hooks, a message prefix, a
 * nested key, a destination that wants each line's metadata) gets it from pino itself.
 */
import pino, { type Level, type Logger } from 'pino';

const symbols = pino.symbols;
/** Held by pino 8.14 and later, not named in its types. */
const msgPrefixSym = (symbols as unknown as Record<string, symbol>).msgPrefixSym!;

/** The parts of a pino logger that its symbols hold (pino.symbols: public for integrations). */
interface PinoInternals {
  [key: symbol]: unknown;
}

export type LineWriter = (fields: Record<string, unknown>) => void;

/** Whether pino would write these fields other than as their plain JSON. */
function shapedByPino(internals: PinoInternals, fieldNames: readonly string[]): boolean {
  const formatters = internals[symbols.formattersSym] as { log?: unknown };
  const serializers = internals[symbols.serializersSym] as Record<string, unknown>;
  const stringifiers = internals[symbols.stringifiersSym] as object;
  const hooks = internals[symbols.hooksSym] as { logMethod?: unknown; streamWrite?: unknown };
  const stream = internals[symbols.streamSym] as Record<symbol, unknown>;
  return (
    !!formatters.log ||
    !!internals[symbols.mixinSym] ||
    fieldNames.some((name) => !!serializers[name]) ||
    Reflect.ownKeys(stringifiers).length > 0 ||
    !!hooks.logMethod ||
    !!hooks.streamWrite ||
    internals[msgPrefixSym] !== undefined ||
    !!internals[symbols.nestedKeySym] ||
    stream[symbols.needsMetadataGsym] === true
  );
}

/**
 * Writes `fields` at `level` with the message `msg`, as `logger[level](fields, msg)` would;
 * `fieldNames` are every field a line may carry (a serializer of any of them leaves the
 * writing to pino).
 */
export function lineWriter(logger: Logger, level: Level, msg: string, fieldNames: readonly string[]): LineWriter {
  const internals = logger as unknown as PinoInternals;
  if (shapedByPino(internals, fieldNames)) return (fields) => logger[level](fields, msg);
  const levelValue = logger.levels.values[level]!;
  const levelPrefix = (internals[symbols.lsCacheSym] as Record<number, string>)[levelValue]!;
  const time = internals[symbols.timeSym] as () => string;
  const stream = internals[symbols.streamSym] as { write(line: string): unknown };
  const ending = `,"${internals[symbols.messageKeySym] as string}":${JSON.stringify(msg)}${internals[symbols.endSym] as string}`;
  return (fields) => {
    if (!logger.isLevelEnabled(level)) return;
    const json = JSON.stringify(fields);
    // bindings are read on every line: a child logger's are its own, and pino may set them again (setBindings)
    const bindings = internals[symbols.chindingsSym] as string;
    stream.write(levelPrefix + time() + bindings + (json.length > 2 ? `,${json.slice(1, -1)}` : '') + ending);
  };
}
