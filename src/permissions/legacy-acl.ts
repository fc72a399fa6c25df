/**
 * The legacy dashboard ACL: an export of an older permission system, imported whole by an
 * operator (`npm run cli -- import-legacy-acl`), read by the policy as a fallback unless
 * LEGACY_ACL_ENABLED=false, and migrated into managed grants (`migrate-legacy-acl`), after which
 * the fallback holds nothing. The export format is documented in policies/README.md:
 *
 *   {"entries": [{"dashboardUid" | "folderUid": "<uid>", "userId" | "teamId" | "role": "<…>", "permission": 1 | 2 | 4}]}
 */
import { Ajv } from 'ajv';
import type { Knex } from 'knex';
import { grantManagedToEach, replaceLegacyAcl, takeLegacyAcl, type GrantHolder, type LegacyAclEntry } from '../accesscontrol/policy-writer.ts';
import { recordAudit, type Actor } from '../audit/writer.ts';
import { findDashboardsByUids } from '../dashboards/store.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { findFoldersByUids } from '../folders/store.ts';
import { findMembersByIds, findOrgById } from '../orgs/store.ts';
import type { Services } from '../services.ts';
import { findTeamsByIds } from '../teams/store.ts';
import { DASHBOARD_GRANTS, FOLDER_GRANTS } from './levels.ts';

const id = { type: 'string', minLength: 1, maxLength: 40 } as const;

const exportSchema = {
  type: 'object',
  properties: {
    entries: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        properties: {
          dashboardUid: id,
          folderUid: id,
          userId: id,
          teamId: id,
          role: { type: 'string', enum: ['Viewer', 'Editor', 'Admin'] },
          permission: { type: 'integer', enum: [1, 2, 4] },
        },
        required: ['permission'],
        additionalProperties: false,
      },
    },
  },
  required: ['entries'],
  additionalProperties: true,
} as const;

const validateExport = new Ajv({ allErrors: false, strict: true }).compile(exportSchema);

type ExportEntry = { dashboardUid?: string; folderUid?: string; userId?: string; teamId?: string; role?: LegacyAclEntry['role']; permission: 1 | 2 | 4 };

/** The entries of an export, or a 400 that says which entry is wrong and how. */
export function parseLegacyAclExport(text: string): LegacyAclEntry[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new BadRequestError('the legacy ACL export is not JSON');
  }
  if (!validateExport(document)) {
    const error = validateExport.errors![0]!;
    throw new BadRequestError(`the legacy ACL export${error.instancePath.replaceAll('/', '.')} ${error.message}`);
  }
  return (document as { entries: ExportEntry[] }).entries.map((entry, i) => {
    if ((entry.dashboardUid === undefined) === (entry.folderUid === undefined))
      throw new BadRequestError(`entries[${i}] must name exactly one of dashboardUid or folderUid`);
    if ([entry.userId, entry.teamId, entry.role].filter((value) => value !== undefined).length !== 1)
      throw new BadRequestError(`entries[${i}] must name exactly one of userId, teamId or role`);
    return {
      dashboardUid: entry.dashboardUid ?? null,
      folderUid: entry.folderUid ?? null,
      userId: entry.userId ?? null,
      teamId: entry.teamId ?? null,
      role: entry.role ?? null,
      permission: entry.permission,
    };
  });
}

/** Every entry must name a dashboard or folder, and a member or team, of the org. */
async function assertEntriesBelongTo(db: Knex, orgId: string, entries: LegacyAclEntry[]): Promise<void> {
  const distinct = (pick: (entry: LegacyAclEntry) => string | null) => [...new Set(entries.map(pick).filter((value): value is string => value !== null))];
  const [dashboards, folders, members, teams] = await Promise.all([
    findDashboardsByUids(
      db,
      orgId,
      distinct((entry) => entry.dashboardUid),
    ),
    findFoldersByUids(
      db,
      orgId,
      distinct((entry) => entry.folderUid),
    ),
    findMembersByIds(
      db,
      orgId,
      distinct((entry) => entry.userId),
    ),
    findTeamsByIds(
      db,
      distinct((entry) => entry.teamId),
    ),
  ]);
  const known = {
    dashboardUid: new Set(dashboards.map((row) => row.uid)),
    folderUid: new Set(folders.map((row) => row.uid)),
    userId: new Set(members.map((row) => row.id)),
    teamId: new Set(teams.filter((row) => row.org_id === orgId).map((row) => row.id)),
  };
  entries.forEach((entry, i) => {
    for (const field of ['dashboardUid', 'folderUid', 'userId', 'teamId'] as const) {
      const value = entry[field];
      if (value !== null && !known[field].has(value)) throw new BadRequestError(`entries[${i}].${field}: ${value} is not in org ${orgId}`);
    }
  });
}

/** Replaces the org's legacy ACL with the export's entries; returns how many it holds now. */
export async function importLegacyAcl(services: Services, actor: Actor, orgId: string, entries: LegacyAclEntry[]): Promise<number> {
  if (!(await findOrgById(services.db, orgId))) throw new NotFoundError(`org ${orgId} not found`);
  const now = services.clock.now();
  await services.transact(async (tx) => {
    await assertEntriesBelongTo(tx.db, orgId, entries);
    await replaceLegacyAcl(tx, orgId, entries);
    await recordAudit(tx.db, actor, { action: 'legacy_acl.imported', orgId, metadata: { entries: entries.length } }, now);
  });
  return entries.length;
}

const holderOf = (entry: LegacyAclEntry): GrantHolder =>
  entry.userId ? { kind: 'user', userId: entry.userId } : entry.teamId ? { kind: 'team', teamId: entry.teamId } : { kind: 'builtin', role: entry.role! };

/**
 * Turns each legacy entry into the managed grant of the same level (a dashboard entry into a
 * dashboard grant, a folder entry into a folder grant, added to what the principal holds) and
 * empties the legacy ACL, in one transaction. A second run finds nothing to migrate.
 */
export async function migrateLegacyAcl(services: Services, actor: Actor, orgId: string): Promise<number> {
  if (!(await findOrgById(services.db, orgId))) throw new NotFoundError(`org ${orgId} not found`);
  const now = services.clock.now();
  return services.transact(async (tx) => {
    const entries = await takeLegacyAcl(tx, orgId);
    const grants = entries.map((entry) => {
      const [family, uid] = entry.dashboardUid ? [DASHBOARD_GRANTS, entry.dashboardUid] : [FOLDER_GRANTS, entry.folderUid!];
      return { holder: holderOf(entry), permissions: family.levels[entry.permission].map((action) => ({ action, scope: family.scopeOf(uid) })) };
    });
    await grantManagedToEach(tx, orgId, grants, now);
    if (entries.length > 0) await recordAudit(tx.db, actor, { action: 'legacy_acl.migrated', orgId, metadata: { entries: entries.length } }, now);
    return entries.length;
  });
}
