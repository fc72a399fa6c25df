/**
 * What reaches a connector's backend: the connectivity test (needs write on the connector), a
 * query (needs query), and the read-only proxy for the backend's query paths (needs query).
 * Requests go through src/outbound with the connector's credentials only: the caller's cookie
 * and Authorization never reach a backend, and no upstream header comes back. The proxy passes the
 * answer on as it comes; a query's answer is decoded off the event loop.
 */
import { BadRequestError, NotFoundError, ServiceError } from '../errors.ts';
import { uidParams } from '../http/resource-uid.ts';
import { ERROR_SCHEMA } from '../http/responses.ts';
import { noteBackendFailure } from '../http/request-log.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import { clusterOf } from '../ops/cluster.ts';
import { testCluster } from '../ops/connectivity.ts';
import { proxyLokiUnion, type LogsQuery } from './backends/loki.ts';
import { logsApiOf, type RestrictedParts } from './backends/logs.ts';
import { INSTANT_BY_DEFAULT, LOG_QUERY_FIELDS, QUERY_FIELDS } from './query-fields.ts';
import { isPrometheusReadPath, queryPrometheus, testPrometheus, type ConnectivityResult } from './backends/prometheus.ts';
import { backendOf, type Backend } from './backends/request.ts';
import { jsonDataOf } from './presenter.ts';
import { connectivitySchema, QUERY_RESULT_SCHEMA } from './responses.ts';
import { logBackendOf } from './settings.ts';
import { announceRestriction, readLanguageOf, readRestriction, restrictedProxyParams, restrictedRead } from './label-rules.ts';
import { subjectOf } from '../http/subject.ts';
import type { ConnectorRow } from './store.ts';
import { connectorResource, findConnectorOrFail, type ConnectorType } from './target.ts';

interface BackendApi {
  test(backend: Backend): Promise<ConnectivityResult>;
  /** The JSON of the result; `restricted`: what label rules add beside the query's text (logs connectors). */
  query(backend: Backend, query: LogsQuery, restricted?: RestrictedParts): Promise<Buffer>;
  isReadPath(path: string): boolean;
}

/**
 * The most parameters a proxied read may carry, in its query or its form. Parsing a 1 MiB form of
 * 260,000 empty parameters into URLSearchParams takes 80–100 ms of the event loop, and again as
 * much to pass them on; a Prometheus client sends a handful, and a series read some tens of
 * `match[]`.
 */
export const MAX_PROXY_PARAMS = 1000;

/** `text` (a query string or a form) as parameters; a 400 past MAX_PROXY_PARAMS, counted before anything is parsed. */
function proxyParams(text: string): URLSearchParams {
  let separators = 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    separators += 1;
    if (separators >= MAX_PROXY_PARAMS) throw new BadRequestError(`give at most ${MAX_PROXY_PARAMS} parameters`);
  }
  return new URLSearchParams(text);
}

const METRICS_API: BackendApi = {
  test: testPrometheus,
  query(backend, query, restricted = {}) {
    if (restricted.streamFilter !== undefined || restricted.union) throw new Error('Prometheus takes the rules in the query alone');
    // Caught here rather than ignored: a caller who sets them expects them to matter.
    if (query.limit !== undefined || query.direction !== undefined) throw new BadRequestError('limit and direction apply to logs connectors only');
    return queryPrometheus(backend, query);
  },
  isReadPath: isPrometheusReadPath,
};

/**
 * A connector's backend and the API it speaks: Prometheus' for metrics, Loki's or VictoriaLogs'
 * for logs (`jsonData.backend`); changes and ops connectors have none here.
 */
function backendApiOf(connector: ConnectorRow, services: Services): { backend: Backend; api: BackendApi } {
  const type = connector.type as ConnectorType;
  const logs = type === 'logstore' ? logsApiOf(logBackendOf(jsonDataOf(connector))) : undefined;
  const api: BackendApi | undefined =
    type === 'tsmetrics' ? METRICS_API : logs && { ...logs, query: (backend, query, restricted) => logs.query(backend, query, {}, restricted) };
  if (connector.type === 'kubernetes')
    throw new BadRequestError('a kubernetes connector is read through POST /api/connectors/:uid/ops/read and changed through plans');
  if (!api) throw new BadRequestError('a changes connector has no backend: its entries are recorded through the API');
  return { backend: backendOf(connector, services), api };
}

function testBackend(connector: ConnectorRow, services: Services): Promise<ConnectivityResult> {
  const { backend, api } = backendApiOf(connector, services);
  return api.test(backend);
}

export const connectorBackendRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/connectors/:uid/test',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: "Tests the connectivity of a connector's backend: 200 when it answers, 400 saying why not.",
    // a failed test is a 400 of its own shape; a connector without a backend is the usual `{message}`
    responses: { 200: connectivitySchema('OK'), 400: { anyOf: [connectivitySchema('ERROR'), ERROR_SCHEMA] } },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('connectors:write', connectorResource(params.uid));
      const connector = await findConnectorOrFail(services.db, orgId, params.uid);
      const result = connector.type === 'kubernetes' ? await testCluster(await clusterOf(connector, services)) : await testBackend(connector, services);
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
        ...QUERY_FIELDS,
        type: INSTANT_BY_DEFAULT,
        ...LOG_QUERY_FIELDS,
      },
      required: ['query'],
      additionalProperties: false,
    },
    summary: "Runs an instant or range query on a connector's backend: series, or log streams from a logs connector.",
    responses: { 200: QUERY_RESULT_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('connectors:query', connectorResource(params.uid));
      const connector = await findConnectorOrFail(services.db, orgId, params.uid);
      const { backend, api } = backendApiOf(connector, services);
      const restriction = await readRestriction(services, subjectOf(principal), orgId, connector);
      const read = restrictedRead(restriction, readLanguageOf(connector), body.query, 'body.query');
      // the result's JSON as made off the event loop (backends/answer-pool.ts)
      ctx.body = await api.query(backend, { ...(body as LogsQuery), query: read.query }, read);
      announceRestriction(ctx, restriction);
      ctx.type = 'application/json';
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
      summary: "Forwards a read of the backend's query API (Prometheus', Loki's or VictoriaLogs') with the connector's credentials.",
      // the backend's own answer, passed on as it comes (its status too: errors are not `{message}` here)
      responses: { 200: { description: "the backend's answer" } },
      async handler({ ctx, params, principal, orgId, services, authorize }) {
        await authorize('connectors:query', connectorResource(params.uid));
        const connector = await findConnectorOrFail(services.db, orgId, params.uid);
        const { backend, api } = backendApiOf(connector, services);
        // The path as it was sent: one the router decoded (`%2F`, `%2e%2e`) is not one of them either.
        if (!api.isReadPath(params.path) || !ctx.path.endsWith(`/${params.path}`))
          throw new NotFoundError(`the proxy forwards only the backend's query paths, not ${params.path}`);
        const restriction = await readRestriction(services, subjectOf(principal), orgId, connector);
        // ?orgId chose the active org; it is the service's, not the backend's.
        const query = proxyParams(ctx.querystring);
        query.delete('orgId');
        const form = typeof ctx.request.body === 'string' ? proxyParams(ctx.request.body) : new URLSearchParams();
        const sent = restrictedProxyParams(restriction, readLanguageOf(connector), params.path, method === 'get' ? query : form);
        const call = { method: method === 'get' ? 'GET' : 'POST', path: params.path } as const;
        if ('union' in sent) {
          // Loki under rules no one query unites: one request per rule, the answers merged
          const merged = await proxyLokiUnion(backend, call, sent.union, sent.merge);
          announceRestriction(ctx, restriction);
          if (merged.status >= 500) noteBackendFailure(ctx, `backend answered ${merged.status}`);
          ctx.status = merged.status;
          ctx.type = merged.contentType.includes('json') ? 'application/json' : 'text/plain';
          ctx.body = merged.body;
          return;
        }
        const response = await backend.stream({ ...call, params: sent.params });
        announceRestriction(ctx, restriction);
        if (response.status >= 500) noteBackendFailure(ctx, `backend answered ${response.status}`);
        // Cut at the size limit or the total timeout, the answer ends without its last chunk: the client
        // sees it broken off. (A client that leaves ends it too, with an error that is nobody's failure.)
        response.body.once('error', (err) => err instanceof ServiceError && noteBackendFailure(ctx, err.message));
        ctx.status = response.status;
        ctx.type = response.contentType.includes('json') ? 'application/json' : 'text/plain';
        ctx.body = response.body;
      },
    });
  }
};
