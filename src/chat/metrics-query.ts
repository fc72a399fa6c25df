/**
 * `metrics_query`: an instant or range query on a metrics connector (named, or the org's default),
 * needing `connectors:query` on it and restricted by the caller's label rules on it (connectors/label-rules.ts);
 * at most 20 series unless the call asks otherwise (series-cap.ts).
 */
import type { CappedSeries } from '../connectors/backends/answers.ts';
import { queryPrometheus } from '../connectors/backends/prometheus.ts';
import { INSTANT_BY_DEFAULT, QUERY_FIELDS } from '../connectors/query-fields.ts';
import { backendOf } from '../connectors/backends/request.ts';
import { connectorResource } from '../connectors/target.ts';
import { readRestriction, restrictedRead } from '../connectors/label-rules.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { CAPPED_SERIES_PROPERTIES, DEFAULT_MAX_SERIES, maxSeriesSchema } from './series-cap.ts';
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
  async run({ args, orgId, services, subject, authorize }) {
    const { connector: named, maxSeries, ...query } = args;
    const connector = await chooseConnector(services.db, orgId, 'metrics', named);
    await authorize('connectors:query', connectorResource(connector.uid));
    // the caller's label rules bind the agent it drives as they bind the caller
    const restriction = await readRestriction(services, subject, orgId, connector);
    const json = await queryPrometheus(
      backendOf(connector, services),
      { ...query, query: restrictedRead(restriction, 'promql', query.query, 'body.args.query').query, type: query.type ?? 'instant' },
      { maxSeries: maxSeries ?? DEFAULT_MAX_SERIES },
    );
    return { connector: presentChoice(connector), ...(JSON.parse(json.toString('utf8')) as CappedSeries) };
  },
});
