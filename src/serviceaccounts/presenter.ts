/** Service accounts and legacy keys as the API shows them: whitelisted fields only. */
import { SERVICE_ACCOUNT_ROLES, type LegacyKeyRow, type ServiceAccountRow } from './store.ts';

export function presentServiceAccount(row: ServiceAccountRow) {
  return { id: row.id, name: row.name, login: row.login, orgId: row.org_id, role: row.role, isDisabled: !!row.is_disabled };
}

/** An account with the number of its live tokens (the listing and the single account). */
export function presentServiceAccountWithTokens(row: ServiceAccountRow, liveTokens: number) {
  return { ...presentServiceAccount(row), tokens: liveTokens };
}

export function presentLegacyKey(row: LegacyKeyRow) {
  return { id: row.id, name: row.name, role: row.role, expiration: row.expires_at === null ? null : new Date(Number(row.expires_at)).toISOString() };
}

const text = { type: 'string' } as const;
const role = { type: 'string', enum: SERVICE_ACCOUNT_ROLES } as const;
const accountProperties = { id: text, name: text, login: text, orgId: text, role, isDisabled: { type: 'boolean' } } as const;
const accountFields = ['id', 'name', 'login', 'orgId', 'role', 'isDisabled'] as const;

/** What presentServiceAccount answers. */
export const SERVICE_ACCOUNT_SCHEMA = { type: 'object', properties: accountProperties, required: accountFields } as const;

/** What presentServiceAccountWithTokens answers. */
export const SERVICE_ACCOUNT_WITH_TOKENS_SCHEMA = {
  type: 'object',
  properties: { ...accountProperties, tokens: { type: 'integer', minimum: 0 } },
  required: [...accountFields, 'tokens'],
} as const;

/** What presentLegacyKey answers. */
export const LEGACY_KEY_SCHEMA = {
  type: 'object',
  properties: { id: text, name: text, role, expiration: { type: ['string', 'null'] } },
  required: ['id', 'name', 'role', 'expiration'],
} as const;

/** A token or key just issued: the only answer that holds its key. */
export const ISSUED_KEY_SCHEMA = { type: 'object', properties: { id: text, name: text, key: text }, required: ['id', 'name', 'key'] } as const;

/** The account as the policy names it. */
export const serviceAccountResource = (id: string) => ({ kind: 'serviceaccounts', id });

/** The account as an audit entry names it. */
export const serviceAccountAuditTarget = (row: Pick<ServiceAccountRow, 'id' | 'name'>) => ({ type: 'service_account', id: row.id, name: row.name });
