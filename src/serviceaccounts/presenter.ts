/** Service accounts and legacy keys as the API shows them: whitelisted fields only. */
import type { LegacyKeyRow, ServiceAccountRow } from './store.ts';

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

/** The account as the policy names it. */
export const serviceAccountResource = (id: string) => ({ kind: 'serviceaccounts', id });

/** The account as an audit entry names it. */
export const serviceAccountAuditTarget = (row: Pick<ServiceAccountRow, 'id' | 'name'>) => ({ type: 'service_account', id: row.id, name: row.name });
