/**
 * The log store behind a `logstore` connector, as its `jsonData.backend` says: Grafana Loki
 * (LogQL, the default) or VictoriaLogs (LogsQL). Both answer log lines as streams and their
 * metric or stats queries as series, so a caller reads either the same way.
 */
import { isLokiReadPath, queryLoki, queryLokiUnion, testLoki, type LogsQuery } from './loki.ts';
import type { ConnectivityResult, ResultShape } from './prometheus.ts';
import type { Backend } from './request.ts';
import { isVictoriaLogsReadPath, queryVictoriaLogs, testVictoriaLogs } from './victorialogs.ts';
import type { LogBackend } from '../settings.ts';

export interface LogsApi {
  test(backend: Backend): Promise<ConnectivityResult>;
  /**
   * The JSON of the result. Under label rules: `streamFilter` is VictoriaLogs' `extra_stream_filters`,
   * which Loki has not; `union` is a Loki log query as one query per rule, whose lines are merged.
   */
  query(backend: Backend, query: LogsQuery, shape?: ResultShape, restricted?: RestrictedParts): Promise<Buffer>;
  isReadPath(path: string): boolean;
}

/** What label rules add to a query beside its text (connectors/label-rules.ts' RestrictedRead). */
export interface RestrictedParts {
  streamFilter?: string;
  union?: readonly string[];
}

const LOGS_APIS: Record<LogBackend, LogsApi> = {
  loki: {
    test: testLoki,
    query(backend, query, shape, restricted = {}) {
      // label rules restrict a LogQL query's text; a stream filter here would be silently ignored
      if (restricted.streamFilter !== undefined) throw new Error('Loki takes no stream filter');
      return restricted.union ? queryLokiUnion(backend, query, restricted.union, shape) : queryLoki(backend, query, shape);
    },
    isReadPath: isLokiReadPath,
  },
  victorialogs: {
    test: (backend) => testVictoriaLogs(backend),
    query(backend, query, shape, restricted = {}) {
      if (restricted.union) throw new Error('VictoriaLogs takes the rules as one stream filter');
      return queryVictoriaLogs(backend, query, shape, restricted.streamFilter);
    },
    isReadPath: isVictoriaLogsReadPath,
  },
};

export const logsApiOf = (backend: LogBackend): LogsApi => LOGS_APIS[backend];
