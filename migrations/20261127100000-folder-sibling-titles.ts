import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Folder titles are unique among siblings, ignoring case. A unique index enforces it on
 * (org_id, parent_key, title_key): `parent_key` is the parent's uid, '' at the root (a unique
 * index does not compare NULLs, so parent_uid cannot serve), and `title_key` the lower-cased title.
 *
 * A database may already hold siblings of one title. Of each such group the folder created first
 * keeps its title; each later one is renamed "<title> (2)", "(3)"… (the first number free among
 * its siblings) and the rename is audited as `folder.updated` by the system, with the old title.
 */

const TITLE_MAX = 190;
/** Rows per INSERT, within SQLite's limit on bound values. */
const INSERT_CHUNK = 500;

interface FolderRow {
  org_id: string;
  uid: string;
  title: string;
  parent_uid: string | null;
}

const titleKey = (title: string) => title.toLowerCase();

/** `<title> (n)` within the column's length: the title is cut, never the number. */
function numbered(title: string, n: number): string {
  const suffix = ` (${n})`;
  return `${title.slice(0, TITLE_MAX - suffix.length).trimEnd()}${suffix}`;
}

/** An audit id of the writer's shape (`aud_` + time, sequence, randomness), so entries sort in time. */
function auditId(timestamp: number, sequence: number): string {
  return `aud_${timestamp.toString(36).padStart(9, '0')}${(sequence % 36 ** 4).toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('folders', (t) => {
    t.string('parent_key', 40).notNullable().defaultTo('');
    t.string('title_key', TITLE_MAX).notNullable().defaultTo('');
  });

  const now = Date.now();
  const rows: FolderRow[] = await knex('folders').orderBy(['org_id', 'created_at', 'uid']).select('org_id', 'uid', 'title', 'parent_uid');
  const siblingKey = (row: FolderRow, title: string) => `${row.org_id}\u0000${row.parent_uid ?? ''}\u0000${titleKey(title)}`;
  // Every title that stays is reserved first, so a new "(n)" never takes a title a folder already has.
  const taken = new Set<string>();
  const later = rows.filter((row) => {
    const key = siblingKey(row, row.title);
    if (taken.has(key)) return true;
    taken.add(key);
    return false;
  });
  const renames = later.map((row) => {
    let n = 2;
    while (taken.has(siblingKey(row, numbered(row.title, n)))) n += 1;
    taken.add(siblingKey(row, numbered(row.title, n)));
    return { row, title: numbered(row.title, n) };
  });
  const renamed = new Map(renames.map(({ row, title }) => [`${row.org_id}\u0000${row.uid}`, title]));

  for (const row of rows) {
    const title = renamed.get(`${row.org_id}\u0000${row.uid}`);
    await knex('folders')
      .where({ org_id: row.org_id, uid: row.uid })
      .update({ parent_key: row.parent_uid ?? '', title_key: titleKey(title ?? row.title), ...(title !== undefined && { title, updated_at: now }) });
  }
  const entries = renames.map(({ row, title }, i) => ({
    id: auditId(now, i),
    timestamp: now,
    action: 'folder.updated',
    actor_type: 'system',
    actor_id: null,
    actor_name: null,
    org_id: row.org_id,
    target_type: 'folder',
    target_id: row.uid,
    target_name: title,
    outcome: 'success',
    metadata: JSON.stringify({ fields: ['title'], previousTitle: row.title, reason: 'another folder in the same parent has that title' }),
    ip: null,
    user_agent: null,
  }));
  for (let start = 0; start < entries.length; start += INSERT_CHUNK) await knex('audit_log').insert(entries.slice(start, start + INSERT_CHUNK));

  await knex.schema.alterTable('folders', (t) => {
    t.unique(['org_id', 'parent_key', 'title_key'], { indexName: 'folders_sibling_title_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('folders', (t) => {
    t.dropUnique(['org_id', 'parent_key', 'title_key'], 'folders_sibling_title_unique');
    t.dropColumn('title_key');
    t.dropColumn('parent_key');
  });
}
