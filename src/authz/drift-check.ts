/**
 * Test mode (AUTHZ_VERIFY_DOCUMENTS): after every commit that changed policy data, each loaded
 * document must equal a fresh build from SQL, or the transaction's caller gets an error naming
 * where they differ. A write that names the wrong fragment would otherwise leave a stale allow
 * that nothing repairs.
 */
import type { Knex } from 'knex';
import { buildOrgDocument, type DocumentSettings } from './document.ts';
import { SERVER_KEY, type OrgDocuments } from './documents.ts';
import { behind } from './loaded-document.ts';

/** How often a drifted document is re-checked before it counts: a commit's notice may still be on its way. */
const DRIFT_CHECKS = 3;
const DRIFT_RECHECK_MS = 20;
/** How many loaded documents test mode checks at once after a commit. */
const DRIFT_CHECKS_AT_ONCE = 4;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The document as canonical JSON: object keys sorted, lists of strings sorted (the policy reads
 * them as sets: a member's roles and teams come in whatever order the query returned), undefined
 * left out.
 */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (Array.isArray(v)) return v.every((item) => typeof item === 'string') ? [...(v as string[])].sort(byText) : v;
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => byText(a, b)));
    return v;
  });
}

/** The first top-level section and key where two documents differ, for the drift error. */
function firstDifference(loaded: Record<string, unknown>, fresh: Record<string, unknown>): string {
  for (const section of new Set([...Object.keys(loaded), ...Object.keys(fresh)])) {
    const [a, b] = [loaded[section], fresh[section]];
    if (canonical(a) === canonical(b)) continue;
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const [x, y] = [(a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]];
        if (canonical(x) !== canonical(y)) return `${section}.${key}: loaded ${canonical(x)}, in the database ${canonical(y)}`;
      }
    }
    return `${section}: loaded ${canonical(a)}, in the database ${canonical(b)}`;
  }
  return 'no difference';
}

/**
 * Checks every loaded document against a fresh build; throws on drift. A few orgs at a time: a
 * suite loads dozens, and one after another each commit would wait for all their builds' round
 * trips in turn.
 */
export async function checkLoadedDocuments(db: Knex, documents: OrgDocuments, settings: DocumentSettings): Promise<void> {
  const keys = [...documents.orgs.keys()];
  const checkNext = async (): Promise<void> => {
    for (let key = keys.pop(); key !== undefined; key = keys.pop()) await checkDocument(db, documents, settings, key === SERVER_KEY ? null : key);
  };
  const checkers = await Promise.allSettled(Array.from({ length: DRIFT_CHECKS_AT_ONCE }, checkNext));
  const failed = checkers.find((checker) => checker.status === 'rejected');
  if (failed) throw failed.reason;
}

async function checkDocument(db: Knex, documents: OrgDocuments, settings: DocumentSettings, orgId: string | null): Promise<void> {
  for (let check = 1; ; check++) {
    const org = await documents.ready(orgId);
    const heads = await documents.readHeads(orgId);
    const atHeads = () => org.seq === heads.seq && org.globalSeq === heads.globalSeq && !behind(org) && !org.refreshing;
    // A change made elsewhere (another instance, a commit still on its way here) is the poll's to bring.
    if (!atHeads() || !org.mirror) return;
    const fresh = (await buildOrgDocument(db, orgId, settings)) as unknown as Record<string, unknown>;
    const after = await documents.readHeads(orgId);
    if (after.seq !== heads.seq || after.globalSeq !== heads.globalSeq || !atHeads()) return;
    if (canonical(org.mirror) === canonical(fresh)) return;
    if (check >= DRIFT_CHECKS) throw new Error(`policy document drift in org ${orgId ?? '(server)'}: ${firstDifference(org.mirror, fresh)}`);
    await new Promise((resolve) => setTimeout(resolve, DRIFT_RECHECK_MS));
  }
}
