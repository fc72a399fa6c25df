/**
 * A request to a connector's backend through src/outbound, with the connector's auth. The
 * backend path is appended to the connector URL's own path (a Prometheus behind a prefix).
 * Nothing of the caller's request is sent: only the parameters a route chose. What comes back
 * has no credential of the connector in it (src/outbound/redaction.ts).
 */
import type { OutboundClient, OutboundRequest, OutboundResponse, OutboundStream } from '../../outbound/client.ts';
import type { Services } from '../../services.ts';
import { jsonDataOf, secretsOf } from '../presenter.ts';
import { connectorAuth } from '../settings.ts';
import type { ConnectorRow } from '../store.ts';

export interface BackendCall {
  method: 'GET' | 'POST';
  /** Below the connector URL, without a leading slash: `api/v1/labels`. */
  path: string;
  params?: URLSearchParams;
}

export interface Backend {
  /** The whole answer. */
  send(call: BackendCall): Promise<OutboundResponse>;
  /** The answer's status and headers, its body as it comes (the proxy). */
  stream(call: BackendCall): Promise<OutboundStream>;
}

/** Binds a connector's URL and credentials (opened here, used for this request only). */
export function backendOf(connector: ConnectorRow, services: Pick<Services, 'secretBox'> & { outbound: OutboundClient }): Backend {
  const auth = connectorAuth(jsonDataOf(connector), secretsOf(connector, services.secretBox));
  const requestOf = ({ method, path, params }: BackendCall): OutboundRequest => {
    const url = new URL(connector.url);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
    const query = params?.toString() ?? '';
    if (method === 'GET') url.search = query;
    return { method, url, auth, ...(method === 'POST' && { body: query, headers: { 'content-type': 'application/x-www-form-urlencoded' } }) };
  };
  return {
    send: (call) => services.outbound.request(requestOf(call)),
    stream: (call) => services.outbound.stream(requestOf(call)),
  };
}
