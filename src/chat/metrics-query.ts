/**
 * `metrics_query`: an instant or range query on a metrics connector (named, or the org's default),
 * needing `connectors:query` on it. An agent reads every series it gets, so the answer holds
 * at most DEFAULT_MAX_SERIES unless the call asks for more (up to MAX_SERIES), and says when
 * series were left out.
 */
import { queryPrometheus } from '../connectors/backends/prometheus.ts';
import { backendOf } from '../connectors/backends/request.ts';
import { connectorResource } from '../connectors/target.ts';
import { chooseConnector, presentChoice } from './connector-choice.ts';
import { defineTool } from './tool.ts';

export const DEFAULT_MAX_SERIES = 20;
export const MAX_SERIES = 1000;

export const metricsQuery = defineTool({
  write: false,
  args: {
    type: 'object',
    properties: {
      connector: { type: 'string', minLength: 1, maxLength: 190 },
      query: { type: 'string', minLength: 1, maxLength: 20_000 },
      type: { type: 'string', enum: ['instant', 'range'], default: 'instant' },
      time: { type: 'number' },
      start: { type: 'number' },
      end: { type: 'number' },
      step: { type: 'number', exclusiveMinimum: 0 },
      maxSeries: { type: 'integer', minimum: 1, maximum: MAX_SERIES },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async run({ args, orgId, services, authorize }) {
    const { connector: named, maxSeries = DEFAULT_MAX_SERIES, ...query } = args;
    const connector = await chooseConnector(services.db, orgId, 'metrics', named);
    await authorize('connectors:query', connectorResource(connector.uid));
    const result = await queryPrometheus(backendOf(connector, services), { ...query, type: query.type ?? 'instant' });
    return {
      connector: presentChoice(connector),
      resultType: result.resultType,
      series: result.series.slice(0, maxSeries),
      truncated: result.series.length > maxSeries,
      totalSeries: result.series.length,
    };
  },
});
