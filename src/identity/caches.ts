/**
 * What an authenticated request reads about its caller, kept per instance (src/db/read-cache.ts)
 * so that it reads no SQL for it: the rows behind a session or an API token, the orgs the caller
 * belongs to, and the profile `GET /api/user` shows. Each cache is emptied by any write, on this
 * instance, to the tables it is made of; other instances' writes show within
 * PRINCIPAL_CACHE_TTL_MS. Bookkeeping columns (when a session or token was last used) change
 * nothing a cache holds, so writing them empties nothing.
 */
import type { OrgRole } from '../authz/types.ts';
import { ReadCache } from '../db/read-cache.ts';
import type { WriteWatches } from '../db/write-watch.ts';
import type { ApiTokenRow } from './api-tokens.store.ts';
import type { SessionRow } from './sessions.store.ts';
import type { UserRow } from './users.store.ts';

export interface CurrentProfile {
  user: UserRow;
  orgs: Array<{ orgId: string; name: string; role: OrgRole }>;
  theme: string | undefined;
  authLabels: string[];
}

export interface IdentityCaches {
  /** By the SHA-256 of the session token. */
  sessions: ReadCache<{ session: SessionRow; user: UserRow }>;
  /** By the SHA-256 of the token. */
  tokens: ReadCache<{ token: ApiTokenRow; owner: UserRow }>;
  /** By user id: the orgs the user or service account belongs to, the one it joined first first. */
  memberships: ReadCache<string[]>;
  /** By user id. */
  profiles: ReadCache<CurrentProfile>;
}

export function createIdentityCaches(writes: WriteWatches, ttlMs: number): IdentityCaches {
  const watches = {
    // with the tables whose deletes cascade into them (an org's memberships and tokens, a user's sessions)
    credentials: writes.watch({ users: ['last_seen_at'], sessions: ['last_seen_at'], api_tokens: ['last_used_at'], orgs: [] }),
    memberships: writes.watch({ org_members: [], orgs: [], users: ['last_seen_at'] }),
    profiles: writes.watch({ users: ['last_seen_at'], org_members: [], orgs: [], preferences: [], user_auth_links: [] }),
  };
  return {
    sessions: new ReadCache(watches.credentials, ttlMs),
    tokens: new ReadCache(watches.credentials, ttlMs),
    memberships: new ReadCache(watches.memberships, ttlMs),
    profiles: new ReadCache(watches.profiles, ttlMs),
  };
}
