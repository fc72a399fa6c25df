/**
 * An org's team list without a search, kept per instance (src/db/read-cache.ts): a team picker
 * asks it again and again, and reading it cost up to three queries a request (about 95 µs of
 * CPU for the one query of an org without teams, on SQLite under load). Any write on this instance
 * to teams or their members empties it; another instance's write shows within
 * PRINCIPAL_CACHE_TTL_MS. A search still reads the database, and so does the list of an org with
 * more teams than are worth keeping.
 */
import { ReadCache } from '../db/read-cache.ts';
import type { WriteWatches } from '../db/write-watch.ts';
import type { ListedTeam } from './store.ts';

/** Orgs whose lists are kept at once, and the most teams a kept list holds. */
const MAX_KEPT_ORGS = 256;
const MAX_KEPT_TEAMS = 1000;

export function createTeamListCache(writes: WriteWatches, ttlMs: number): ReadCache<ListedTeam[]> {
  // with the tables whose deletes cascade into them (an org's teams, a user's memberships)
  const watch = writes.watch({ teams: [], team_members: [], orgs: [], users: ['last_seen_at'] });
  return new ReadCache<ListedTeam[]>(watch, ttlMs, { maxEntries: MAX_KEPT_ORGS, keep: (teams) => teams.length <= MAX_KEPT_TEAMS });
}
