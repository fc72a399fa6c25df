/**
 * The platform settings the setup wizard collects (LLM, default connectors, notifications).
 * The LLM API key is sealed with SECRET_KEY and never returned: responses say only whether
 * one is set.
 */
import type { SecretBox } from '../crypto/secretbox.ts';
import type { Infer } from '../http/guard.ts';
import { emailSchema } from '../http/schemas.ts';

const url = { type: 'string', maxLength: 2048, pattern: '^https?://' } as const;

export const platformSettingsSchema = {
  type: 'object',
  properties: {
    llm: {
      type: 'object',
      properties: {
        provider: { type: 'string', minLength: 1, maxLength: 100 },
        model: { type: 'string', maxLength: 200 },
        baseUrl: url,
        apiKey: { type: 'string', maxLength: 4096 },
      },
      additionalProperties: false,
    },
    connectors: {
      type: 'object',
      properties: { metricsUrl: url, logsUrl: url },
      additionalProperties: false,
    },
    notifications: {
      type: 'object',
      properties: {
        email: emailSchema,
        webhookUrl: url,
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export type PlatformSettings = Infer<typeof platformSettingsSchema>;

export interface StoredPlatformSettings {
  llm?: { provider?: string; model?: string; baseUrl?: string; apiKeySealed?: string };
  connectors?: PlatformSettings['connectors'];
  notifications?: PlatformSettings['notifications'];
}

/** Merges a wizard submission over what is stored; an omitted API key keeps the stored one. */
export function sealPlatformSettings(input: PlatformSettings, previous: StoredPlatformSettings | null, box: SecretBox): StoredPlatformSettings {
  const next: StoredPlatformSettings = { ...previous };
  if (input.llm) {
    const { apiKey, ...rest } = input.llm;
    const apiKeySealed = apiKey ? box.seal(apiKey) : apiKey === '' ? undefined : previous?.llm?.apiKeySealed;
    next.llm = { ...rest, ...(apiKeySealed ? { apiKeySealed } : {}) };
  }
  if (input.connectors) next.connectors = input.connectors;
  if (input.notifications) next.notifications = input.notifications;
  return next;
}

/** What presentPlatformSettings shows: a section never submitted is null; the API key only as `apiKeySet`. */
export const PRESENTED_PLATFORM_SETTINGS_SCHEMA = {
  type: 'object',
  properties: {
    llm: {
      type: ['object', 'null'],
      properties: { provider: { type: 'string' }, model: { type: 'string' }, baseUrl: { type: 'string' }, apiKeySet: { type: 'boolean' } },
      required: ['provider', 'model', 'baseUrl', 'apiKeySet'],
    },
    connectors: { type: ['object', 'null'], properties: { metricsUrl: { type: 'string' }, logsUrl: { type: 'string' } } },
    notifications: { type: ['object', 'null'], properties: { email: { type: 'string' }, webhookUrl: { type: 'string' } } },
  },
  required: ['llm', 'connectors', 'notifications'],
} as const;

export function presentPlatformSettings(stored: StoredPlatformSettings | null) {
  const llm = stored?.llm;
  return {
    llm: llm ? { provider: llm.provider ?? '', model: llm.model ?? '', baseUrl: llm.baseUrl ?? '', apiKeySet: !!llm.apiKeySealed } : null,
    connectors: stored?.connectors ?? null,
    notifications: stored?.notifications ?? null,
  };
}
