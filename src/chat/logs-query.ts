/**
 * `logs_query`: a query on a logs connector (named, or the org's default), needing
 * `connectors:query` on it: LogQL for a Loki connector, LogsQL for a VictoriaLogs one
 * (`jsonData.backend`). A range query unless told otherwise: Loki answers log lines to range
 * queries only. Lines are bounded by `limit` (100 unless given); a metric query
 * (`count_over_time(...)`) or a stats query (`| stats … by (…)`) answers series, capped as
 * metrics_query's are. The caller's label rules on the connector bind the agent it drives as they
 * bind the caller (connectors/label-rules.ts).
 */
import type { CappedSeries, LogsResult } from '../connectors/backends/answers.ts';
import { logsApiOf } from '../connectors/backends/logs.ts';
import { jsonDataOf } from '../connectors/presenter.ts';
import { logBackendOf } from '../connectors/settings.ts';
import { LOG_QUERY_FIELDS, QUERY_FIELDS, RANGE_BY_DEFAULT } from '../connectors/query-fields.ts';
import { backendOf } from '../connectors/backends/request.ts';
import { connectorResource } from '../connectors/target.ts';
import { readLanguageOf, readRestriction, restrictedRead } from '../connectors/label-rules.ts';
import { STREAMS_RESULT_PROPERTIES } from '../connectors/responses.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { CAPPED_SERIES_PROPERTIES, DEFAULT_MAX_SERIES, maxSeriesSchema } from './series-cap.ts';
import { defineTool } from './tool.ts';

export const logsQuery = defineTool({
  write: false,
  args: {
    type: 'object',
    properties: {
      connector: connectorArgSchema,
      ...QUERY_FIELDS,
      type: RANGE_BY_DEFAULT,
      ...LOG_QUERY_FIELDS,
      maxSeries: maxSeriesSchema,
    },
    required: ['query'],
    additionalProperties: false,
  },
  // log lines, or the series of a metric query
  result: {
    anyOf: [
      { type: 'object', properties: { connector: CONNECTOR_CHOICE_SCHEMA, ...STREAMS_RESULT_PROPERTIES }, required: ['connector', 'resultType', 'streams'] },
      {
        type: 'object',
        properties: { connector: CONNECTOR_CHOICE_SCHEMA, resultType: { type: 'string' }, ...CAPPED_SERIES_PROPERTIES },
        required: ['connector', 'resultType', 'series', 'truncated', 'totalSeries'],
      },
    ],
  },
  async run({ args, orgId, services, subject, authorize }) {
    const { connector: named, maxSeries, ...query } = args;
    const connector = await chooseConnector(services.db, orgId, 'logs', named);
    await authorize('connectors:query', connectorResource(connector.uid));
    const restriction = await readRestriction(services, subject, orgId, connector);
    const read = restrictedRead(restriction, readLanguageOf(connector), query.query, 'body.args.query');
    const api = logsApiOf(logBackendOf(jsonDataOf(connector)));
    const json = await api.query(
      backendOf(connector, services),
      { ...query, query: read.query, type: query.type ?? 'range' },
      { maxSeries: maxSeries ?? DEFAULT_MAX_SERIES },
      read,
    );
    return { connector: presentChoice(connector), ...(JSON.parse(json.toString('utf8')) as LogsResult | CappedSeries) };
  },
});
