/**
 * What the user routes answer (`/api/user…`, `/api/admin/users…`): one schema per presenter, so
 * a field a presenter gains or loses is a field the contract names (src/http/responses.ts).
 */
import { ORG_ROLES } from '../authz/types.ts';
import { listPageSchema } from '../http/responses.ts';

const isoDate = { type: 'string' } as const;
const nullableIsoDate = { type: ['string', 'null'] } as const;

/** What revoking a user's sessions answers: what happened and how many sessions ended. */
export const REVOKED_SESSIONS_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' }, revokedSessions: { type: 'integer', minimum: 0 } },
  required: ['message', 'revokedSessions'],
} as const;

/** presentUser (user.presenter.ts). */
export const USER_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    login: { type: 'string' },
    name: { type: 'string' },
    theme: { enum: ['light', 'dark'] },
    // '' for a user in no org
    orgId: { type: 'string' },
    isSvcAdmin: { type: 'boolean' },
    orgs: {
      type: 'array',
      items: {
        type: 'object',
        properties: { orgId: { type: 'string' }, name: { type: 'string' }, role: { enum: ORG_ROLES } },
        required: ['orgId', 'name', 'role'],
      },
    },
    authLabels: { type: 'array', items: { type: 'string' } },
    isDisabled: { type: 'boolean' },
    avatarUrl: { type: 'string' },
  },
  required: ['id', 'email', 'login', 'name', 'theme', 'orgId', 'isSvcAdmin', 'orgs', 'authLabels', 'isDisabled', 'avatarUrl'],
} as const;

/** readPreferences / writePreferences (preferences/store.ts) of a user: '' where nothing is chosen. */
export const USER_PREFERENCES_SCHEMA = {
  type: 'object',
  properties: {
    homeDashboardUid: { type: 'string' },
    timezone: { type: 'string' },
    theme: { enum: ['light', 'dark', ''] },
  },
  required: ['homeDashboardUid', 'timezone', 'theme'],
} as const;

/** presentSession (sessions.ts): the device a session was opened from, as the client reported it. */
export const SESSION_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    isCurrent: { type: 'boolean' },
    ip: { type: ['string', 'null'] },
    userAgent: { type: ['string', 'null'] },
    createdAt: isoDate,
    seenAt: isoDate,
    expiresAt: isoDate,
  },
  required: ['id', 'isCurrent', 'ip', 'userAgent', 'createdAt', 'seenAt', 'expiresAt'],
} as const;

/** presentAuthLink (auth-links.store.ts). */
export const AUTH_LINK_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    authModule: { type: 'string' },
    label: { type: 'string' },
    createdAt: isoDate,
    updatedAt: isoDate,
  },
  required: ['id', 'authModule', 'label', 'createdAt', 'updatedAt'],
} as const;

/** presentTokenMetadata (api-tokens.ts): never the key or its hash. */
export const TOKEN_METADATA_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    created: isoDate,
    expiration: nullableIsoDate,
    lastUsedAt: nullableIsoDate,
    isRevoked: { type: 'boolean' },
    hasExpired: { type: 'boolean' },
    secondsUntilExpiration: { type: ['integer', 'null'], minimum: 0 },
  },
  required: ['id', 'name', 'created', 'expiration', 'lastUsedAt', 'isRevoked', 'hasExpired', 'secondsUntilExpiration'],
} as const;

/** A new personal access token: the only answer that ever holds its key. */
export const NEW_TOKEN_SCHEMA = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, key: { type: 'string' } },
  required: ['id', 'name', 'key'],
} as const;

export const USER_PAGE_SCHEMA = listPageSchema('users', USER_SCHEMA);
export const SESSION_PAGE_SCHEMA = listPageSchema('sessions', SESSION_SCHEMA);
export const AUTH_LINK_PAGE_SCHEMA = listPageSchema('authLinks', AUTH_LINK_SCHEMA);
export const TOKEN_PAGE_SCHEMA = listPageSchema('tokens', TOKEN_METADATA_SCHEMA);
