/**
 * The policy engine: the only place permissions are evaluated. It holds one wasm instance per
 * org loaded with that org's data document, rebuilds a document after a committed change
 * (this instance: at once; other instances: via the revision poll), and fails closed.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { PolicyChangeListener } from '../db/transaction.ts';
import { ALL_ORGS } from '../db/transaction.ts';
import { buildOrgDocument, type DocumentSettings } from './document.ts';
import type { AuthzInput, Decision, FilterInput, PermissionMap, Subject } from './types.ts';
import type { PolicyInstance, PolicyModule } from './wasm.ts';

/** Key of the server-level document (global roles only), used when org_id is null. */
const SERVER_KEY = '';

interface OrgPolicy {
  instance: PolicyInstance;
  /** Bumped by every change notice; a load that started before it is stale on arrival. */
  generation: number;
  loadedGeneration: number;
  revision: number;
  loading: Promise<void> | null;
}

export interface EngineStats {
  orgs: number;
  loads: number;
  wasmBytes: number;
}

export class AuthzEngine implements PolicyChangeListener {
  private readonly orgs = new Map<string, OrgPolicy>();
  private loads = 0;
  private poller: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Knex,
    private readonly policy: PolicyModule,
    private readonly settings: DocumentSettings,
    private readonly logger: Logger,
  ) {}

  async authorize(input: AuthzInput): Promise<Decision> {
    try {
      const org = await this.ready(input.org_id);
      const result = org.instance.evaluate('authz/decision', input) as Decision | undefined;
      if (!result || typeof result.allow !== 'boolean' || !Array.isArray(result.reasons)) {
        return this.failClosed(new Error('policy returned no decision'));
      }
      return result;
    } catch (err) {
      return this.failClosed(err);
    }
  }

  async permissions(subject: Subject, orgId: string | null): Promise<PermissionMap> {
    try {
      const org = await this.ready(orgId);
      const result = org.instance.evaluate('authz/permissions', { subject, org_id: orgId });
      return result && typeof result === 'object' ? (result as PermissionMap) : {};
    } catch (err) {
      this.failClosed(err);
      return {};
    }
  }

  /** The indexes of `input.resources` on which the action is allowed. */
  async filter(input: FilterInput): Promise<number[]> {
    if (input.resources.length === 0) return [];
    try {
      const org = await this.ready(input.org_id);
      const result = org.instance.evaluate('authz/filter', input);
      return Array.isArray(result) ? (result as number[]) : [];
    } catch (err) {
      this.failClosed(err);
      return [];
    }
  }

  policyDataChanged(orgIds: ReadonlySet<string>): void {
    for (const [key, org] of this.orgs) {
      if (orgIds.has(ALL_ORGS) || orgIds.has(key)) org.generation++;
    }
  }

  /** Polls the org revisions written by other instances; changes elsewhere show within `intervalMs`. */
  startRevisionPoll(intervalMs: number): void {
    this.stopRevisionPoll();
    this.poller = setInterval(() => {
      this.pollRevisions().catch((err) => this.logger.warn({ err }, 'policy revision poll failed'));
    }, intervalMs);
    this.poller.unref();
  }

  stopRevisionPoll(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  async pollRevisions(): Promise<void> {
    const keys = [...this.orgs.keys()].filter((key) => key !== SERVER_KEY);
    if (keys.length === 0) return;
    const rows: Array<{ id: string; policy_revision: number | string }> = await this.db('orgs').whereIn('id', keys).select('id', 'policy_revision');
    const current = new Map(rows.map((row) => [row.id, Number(row.policy_revision)]));
    for (const key of keys) {
      const org = this.orgs.get(key);
      if (org && current.get(key) !== org.revision) org.generation++;
    }
  }

  stats(): EngineStats {
    let wasmBytes = 0;
    for (const org of this.orgs.values()) wasmBytes += org.instance.memoryBytes;
    return { orgs: this.orgs.size, loads: this.loads, wasmBytes };
  }

  /** The org's instance with a document at least as new as every change notice so far. */
  private async ready(orgId: string | null): Promise<OrgPolicy> {
    const key = orgId ?? SERVER_KEY;
    let org = this.orgs.get(key);
    if (!org) {
      org = { instance: await this.policy.instantiate(), generation: 1, loadedGeneration: 0, revision: -1, loading: null };
      const raced = this.orgs.get(key);
      if (raced) org = raced;
      else this.orgs.set(key, org);
    }
    while (org.loadedGeneration !== org.generation) {
      org.loading ??= this.load(orgId, org).finally(() => {
        org.loading = null;
      });
      await org.loading;
    }
    return org;
  }

  private async load(orgId: string | null, org: OrgPolicy): Promise<void> {
    const generation = org.generation;
    const revisionRow = orgId ? await this.db('orgs').where('id', orgId).first('policy_revision') : null;
    const document = await buildOrgDocument(this.db, orgId, this.settings);
    org.instance.setData(document);
    org.revision = revisionRow ? Number(revisionRow.policy_revision) : 0;
    org.loadedGeneration = generation;
    this.loads++;
  }

  private failClosed(err: unknown): Decision {
    this.logger.error({ err }, 'policy evaluation failed; denying');
    return { allow: false, reasons: ['policy evaluation failed'] };
  }
}
