/** Orgs and their members as the API shows them: whitelists, so no column of ours leaks. */
import { avatarUrl } from '../identity/user.presenter.ts';
import type { MemberRow, OrgDetailsRow, OrgRow } from './store.ts';

export const ADDRESS_FIELDS = ['address1', 'address2', 'city', 'zipCode', 'state', 'country'] as const;
export type OrgAddress = Record<(typeof ADDRESS_FIELDS)[number], string>;

/** Every field present, '' when unset: Grafana's address shape. */
export function normalizeAddress(input: Partial<OrgAddress> | null | undefined): OrgAddress {
  return Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, typeof input?.[field] === 'string' ? input[field]!.trim() : ''])) as OrgAddress;
}

function parseAddress(stored: string | null): OrgAddress {
  if (!stored) return normalizeAddress(null);
  try {
    return normalizeAddress(JSON.parse(stored) as Partial<OrgAddress>);
  } catch {
    return normalizeAddress(null);
  }
}

export const presentOrgSummary = (org: OrgRow) => ({ id: org.id, name: org.name });

export function presentOrg(org: OrgDetailsRow) {
  return { id: org.id, name: org.name, address: parseAddress(org.address), billingEmail: org.billing_email ?? '' };
}

/** An org user as a picker shows it (`/api/org/users/lookup`): Grafana's lookup fields plus the name. */
export function presentOrgUserLookup(member: MemberRow) {
  return { userId: member.user_id, login: member.login, name: member.name, avatarUrl: avatarUrl(member.email, member.login) };
}

export function presentMember(member: MemberRow) {
  const seen = [member.user_seen_at, member.session_seen_at].filter((value) => value !== null).map(Number);
  return {
    userId: member.user_id,
    login: member.login,
    email: member.email ?? '',
    name: member.name,
    role: member.role,
    avatarUrl: avatarUrl(member.email, member.login),
    lastSeenAt: seen.length > 0 ? new Date(Math.max(...seen)).toISOString() : null,
  };
}
