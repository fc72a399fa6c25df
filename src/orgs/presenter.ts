/** Orgs and their members as the API shows them: whitelists, so no column of ours leaks. */
import { avatarUrl } from '../identity/user.presenter.ts';
import { ORG_ROLES } from '../authz/types.ts';
import type { MemberRow, OrgDetailsRow, OrgRow } from './store.ts';
import { listPageSchema } from '../http/responses.ts';

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

/** Preferences of an org or a team as src/preferences/store.ts reads them: every field, '' when unset. */
export const PREFERENCES_SCHEMA = {
  type: 'object',
  properties: {
    homeDashboardUid: { type: 'string' },
    timezone: { type: 'string' },
    theme: { enum: ['', 'light', 'dark'] },
  },
  required: ['homeDashboardUid', 'timezone', 'theme'],
} as const;

export const ORG_SUMMARY_SCHEMA = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'] } as const;

export const ORGS_PAGE_SCHEMA = listPageSchema('orgs', ORG_SUMMARY_SCHEMA);

export const presentOrgSummary = (org: OrgRow) => ({ id: org.id, name: org.name });

export const ORG_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    address: {
      type: 'object',
      properties: {
        address1: { type: 'string' },
        address2: { type: 'string' },
        city: { type: 'string' },
        zipCode: { type: 'string' },
        state: { type: 'string' },
        country: { type: 'string' },
      },
      required: ADDRESS_FIELDS,
    },
    billingEmail: { type: 'string' },
  },
  required: ['id', 'name', 'address', 'billingEmail'],
} as const;

export function presentOrg(org: OrgDetailsRow) {
  return { id: org.id, name: org.name, address: parseAddress(org.address), billingEmail: org.billing_email ?? '' };
}

export const ORG_USER_LOOKUP_SCHEMA = {
  type: 'object',
  properties: { userId: { type: 'string' }, login: { type: 'string' }, name: { type: 'string' }, avatarUrl: { type: 'string' } },
  required: ['userId', 'login', 'name', 'avatarUrl'],
} as const;

/** An org user as a picker shows it (`/api/org/users/lookup`): Grafana's lookup fields plus the name. */
export function presentOrgUserLookup(member: MemberRow) {
  return { userId: member.user_id, login: member.login, name: member.name, avatarUrl: avatarUrl(member.email, member.login) };
}

export const ORG_MEMBER_SCHEMA = {
  type: 'object',
  properties: {
    userId: { type: 'string' },
    login: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { enum: ORG_ROLES },
    avatarUrl: { type: 'string' },
    lastSeenAt: { type: ['string', 'null'] },
  },
  required: ['userId', 'login', 'email', 'name', 'role', 'avatarUrl', 'lastSeenAt'],
} as const;

export const ORG_MEMBERS_PAGE_SCHEMA = listPageSchema('orgUsers', ORG_MEMBER_SCHEMA);

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
