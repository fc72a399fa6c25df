/** The user profile as the API shows it: a whitelist, so no hash or flag of ours leaks. */
import { createHash } from 'node:crypto';
import type { OrgRole } from '../authz/types.ts';
import { LRUCache } from 'lru-cache';
import type { UserRow } from './users.store.ts';

/** Bounds the avatar addresses remembered: the MD5 was a tenth of `GET /api/user`'s own work. */
const MAX_REMEMBERED_AVATARS = 10_000;
const avatars = new LRUCache<string, string>({ max: MAX_REMEMBERED_AVATARS });

function gravatarOf(identity: string): string {
  let url = avatars.get(identity);
  if (url === undefined) {
    url = `https://secure.gravatar.com/avatar/${createHash('md5').update(identity).digest('hex')}?s=128&d=identicon`;
    avatars.set(identity, url);
  }
  return url;
}

export function avatarUrl(email: string | null, login: string): string {
  return gravatarOf((email ?? login).trim().toLowerCase());
}

export function presentUser(user: UserRow, orgs: Array<{ orgId: string; name: string; role: OrgRole }>, extra: { theme?: string; authLabels?: string[] } = {}) {
  const defaultOrg = orgs.find((org) => org.orgId === user.default_org_id) ?? orgs[0];
  return {
    id: user.id,
    email: user.email ?? '',
    login: user.login,
    name: user.name,
    theme: extra.theme === 'light' ? 'light' : 'dark',
    orgId: defaultOrg?.orgId ?? '',
    isSvcAdmin: !!user.is_svc_admin,
    orgs,
    authLabels: extra.authLabels ?? [],
    isDisabled: !!user.is_disabled,
    avatarUrl: avatarUrl(user.email, user.login),
  };
}
