/**
 * A request to a connector's backend through src/outbound, with the connector's auth. The
 * backend path is appended to the connector URL's own path (a Prometheus behind a prefix).
 * Nothing of the caller's request is sent: only the parameters a route chose.
 */
import type { OutboundClient, OutboundResponse } from '../../outbound/client.ts';
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

/** What an error text from a backend may be when it is shown: one line, bounded. */
const MAX_ERROR_CHARS = 500;

export interface Backend {
  send(call: BackendCall): Promise<OutboundResponse>;
  /** The backend's own error message, if it gave one, bounded, on one line, and without the connector's secrets. */
  errorText(response: OutboundResponse): string;
  /** `text` without the connector's secrets. */
  redact(text: string): string;
}

/** Binds a connector's URL and credentials (opened here, used for this request only). */
export function backendOf(connector: ConnectorRow, services: Pick<Services, 'secretBox'> & { outbound: OutboundClient }): Backend {
  const secrets = secretsOf(connector, services.secretBox);
  const auth = connectorAuth(jsonDataOf(connector), secrets);
  // Some backends echo what they refused (vmauth: `cannot find the provided auth token "Bearer …"`).
  const secretValues = Object.values(secrets).filter((value) => value.length >= 3);
  const redact = (text: string) => secretValues.reduce((shown, secret) => shown.split(secret).join('[redacted]'), text);
  const send = ({ method, path, params }: BackendCall) => {
    const url = new URL(connector.url);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
    const query = params?.toString() ?? '';
    if (method === 'GET') url.search = query;
    return services.outbound.request({
      method,
      url,
      auth,
      ...(method === 'POST' && { body: query, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    });
  };
  return { send, redact, errorText: (response) => boundedErrorText(redact(response.body.toString('utf8'))) };
}

/** The backend's own error message (Prometheus: `{"error": ...}`; else its text), bounded and on one line. */
function boundedErrorText(text: string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof parsed.error === 'string') message = parsed.error;
    else if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    // not JSON: the text itself
  }
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const line = message.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS)}…` : line;
}
