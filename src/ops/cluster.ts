/**
 * A Kubernetes cluster as an ops connector reaches it: `@kubernetes/client-node`'s typed APIs
 * over an HTTP library that sends every request through src/outbound, so the address policy,
 * timeouts, size limits and the connector's auth (bearer token or client certificate, CA) apply
 * as to every other backend. The library is loaded on first use: it is large, and a service
 * without an ops connector never needs it.
 */
import type * as K8s from '@kubernetes/client-node';
import { BadGatewayError, BadRequestError, ConflictError, NotFoundError, ServiceError } from '../errors.ts';
import type { OutboundClient, OutboundRequest } from '../outbound/client.ts';
import type { Services } from '../services.ts';
import { jsonDataOf, secretsOf } from '../connectors/presenter.ts';
import type { ConnectorRow } from '../connectors/store.ts';
import { opsSettings, type OpsSettings } from './settings.ts';

let library: Promise<typeof K8s> | null = null;
const loadLibrary = () => (library ??= import('@kubernetes/client-node'));

/** What a step or a read is given: the typed APIs of one connector's cluster, and its settings. */
export interface Cluster {
  settings: OpsSettings;
  k8s: typeof K8s;
  core: K8s.CoreV1Api;
  apps: K8s.AppsV1Api;
  objects: K8s.KubernetesObjectApi;
  version: K8s.VersionApi;
  authorization: K8s.AuthorizationV1Api;
  /** A GET of a path the typed APIs do not cover (the metrics API): the parsed JSON. */
  getJson(path: string): Promise<unknown>;
  /**
   * A PATCH of an object's path (query included, e.g. `?dryRun=All`) with the body sent as it is:
   * KubernetesObjectApi.patch passes a patch through the library's models, which drop the fields
   * they do not know (a misspelt field would vanish instead of being refused by the cluster).
   */
  patchJson(path: string, body: unknown, contentType: K8s.PatchStrategy): Promise<unknown>;
}

type Method = OutboundRequest['method'];
const METHODS = new Set<Method>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Binds a kubernetes connector's URL and credentials (opened here, for this request only). */
export async function clusterOf(connector: ConnectorRow, services: Pick<Services, 'secretBox'> & { outbound: OutboundClient }): Promise<Cluster> {
  const k8s = await loadLibrary();
  const { settings, auth } = opsSettings(jsonDataOf(connector), secretsOf(connector, services.secretBox));
  const base = connector.url.replace(/\/+$/, '');
  const send = async (request: K8s.RequestContext): Promise<K8s.ResponseContext> => {
    const method = request.getHttpMethod() as Method;
    if (!METHODS.has(method)) throw new BadRequestError(`method ${method} is not used with a cluster`);
    const body = request.getBody();
    if (body !== undefined && typeof body !== 'string') throw new BadRequestError('a cluster request body must be JSON');
    const response = await services.outbound.request({ method, url: new URL(request.getUrl()), headers: request.getHeaders(), body, auth });
    return new k8s.ResponseContext(
      response.status,
      { 'content-type': response.contentType },
      { text: async () => response.body.toString('utf8'), binary: async () => response.body },
    );
  };
  const requestJson = async (request: OutboundRequest): Promise<unknown> => {
    const response = await services.outbound.request(request);
    const text = response.body.toString('utf8');
    if (response.status >= 300) throw clusterError(new k8s.ApiException(response.status, 'request failed', text, {}));
    return JSON.parse(text) as unknown;
  };
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(base, {}),
    httpApi: k8s.wrapHttpLibrary({ send }),
    authMethods: {},
  });
  return {
    settings,
    k8s,
    core: new k8s.CoreV1Api(configuration),
    apps: new k8s.AppsV1Api(configuration),
    objects: new k8s.KubernetesObjectApi(configuration),
    version: new k8s.VersionApi(configuration),
    authorization: new k8s.AuthorizationV1Api(configuration),
    getJson: (path) => requestJson({ method: 'GET', url: new URL(`${base}${path}`), auth }),
    patchJson: (path, body, contentType) =>
      requestJson({ method: 'PATCH', url: new URL(`${base}${path}`), headers: { 'content-type': contentType }, body: JSON.stringify(body), auth }),
  };
}

/** The message of the Status a cluster answers with a refusal (`{message, reason, code}`). */
function statusOf(body: unknown): { message?: string } {
  if (typeof body === 'string') {
    try {
      return statusOf(JSON.parse(body));
    } catch {
      return { message: body.slice(0, 300) };
    }
  }
  if (body && typeof body === 'object') return body as { message?: string };
  return {};
}

/**
 * A cluster's refusal in the service's terms: a missing object is a 404, an invalid change a 400,
 * a conflict a 409 (the cluster's own message); the connector's credentials refused or a failing
 * cluster is a 502, since the caller cannot fix it but the connector's owner can. Anything that
 * is not a cluster answer (the outbound client's errors) passes as it is.
 */
export function clusterError(error: unknown): Error {
  if (error instanceof ServiceError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'number' || !('body' in (error as object))) return new BadGatewayError('the cluster answered something that is not Kubernetes API');
  const message =
    statusOf((error as { body: unknown }).body)
      .message?.replace(/\s+/g, ' ')
      .trim() || `HTTP ${code}`;
  if (code === 404) return new NotFoundError(`the cluster has no such object: ${message}`);
  if (code === 400 || code === 422) return new BadRequestError(`the cluster refused the request: ${message}`);
  if (code === 409) return new ConflictError(`the cluster reports a conflict: ${message}`);
  if (code === 401) return new BadGatewayError("the cluster refused the connector's credentials (401): check its token or client certificate");
  if (code === 403) return new BadGatewayError(`the connector's cluster identity may not do this: ${message}`);
  return new BadGatewayError(`the cluster failed (${code}): ${message}`);
}

/** Runs a cluster call, turning its refusal into a service error (clusterError). */
export async function onCluster<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw clusterError(error);
  }
}
