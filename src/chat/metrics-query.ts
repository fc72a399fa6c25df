/**
 * `metrics_query`: an instant or range query on a metrics connector (named, or the org's default),
 * needing `connectors:query` on it; at most 20 series unless the call asks otherwise (series-cap.ts).
 */
import { queryPrometheus } from '../connectors/backends/prometheus.ts';
import { INSTANT_BY_DEFAULT, QUERY_FIELDS } from '../connectors/query-fields.ts';
import { backendOf } from '../connectors/backends/request.ts';
import { connectorResource } from '../connectors/target.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { CAPPED_SERIES_PROPERTIES, capSeries, maxSeriesSchema } from './series-cap.ts';
import { defineTool } from './tool.ts';

export const metricsQuery = defineTool({
  write: false,
  args: {
    type: 'object',
    properties: {
      connector: connectorArgSchema,
      ...QUERY_FIELDS,
      type: INSTANT_BY_DEFAULT,
      maxSeries: maxSeriesSchema,
    },
    required: ['query'],
    additionalProperties: false,
  },
  result: {
    type: 'object',
    properties: { connector: CONNECTOR_CHOICE_SCHEMA, resultType: { type: 'string' }, ...CAPPED_SERIES_PROPERTIES },
    required: ['connector', 'resultType', 'series', 'truncated', 'totalSeries'],
  },
  async run({ args, orgId, services, authorize }) {
    const { connector: named, maxSeries, ...query } = args;
    const connector = await chooseConnector(services.db, orgId, 'metrics', named);
    await authorize('connectors:query', connectorResource(connector.uid));
    const result = await queryPrometheus(backendOf(connector, services), { ...query, type: query.type ?? 'instant' });
    return { connector: presentChoice(connector), resultType: result.resultType, ...capSeries(result.series, maxSeries) };
  },
});
