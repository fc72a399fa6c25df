/**
 * How the service authenticates to a backend: bearer token, basic auth, custom headers, mTLS.
 * A custom header may not set what belongs to the connection or to the caller: `Host`,
 * `Cookie`, hop-by-hop headers, the framing headers; `Authorization` comes from basic or bearer
 * auth (or a custom header when neither is set). Nothing of the caller's request is forwarded.
 */
import { createSecureContext } from 'node:tls';
import { BadRequestError } from '../errors.ts';

export interface OutboundTls {
  /** PEM client certificate and key (mTLS). */
  cert?: string;
  key?: string;
  /** PEM CA bundle that must have signed the backend's certificate (else the system's). */
  ca?: string;
  /** The name to verify the backend's certificate against, when it is not the URL's host. */
  serverName?: string;
}

export interface OutboundAuth {
  basic?: { user: string; password: string };
  bearerToken?: string;
  headers?: Array<{ name: string; value: string }>;
  tls?: OutboundTls;
}

const FORBIDDEN_HEADERS = new Set([
  'host',
  'cookie',
  'cookie2',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
]);

/** RFC 9110 token characters: anything else could split or smuggle a header. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Throws 400 naming the field when a custom header may not be sent; `field` names it for the caller. */
export function assertSendableHeader(name: string, value: string | undefined, field: string): void {
  if (!HEADER_NAME.test(name)) throw new BadRequestError(`${field}: "${name}" is not a valid header name`);
  if (FORBIDDEN_HEADERS.has(name.toLowerCase())) throw new BadRequestError(`${field}: the header ${name} cannot be set on a connector`);
  if (value !== undefined && !HEADER_VALUE.test(value)) throw new BadRequestError(`${field}: the header value contains a control character`);
}

/** Throws 400 when two auth methods would both set Authorization. */
export function assertOneAuthorization(auth: OutboundAuth): void {
  const sources = [
    auth.basic && 'basic auth',
    auth.bearerToken !== undefined && 'a bearer token',
    auth.headers?.some((header) => header.name.toLowerCase() === 'authorization') && 'a custom Authorization header',
  ].filter(Boolean);
  if (sources.length > 1)
    throw new BadRequestError(`only one of basic auth, a bearer token or a custom Authorization header may be set, got ${sources.join(' and ')}`);
}

/** The headers that authenticate to the backend. */
export function authHeaders(auth: OutboundAuth): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { name, value } of auth.headers ?? []) {
    assertSendableHeader(name, value, 'header');
    headers[name.toLowerCase()] = value;
  }
  if (auth.basic) headers.authorization = `Basic ${Buffer.from(`${auth.basic.user}:${auth.basic.password}`, 'utf8').toString('base64')}`;
  if (auth.bearerToken !== undefined) headers.authorization = `Bearer ${auth.bearerToken}`;
  return headers;
}

/** Throws 400 when the PEM material cannot make a TLS context (a wrong key for the certificate, not PEM at all). */
export function assertUsableTls(tls: OutboundTls, field: string): void {
  try {
    createSecureContext({ cert: tls.cert, key: tls.key, ca: tls.ca });
  } catch {
    throw new BadRequestError(`${field}: the certificate, key or CA is not valid PEM, or the key does not match the certificate`);
  }
}
