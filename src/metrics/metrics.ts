/**
 * Every Prometheus metric of the service, in one registry per running app (tests run several in
 * one process). Code where an event happens calls one verb here (`metrics.decision(...)`,
 * `metrics.login(...)`); state owned elsewhere (loaded policy documents, the database pool) is
 * read when Prometheus scrapes, so nothing else keeps metric state.
 */
import type { Knex } from 'knex';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { Series } from './series.ts';

export type DecisionOutcome = 'allow' | 'deny' | 'error';
/** `mfa_required`: the password was right and the login waits for its second factor. */
export type LoginOutcome = 'success' | 'failure' | 'locked_out' | 'mfa_required';

/** What the policy engine reports of itself (AuthzEngine.stats()). */
export interface PolicyEngineStats {
  orgs: number;
  rebuilds: number;
  patches: number;
  wasmBytes: number;
  keptDecisionHits: number;
}

/** The running policy (AuthzEngine.provenance). */
export interface PolicyInfo {
  source: string;
  revision: string | null;
  signer: string | null;
}

/** The pool tarn gives knex; its counts are read at scrape time. */
interface PoolCounts {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  max: number;
}

/** The label of a request no route matched: the raw path would let any client grow the series without bound. */
export const UNMATCHED_ROUTE = 'unmatched';

/** authorize() answers in microseconds from a loaded document, and up to seconds when it builds one. */
const DECISION_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.01, 0.05, 0.25, 1, 5];
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A counter mirroring a monotonic count kept elsewhere: it moves by the difference at each scrape. */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number | undefined): Counter {
  let seen = 0;
  const counter: Counter = new Counter({
    name,
    help,
    registers: [registry],
    collect: () => {
      const now = read();
      if (now === undefined || now < seen) return;
      counter.inc(now - seen);
      seen = now;
    },
  });
  return counter;
}

export class Metrics {
  readonly registry = new Registry();
  private engineStats: (() => PolicyEngineStats) | null = null;
  private db: Knex | null = null;
  private queries = 0;

  private readonly httpRequests = new Series(this.registry, ['method', 'route', 'status'], REQUEST_BUCKETS, {
    count: { name: 'gatehouse_http_requests_total', help: 'HTTP requests answered, by method, route template and status' },
    duration: { name: 'gatehouse_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method, route template and status' },
  });

  private readonly decisions = new Series(this.registry, ['outcome'], [], {
    count: {
      name: 'gatehouse_authorize_decisions_total',
      help: 'authorize() decisions by outcome (error: the policy failed and the request was denied or failed)',
    },
  });

  private readonly decisionDuration = new Series(this.registry, [], DECISION_BUCKETS, {
    duration: { name: 'gatehouse_authorize_duration_seconds', help: 'Latency of authorize(), including a policy document build when the org was not loaded' },
  });

  private readonly logins = new Counter({
    name: 'gatehouse_logins_total',
    help: 'Login attempts by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly lockouts = new Counter({
    name: 'gatehouse_login_lockouts_total',
    help: 'Login attempts refused because the account was locked out for the client address',
    registers: [this.registry],
  });

  private readonly auditStreamDelivered = new Counter({
    name: 'gatehouse_audit_stream_delivered_total',
    help: 'Audit entries this instance delivered to the audit stream (a redelivery counts again)',
    registers: [this.registry],
  });

  private readonly auditStreamFailures = new Counter({
    name: 'gatehouse_audit_stream_failures_total',
    help: 'Deliveries to the audit stream that failed (the sink unreachable, failing or refusing), retried with backoff',
    registers: [this.registry],
  });

  private readonly auditStreamDeadLetters = new Counter({
    name: 'gatehouse_audit_stream_dead_letters_total',
    help: 'Audit entries this instance gave up after AUDIT_STREAM_MAX_ATTEMPTS refusals by the sink',
    registers: [this.registry],
  });

  private readonly auditStreamPending = new Gauge({
    name: 'gatehouse_audit_stream_pending',
    help: 'Audit entries waiting for delivery, as this instance last counted them',
    registers: [this.registry],
  });

  private readonly auditStreamOldestAge = new Gauge({
    name: 'gatehouse_audit_stream_oldest_pending_age_seconds',
    help: 'How long the oldest audit entry waiting for delivery has waited, as this instance last looked (0 when none)',
    registers: [this.registry],
  });

  private readonly policyReloads = new Counter({
    name: 'gatehouse_policy_reloads_total',
    help: 'POST /api/admin/policy/reload by outcome: loaded (the policy swapped) or refused (the running policy kept)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly decisionLogDropped = new Counter({
    name: 'gatehouse_decision_log_dropped_total',
    help: 'Decision log entries DECISION_LOG=http dropped because DECISION_LOG_BUFFER_SIZE entries were already waiting for the collector',
    registers: [this.registry],
  });

  private readonly decisionLogSent = new Counter({
    name: 'gatehouse_decision_log_sent_total',
    help: 'Decision log entries DECISION_LOG=http delivered to DECISION_LOG_URL',
    registers: [this.registry],
  });

  private policyInfo: (() => PolicyInfo) | null = null;

  constructor() {
    const bundleInfo: Gauge<'source' | 'revision' | 'signer'> = new Gauge({
      name: 'gatehouse_policy_bundle_info',
      help: 'The running policy (1): its source (build or bundle), revision and signing key (empty when unsigned)',
      labelNames: ['source', 'revision', 'signer'] as const,
      registers: [this.registry],
      collect: () => {
        if (!this.policyInfo) return;
        const info = this.policyInfo();
        bundleInfo.reset();
        bundleInfo.set({ source: info.source, revision: info.revision ?? '', signer: info.signer ?? '' }, 1);
      },
    });
    const documents: Gauge = new Gauge({
      name: 'gatehouse_policy_documents_loaded',
      help: 'Org policy documents loaded in this instance',
      registers: [this.registry],
      collect: () => {
        if (this.engineStats) documents.set(this.engineStats().orgs);
      },
    });
    const wasmMemory: Gauge = new Gauge({
      name: 'gatehouse_policy_wasm_memory_bytes',
      help: 'Memory of the loaded policy instances',
      registers: [this.registry],
      collect: () => {
        if (this.engineStats) wasmMemory.set(this.engineStats().wasmBytes);
      },
    });
    mirroredCounter(this.registry, 'gatehouse_policy_document_rebuilds_total', 'Policy documents built from the database', () => this.engineStats?.().rebuilds);
    mirroredCounter(
      this.registry,
      'gatehouse_policy_document_patches_total',
      'Changes patched into loaded policy documents',
      () => this.engineStats?.().patches,
    );
    mirroredCounter(
      this.registry,
      'gatehouse_authorize_kept_answers_total',
      'authorize() decisions answered from the kept answers, without evaluating the policy',
      () => this.engineStats?.().keptDecisionHits,
    );
    const connections: Gauge<'state'> = new Gauge({
      name: 'gatehouse_db_pool_connections',
      help: 'Database pool connections by state (used, free, pending_acquire, pending_create)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect: () => {
        const pool = this.pool();
        if (!pool) return;
        connections.set({ state: 'used' }, pool.numUsed());
        connections.set({ state: 'free' }, pool.numFree());
        connections.set({ state: 'pending_acquire' }, pool.numPendingAcquires());
        connections.set({ state: 'pending_create' }, pool.numPendingCreates());
      },
    });
    mirroredCounter(this.registry, 'gatehouse_db_queries_total', 'Statements sent to the database', () => this.queries);
    const poolMax: Gauge = new Gauge({
      name: 'gatehouse_db_pool_max',
      help: 'Largest number of connections the database pool opens',
      registers: [this.registry],
      collect: () => {
        const pool = this.pool();
        if (pool) poolMax.set(pool.max);
      },
    });
  }

  /** Node's own metrics (heap, event loop lag, file descriptors): for the process, not for every test app. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  watchPolicyEngine(stats: () => PolicyEngineStats): void {
    this.engineStats = stats;
  }

  /** The running policy, read at each scrape (a reload swaps it). */
  watchPolicy(info: () => PolicyInfo): void {
    this.policyInfo = info;
  }

  policyReload(outcome: 'loaded' | 'refused'): void {
    this.policyReloads.inc({ outcome });
  }

  decisionLogDelivered(entries: number): void {
    this.decisionLogSent.inc(entries);
  }

  decisionLogDrop(entries: number): void {
    this.decisionLogDropped.inc(entries);
  }

  watchDatabasePool(db: Knex): void {
    this.db = db;
    db.on('query', () => {
      this.queries += 1;
    });
  }

  /** Read at each scrape: knex replaces its pool when it is destroyed and used again. */
  private pool(): PoolCounts | null {
    return (this.db?.client as { pool?: PoolCounts } | undefined)?.pool ?? null;
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.record([method, route, String(status)], seconds);
  }

  decision(outcome: DecisionOutcome, seconds: number): void {
    this.decisions.record([outcome]);
    this.decisionDuration.record([], seconds);
  }

  login(provider: string, outcome: LoginOutcome): void {
    this.logins.inc({ provider, outcome });
    if (outcome === 'locked_out') this.lockouts.inc();
  }

  auditStreamDelivery(entries: number): void {
    this.auditStreamDelivered.inc(entries);
  }

  auditStreamFailure(): void {
    this.auditStreamFailures.inc();
  }

  auditStreamDeadLetter(): void {
    this.auditStreamDeadLetters.inc();
  }

  auditStreamBacklog(pending: number, oldestAgeSeconds: number): void {
    this.auditStreamPending.set(pending);
    this.auditStreamOldestAge.set(oldestAgeSeconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
