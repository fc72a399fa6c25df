/**
 * Connectors as the API shows them, in Grafana's data-source field names. Credentials never
 * leave: `secureJsonFields` says which secrets are set, nothing more.
 */
import type { SecretBox } from '../crypto/secretbox.ts';
import type { Secrets } from './settings.ts';
import type { ConnectorRow } from './store.ts';

export function jsonDataOf(connector: ConnectorRow): Record<string, unknown> {
  return connector.json_data ? (JSON.parse(connector.json_data) as Record<string, unknown>) : {};
}

export function secretsOf(connector: ConnectorRow, box: SecretBox): Secrets {
  return connector.secure_json_data ? (JSON.parse(box.open(connector.secure_json_data)) as Secrets) : {};
}

/** Sealed as one value (a fresh nonce each save); null when there is no secret. */
export function sealSecrets(secrets: Secrets, box: SecretBox): string | null {
  return Object.keys(secrets).length > 0 ? box.seal(JSON.stringify(secrets)) : null;
}

export function presentConnector(connector: ConnectorRow, secretFields: string[]) {
  return {
    uid: connector.uid,
    orgId: connector.org_id,
    name: connector.name,
    type: connector.type,
    signalType: connector.signal_type,
    url: connector.url,
    access: connector.access,
    isDefault: connector.default_for !== null,
    jsonData: jsonDataOf(connector),
    secureJsonFields: Object.fromEntries(secretFields.sort().map((field) => [field, true])),
    version: connector.version,
    readOnly: false,
    created: new Date(Number(connector.created_at)).toISOString(),
    updated: new Date(Number(connector.updated_at)).toISOString(),
  };
}

/** What presentConnector sends: jsonData is the connector's own (free-form), secureJsonFields only names the secrets set. */
export const CONNECTOR_SCHEMA = {
  type: 'object',
  properties: {
    uid: { type: 'string' },
    orgId: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string' },
    signalType: { type: 'string' },
    url: { type: 'string', description: 'empty for a changes connector' },
    access: { type: 'string' },
    isDefault: { type: 'boolean' },
    jsonData: { type: 'object' },
    secureJsonFields: { type: 'object', additionalProperties: { const: true } },
    version: { type: 'integer' },
    readOnly: { type: 'boolean' },
    created: { type: 'string' },
    updated: { type: 'string' },
  },
  required: [
    'uid',
    'orgId',
    'name',
    'type',
    'signalType',
    'url',
    'access',
    'isDefault',
    'jsonData',
    'secureJsonFields',
    'version',
    'readOnly',
    'created',
    'updated',
  ],
} as const;
