/**
 * The log store behind a `logstore` connector, as its `jsonData.backend` says: Grafana Loki
 * (LogQL, the default) or VictoriaLogs (LogsQL). Both answer log lines as streams and their
 * metric or stats queries as series, so a caller reads either the same way.
 */
import { isLokiReadPath, queryLoki, testLoki, type LogsQuery } from './loki.ts';
import type { ConnectivityResult, ResultShape } from './prometheus.ts';
import type { Backend } from './request.ts';
import { isVictoriaLogsReadPath, queryVictoriaLogs, testVictoriaLogs } from './victorialogs.ts';
import type { LogBackend } from '../settings.ts';

export interface LogsApi {
  test(backend: Backend): Promise<ConnectivityResult>;
  /** The JSON of the result; `streamFilter` is VictoriaLogs' `extra_stream_filters` (label rules), which Loki has not. */
  query(backend: Backend, query: LogsQuery, shape?: ResultShape, streamFilter?: string): Promise<Buffer>;
  isReadPath(path: string): boolean;
}

const LOGS_APIS: Record<LogBackend, LogsApi> = {
  loki: {
    test: testLoki,
    query(backend, query, shape, streamFilter) {
      // label rules restrict a LogQL query's text; a stream filter here would be silently ignored
      if (streamFilter !== undefined) throw new Error('Loki takes no stream filter');
      return queryLoki(backend, query, shape);
    },
    isReadPath: isLokiReadPath,
  },
  victorialogs: { test: (backend) => testVictoriaLogs(backend), query: queryVictoriaLogs, isReadPath: isVictoriaLogsReadPath },
};

export const logsApiOf = (backend: LogBackend): LogsApi => LOGS_APIS[backend];
