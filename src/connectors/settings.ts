/**
 * A connector's settings as Grafana's data sources name them, turned into how the service
 * authenticates to the backend (src/outbound):
 * - basic auth: `jsonData.basicAuthUser` + `secureJsonData.basicAuthPassword`
 * - bearer token: `secureJsonData.bearerToken`
 * - custom headers: `jsonData.httpHeaderName<N>` + `secureJsonData.httpHeaderValue<N>`
 * - mTLS: `jsonData.tlsAuth` + `secureJsonData.tlsClientCert` and `tlsClientKey` (PEM);
 *   `jsonData.tlsAuthWithCACert` + `secureJsonData.tlsCACert`; `jsonData.serverName`
 * Every rule is checked when a connector is saved, so a bad setting is a 400 then, not later.
 * `${...}` in a value is sent as written: nothing is expanded.
 */
import { BadRequestError } from '../errors.ts';
import { assertOneAuthorization, assertSendableHeader, assertUsableTls, type OutboundAuth } from '../outbound/auth.ts';

export type Secrets = Record<string, string>;

const HEADER_NAME_KEY = /^httpHeaderName([1-9]\d{0,2})$/;
const HEADER_VALUE_KEY = /^httpHeaderValue([1-9]\d{0,2})$/;

function optionalString(jsonData: Record<string, unknown>, key: string): string | undefined {
  const value = jsonData[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new BadRequestError(`jsonData.${key} must be a string`);
  return value;
}

function flag(jsonData: Record<string, unknown>, key: string): boolean {
  const value = jsonData[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new BadRequestError(`jsonData.${key} must be true or false`);
  return value;
}

function requiredSecret(secrets: Secrets, key: string, because: string): string {
  const value = secrets[key];
  if (!value) throw new BadRequestError(`secureJsonData.${key} is required ${because}`);
  return value;
}

/** The auth of a connector; throws 400 naming the field when the settings cannot work. */
export function connectorAuth(jsonData: Record<string, unknown>, secrets: Secrets): OutboundAuth {
  const auth: OutboundAuth = {};
  const basicAuthUser = optionalString(jsonData, 'basicAuthUser');
  if (basicAuthUser !== undefined) {
    if (basicAuthUser.includes(':')) throw new BadRequestError('jsonData.basicAuthUser must not contain ":"');
    auth.basic = { user: basicAuthUser, password: requiredSecret(secrets, 'basicAuthPassword', 'with jsonData.basicAuthUser') };
  }
  if (secrets.bearerToken) {
    assertSendableHeader('Authorization', `Bearer ${secrets.bearerToken}`, 'secureJsonData.bearerToken');
    auth.bearerToken = secrets.bearerToken;
  }
  const headers: NonNullable<OutboundAuth['headers']> = [];
  for (const [key, name] of Object.entries(jsonData)) {
    const index = HEADER_NAME_KEY.exec(key)?.[1];
    if (!index) continue;
    if (typeof name !== 'string') throw new BadRequestError(`jsonData.${key} must be a string`);
    const value = secrets[`httpHeaderValue${index}`] ?? '';
    assertSendableHeader(name, value, `jsonData.${key}`);
    if (headers.some((header) => header.name.toLowerCase() === name.toLowerCase()))
      throw new BadRequestError(`jsonData.${key}: the header ${name} is set twice`);
    headers.push({ name, value });
  }
  for (const key of Object.keys(secrets)) {
    const index = HEADER_VALUE_KEY.exec(key)?.[1];
    if (index && jsonData[`httpHeaderName${index}`] === undefined) throw new BadRequestError(`secureJsonData.${key} has no jsonData.httpHeaderName${index}`);
  }
  if (headers.length > 0) auth.headers = headers;
  assertOneAuthorization(auth);
  const tls: NonNullable<OutboundAuth['tls']> = {};
  if (flag(jsonData, 'tlsAuth')) {
    tls.cert = requiredSecret(secrets, 'tlsClientCert', 'with jsonData.tlsAuth');
    tls.key = requiredSecret(secrets, 'tlsClientKey', 'with jsonData.tlsAuth');
  }
  if (flag(jsonData, 'tlsAuthWithCACert')) tls.ca = requiredSecret(secrets, 'tlsCACert', 'with jsonData.tlsAuthWithCACert');
  const serverName = optionalString(jsonData, 'serverName');
  if (serverName) tls.serverName = serverName;
  if (Object.keys(tls).length > 0) {
    assertUsableTls(tls, 'secureJsonData');
    auth.tls = tls;
  }
  return auth;
}

/**
 * The secrets after a save: those given replace the stored ones, an empty string removes one,
 * the rest are kept (a client that does not send a secret again keeps it).
 */
export function mergeSecrets(stored: Secrets, given: Secrets | undefined): Secrets {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** The log stores a `logstore` connector speaks, chosen by `jsonData.backend` (Loki unless set). */
export const LOG_BACKENDS = ['loki', 'victorialogs'] as const;
export type LogBackend = (typeof LOG_BACKENDS)[number];

/** A logs connector's backend; 400 on another value. */
export function logBackendOf(jsonData: Record<string, unknown>): LogBackend {
  const value = jsonData.backend;
  if (value === undefined || value === null || value === '') return 'loki';
  if (typeof value !== 'string' || !(LOG_BACKENDS as readonly string[]).includes(value))
    throw new BadRequestError(`jsonData.backend must be one of ${LOG_BACKENDS.join(', ')}`);
  return value as LogBackend;
}

/** `jsonData.backend` chooses a logs connector's store: on a connector of another type it would mean nothing, so it is refused. */
export function assertNoBackendChoice(jsonData: Record<string, unknown>, type: string): void {
  if (jsonData.backend !== undefined) throw new BadRequestError(`jsonData.backend applies to logstore connectors only, not ${type}`);
}
