/**
 * The request line's writer (src/logging/line-writer.ts): byte for byte the line pino writes for
 * the same fields, with whatever options the logger has, and nothing below the logger's level.
 * The writer's logger is made by createLineLogger, pino's by pino().
 */
import { expect } from 'chai';
import pino, { type LoggerOptions } from 'pino';
import { createLineLogger, lineWriter } from '../src/logging/line-writer.ts';

const FIELDS = ['requestId', 'req', 'res', 'durationMs', 'route', 'principalId'] as const;

/** Two loggers alike but for their sinks; the time is fixed so their lines can be compared. */
function twins(options: LoggerOptions, child?: { bindings: Record<string, unknown>; options?: pino.ChildLoggerOptions }) {
  const make = (create: (options: LoggerOptions, destination: pino.DestinationStream) => pino.Logger) => {
    const lines: string[] = [];
    const root = create({ ...options, timestamp: () => ',"time":1795694293365' }, { write: (line: string) => lines.push(line) });
    return { lines, logger: child ? root.child(child.bindings, child.options) : root };
  };
  return { byPino: make((options, destination) => pino(options, destination)), byWriter: make(createLineLogger) };
}

const SAMPLES: Array<Record<string, unknown>> = [
  {
    requestId: 'r-1',
    req: { method: 'GET', path: '/api/teams/search' },
    res: { statusCode: 200 },
    durationMs: 3,
    route: '/api/teams/search',
    principalId: 'u1',
  },
  {
    requestId: 'r-2',
    req: { method: 'GET', path: '/api/"odd"\\path\n\u2028\ud800é' },
    res: { statusCode: 404 },
    durationMs: 0,
    route: 'unmatched',
    principalId: null,
  },
  { requestId: 'r-3', req: { method: 'POST', path: '/x' }, res: { statusCode: 201 }, durationMs: Number.NaN, route: undefined, principalId: null },
  { requestId: 'a-very-long-request-id-given-by-a-trusted-proxy-0123456789abcdef', req: { method: 'GET', path: '/' } },
  {},
];

describe('request line writer', () => {
  const cases: Array<[string, LoggerOptions, Parameters<typeof twins>[1]?]> = [
    ['default options', {}],
    ['no base fields', { base: null }],
    ['custom base and message key', { base: { service: 'gatehouse' }, messageKey: 'message' }],
    ['a child with bindings', {}, { bindings: { component: 'http' } }],
    // these shape the line, and the writer leaves it to pino
    ['a log formatter', { formatters: { log: (object) => ({ ...object, formatted: true }) } }],
    ['a level formatter', { formatters: { level: (label) => ({ severity: label.toUpperCase() }) } }],
    ['a mixin', { mixin: () => ({ mixed: 1 }) }],
    ['a serializer of a field', { serializers: { req: (req: { method: string }) => ({ m: req.method }) } }],
    ['redaction', { redact: ['req.path', 'principalId'] }],
    ['a nested key', { nestedKey: 'payload' }],
    ['a stream-write hook', { hooks: { streamWrite: (line) => line.replace('GET', 'get') } }],
    ['a child with a message prefix', {}, { bindings: {}, options: { msgPrefix: '[http] ' } }],
  ];
  for (const [name, options, child] of cases) {
    it(`writes what pino writes, with ${name}`, () => {
      const { byPino, byWriter } = twins(options, child);
      const write = lineWriter(byWriter.logger, 'info', 'request completed', FIELDS);
      for (const fields of SAMPLES) {
        byPino.logger.info(fields, 'request completed');
        write(fields);
      }
      expect(byWriter.lines).to.deep.equal(byPino.lines);
      expect(byWriter.lines).to.have.length(SAMPLES.length);
    });
  }

  it('leaves the fields alone to pino only where the options shape them', () => {
    for (const [name, options, child] of cases) {
      const { byWriter } = twins(options, child);
      const calls: unknown[][] = [];
      const info = byWriter.logger.info.bind(byWriter.logger);
      byWriter.logger.info = ((...args: Parameters<typeof info>) => {
        calls.push(args);
        return info(...args);
      }) as typeof info;
      lineWriter(byWriter.logger, 'info', 'request completed', FIELDS)(SAMPLES[0]!);
      const plain = ['default options', 'no base fields', 'custom base and message key', 'a level formatter'].includes(name);
      expect(calls, name).to.deep.equal([plain ? ['request completed'] : [SAMPLES[0], 'request completed']]);
      expect(byWriter.lines, name).to.have.length(1);
    }
  });

  it('writes what pino writes without a time, with CRLF line ends, and after new bindings', () => {
    for (const options of [{ timestamp: false }, { timestamp: false, crlf: true, base: { service: 'gatehouse' } }] as LoggerOptions[]) {
      const byPino: string[] = [];
      const byWriter: string[] = [];
      const pinoLogger = pino(options, { write: (line: string) => byPino.push(line) });
      const writerLogger = createLineLogger(options, { write: (line: string) => byWriter.push(line) });
      const write = lineWriter(writerLogger, 'info', 'request completed', FIELDS);
      for (const fields of SAMPLES) {
        pinoLogger.info(fields, 'request completed');
        write(fields);
      }
      pinoLogger.setBindings({ instance: 'b' });
      writerLogger.setBindings({ instance: 'b' });
      pinoLogger.info(SAMPLES[0]!, 'request completed');
      write(SAMPLES[0]!);
      expect(byWriter).to.deep.equal(byPino);
      expect(byWriter.at(-1)).to.include('"instance":"b"');
    }
  });

  it('writes nothing below the logger level, and follows a level changed later', () => {
    const { byWriter } = twins({ level: 'warn' });
    const write = lineWriter(byWriter.logger, 'info', 'request completed', FIELDS);
    write(SAMPLES[0]!);
    expect(byWriter.lines).to.deep.equal([]);
    byWriter.logger.level = 'info';
    write(SAMPLES[0]!);
    expect(byWriter.lines).to.have.length(1);
    expect(JSON.parse(byWriter.lines[0]!)).to.deep.include({ level: 30, msg: 'request completed', requestId: 'r-1' });
  });
});
