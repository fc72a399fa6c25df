/**
 * The request line's writer (src/logging/line-writer.ts): byte for byte the line pino writes for
 * the same fields, with whatever options the logger has, and nothing below the logger's level.
 */
import { expect } from 'chai';
import pino, { type LoggerOptions } from 'pino';
import { lineWriter } from '../src/logging/line-writer.ts';

const FIELDS = ['requestId', 'req', 'res', 'durationMs', 'route', 'principalId'] as const;

/** Two loggers alike but for their sinks; the time is fixed so their lines can be compared. */
function twins(options: LoggerOptions, child?: { bindings: Record<string, unknown>; options?: pino.ChildLoggerOptions }) {
  const make = () => {
    const lines: string[] = [];
    const root = pino({ ...options, timestamp: () => ',"time":1795694293365' }, { write: (line: string) => lines.push(line) });
    return { lines, logger: child ? root.child(child.bindings, child.options) : root };
  };
  return { byPino: make(), byWriter: make() };
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
