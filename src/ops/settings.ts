/**
 * What a `kubernetes` connector's settings must say, checked when it is saved:
 * - `jsonData.namespaces`: the namespaces it may read and act in (a non-empty list);
 * - `jsonData.kinds`: the resource kinds it may read and act on (src/ops/kinds.ts), never secrets;
 * - auth by bearer token (`secureJsonData.bearerToken`) or client certificate (`jsonData.tlsAuth`
 *   with `tlsClientCert` and `tlsClientKey`), optionally a CA (`tlsAuthWithCACert` + `tlsCACert`):
 *   the same fields and rules as every connector (src/connectors/settings.ts). Basic auth and
 *   custom headers are refused: the API server does not take them.
 * The URL must be https: a token is never sent in the clear.
 */
import { BadRequestError } from '../errors.ts';
import { connectorAuth, type Secrets } from '../connectors/settings.ts';
import type { OutboundAuth } from '../outbound/auth.ts';
import { kindOf, type KindInfo } from './kinds.ts';

export interface OpsSettings {
  namespaces: string[];
  kinds: KindInfo[];
}

/** RFC 1123 labels, as Kubernetes names namespaces. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MAX_ENTRIES = 100;

function stringList(jsonData: Record<string, unknown>, key: string): string[] {
  const value = jsonData[key];
  if (!Array.isArray(value) || value.length === 0 || !value.every((entry) => typeof entry === 'string'))
    throw new BadRequestError(`jsonData.${key} is required for a kubernetes connector: a non-empty list of names`);
  if (value.length > MAX_ENTRIES) throw new BadRequestError(`jsonData.${key} may name at most ${MAX_ENTRIES} entries`);
  return value as string[];
}

/** The settings and auth of a kubernetes connector; 400 naming the field when they cannot work. */
export function opsSettings(jsonData: Record<string, unknown>, secrets: Secrets): { settings: OpsSettings; auth: OutboundAuth } {
  const namespaces = stringList(jsonData, 'namespaces');
  for (const namespace of namespaces) {
    if (!NAMESPACE.test(namespace)) throw new BadRequestError(`jsonData.namespaces: ${JSON.stringify(namespace)} is not a namespace name`);
  }
  const kinds = [
    ...new Map(
      stringList(jsonData, 'kinds')
        .map((word) => kindOf(word, 'jsonData.kinds'))
        .map((info) => [info.name, info]),
    ).values(),
  ];
  const auth = connectorAuth(jsonData, secrets);
  if (auth.basic || auth.headers) throw new BadRequestError('a kubernetes connector authenticates with a bearer token or a client certificate only');
  if (auth.bearerToken === undefined && !auth.tls?.cert)
    throw new BadRequestError('a kubernetes connector needs secureJsonData.bearerToken, or jsonData.tlsAuth with a client certificate and key');
  return { settings: { namespaces: [...new Set(namespaces)], kinds }, auth };
}

/** Throws 400 unless the URL is https (checked with the other settings when a kubernetes connector is saved). */
export function assertOpsUrl(url: string): void {
  if (!url.startsWith('https://')) throw new BadRequestError('body.url of a kubernetes connector must start with https://');
}

/** The allowlisted kind a word names; 400 naming the allowlist otherwise. */
export function allowedKind(settings: OpsSettings, word: string, field: string): KindInfo {
  const info = kindOf(word, field);
  if (!settings.kinds.some((allowed) => allowed.name === info.name))
    throw new BadRequestError(`${field}: ${info.name} are not allowlisted on this connector; it allows ${settings.kinds.map((k) => k.name).join(', ')}`);
  return info;
}

/**
 * The namespace a namespaced kind is read or changed in: the one given when it is allowlisted,
 * else the only allowlisted one; undefined for cluster-wide kinds (nodes, namespaces).
 */
export function allowedNamespace(settings: OpsSettings, kind: KindInfo, given: string | undefined, field: string): string | undefined {
  if (!kind.namespaced) {
    if (given !== undefined) throw new BadRequestError(`${field}: ${kind.name} are cluster-wide and take no namespace`);
    return undefined;
  }
  const allowlist = settings.namespaces.join(', ');
  if (given === undefined) {
    if (settings.namespaces.length === 1) return settings.namespaces[0];
    throw new BadRequestError(`${field}: name a namespace, one of ${allowlist}`);
  }
  if (!settings.namespaces.includes(given))
    throw new BadRequestError(`${field}: namespace ${given} is not allowlisted on this connector; it allows ${allowlist}`);
  return given;
}
