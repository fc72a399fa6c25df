/**
 * What reaches a connector's backend: the connectivity test (needs write on the connector), a
 * query (needs query), and the read-only proxy for the backend's query paths (needs query).
 * Requests go through src/outbound with the connector's credentials only: the caller's cookie
 * and Authorization never reach a backend, and no upstream header comes back.
 */
import { BadRequestError, NotFoundError } from '../errors.ts';
import { uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import { isPrometheusReadPath, queryPrometheus, testPrometheus, type MetricsQuery } from './backends/prometheus.ts';
import { backendOf } from './backends/request.ts';
import type { ConnectorRow } from './store.ts';
import { connectorResource, findConnectorOrFail } from './target.ts';

/** The metrics backend of a connector; the other types have none here yet (logs) or at all (changes). */
function metricsBackend(connector: ConnectorRow, services: Services) {
  if (connector.type === 'changes') throw new BadRequestError('a changes connector has no backend: its entries are recorded through the API');
  if (connector.type !== 'tsmetrics') throw new BadRequestError(`connectors of type ${connector.type} cannot reach their backend yet`);
  return backendOf(connector, services);
}

export const connectorBackendRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/connectors/:uid/test',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('connectors:write', connectorResource(params.uid));
      const connector = await findConnectorOrFail(services.db, orgId, params.uid);
      const result = await testPrometheus(metricsBackend(connector, services));
      // As Grafana's health check: a failed test is a 400 whose body says why.
      ctx.status = result.status === 'OK' ? 200 : 400;
      ctx.body = result;
    },
  });

  routes.add({
    method: 'post',
    path: '/api/connectors/:uid/query',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 20_000 },
        type: { type: 'string', enum: ['instant', 'range'], default: 'instant' },
        time: { type: 'number' },
        start: { type: 'number' },
        end: { type: 'number' },
        step: { type: 'number', exclusiveMinimum: 0 },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async handler({ ctx, params, body, orgId, services, authorize }) {
      await authorize('connectors:query', connectorResource(params.uid));
      const connector = await findConnectorOrFail(services.db, orgId, params.uid);
      ctx.body = await queryPrometheus(metricsBackend(connector, services), body as MetricsQuery);
    },
  });

  for (const method of ['get', 'post'] as const) {
    routes.add({
      method,
      path: '/api/connectors/proxy/uid/:uid/*path',
      access: 'authenticated',
      level: 'org',
      params: {
        type: 'object',
        properties: { uid: uidParams.properties.uid, path: { type: 'string', maxLength: 200 } },
        required: ['uid', 'path'],
      },
      async handler({ ctx, params, orgId, services, authorize }) {
        await authorize('connectors:query', connectorResource(params.uid));
        const connector = await findConnectorOrFail(services.db, orgId, params.uid);
        const backend = metricsBackend(connector, services);
        if (!isPrometheusReadPath(params.path)) throw new NotFoundError(`the proxy forwards only the backend's query paths, not ${params.path}`);
        // ?orgId chose the active org; it is the service's, not the backend's.
        const query = new URLSearchParams(ctx.querystring);
        query.delete('orgId');
        const form = typeof ctx.request.body === 'string' ? new URLSearchParams(ctx.request.body) : new URLSearchParams();
        const response = await backend.send(
          method === 'get' ? { method: 'GET', path: params.path, params: query } : { method: 'POST', path: params.path, params: form },
        );
        ctx.status = response.status;
        ctx.type = response.contentType.includes('json') ? 'application/json' : 'text/plain';
        // A refusal may echo what was sent (a token): errors pass without the connector's secrets.
        ctx.body = response.status < 300 ? response.body : backend.redact(response.body.toString('utf8'));
      },
    });
  }
};
