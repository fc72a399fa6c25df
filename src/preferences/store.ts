/** Preferences of a user, an org or a team: home dashboard, timezone, theme. */
import type { Knex } from 'knex';

export type PreferenceOwnerKind = 'user' | 'org' | 'team';

export const preferencesSchema = {
  type: 'object',
  properties: {
    homeDashboardUid: { type: 'string', maxLength: 40 },
    timezone: { type: 'string', maxLength: 64 },
    theme: { type: 'string', enum: ['light', 'dark', ''] },
  },
  additionalProperties: false,
} as const;

export interface Preferences {
  homeDashboardUid: string;
  timezone: string;
  theme: '' | 'light' | 'dark';
}

export async function readPreferences(db: Knex, kind: PreferenceOwnerKind, ownerId: string): Promise<Preferences> {
  const row = await db('preferences').where({ owner_kind: kind, owner_id: ownerId }).first('home_dashboard_uid', 'timezone', 'theme');
  return { homeDashboardUid: row?.home_dashboard_uid ?? '', timezone: row?.timezone ?? '', theme: row?.theme ?? '' };
}

/** The theme each of several owners chose (absent: none chosen), for listings. */
export async function readThemes(db: Knex, kind: PreferenceOwnerKind, ownerIds: string[]): Promise<Map<string, string>> {
  if (ownerIds.length === 0) return new Map();
  const rows: Array<{ owner_id: string; theme: string }> = await db('preferences')
    .where('owner_kind', kind)
    .whereIn('owner_id', ownerIds)
    .select('owner_id', 'theme');
  return new Map(rows.map((row) => [row.owner_id, row.theme]));
}

/** Replaces all three (Grafana's PUT: an omitted field goes back to its default). */
export async function writePreferences(db: Knex, kind: PreferenceOwnerKind, ownerId: string, prefs: Partial<Preferences>, now: number): Promise<Preferences> {
  const next: Preferences = { homeDashboardUid: prefs.homeDashboardUid ?? '', timezone: prefs.timezone ?? '', theme: prefs.theme ?? '' };
  await db('preferences')
    .insert({ owner_kind: kind, owner_id: ownerId, home_dashboard_uid: next.homeDashboardUid, timezone: next.timezone, theme: next.theme, updated_at: now })
    .onConflict(['owner_kind', 'owner_id'])
    .merge(['home_dashboard_uid', 'timezone', 'theme', 'updated_at']);
  return next;
}

/** Deletes the preferences of owners going away (an id, ids, or a subquery selecting ids): no foreign key does it. */
export async function deletePreferences(db: Knex, kind: PreferenceOwnerKind, owners: string | string[] | Knex.QueryBuilder): Promise<void> {
  await db('preferences')
    .where('owner_kind', kind)
    .whereIn('owner_id', typeof owners === 'string' ? [owners] : owners)
    .delete();
}
