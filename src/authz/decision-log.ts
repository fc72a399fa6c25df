/**
 * The decision log (DECISION_LOG=file|stdout|http): one JSON entry per sampled authorize() decision,
 * with the field names of OPA's decision logs, so the tools that read OPA's logs read these.
 * The input is copied field by field from the shapes of types.ts: a field added to the input
 * later is not logged until it is named here, so nothing secret can slip in with it.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { ConfigError } from '../config.ts';
import type { OutboundClient } from '../outbound/client.ts';
import { HttpDecisionSink, type DecisionDeliveryObserver } from './decision-log-http.ts';
import type { AuthzInput, Decision, LabelRulesAnswer, LabelRulesInput, ResourceRef } from './types.ts';

export interface DecisionLogSettings {
  target: 'file' | 'stdout' | 'http';
  /** The file of `target: file`, appended to. */
  path: string;
  /** The share of decisions logged, 0..1. */
  sample: number;
  /** The collector of `target: http`. */
  url: string | null;
  /** How many entries `target: http` keeps waiting for the collector before it drops new ones. */
  bufferSize: number;
}

/** What `target: http` sends with and reports to. */
export interface DecisionDelivery {
  client: OutboundClient;
  observer: DecisionDeliveryObserver;
  onFailure(err: unknown): void;
}

interface DecisionSink {
  write(line: string): unknown;
  close?(): Promise<void>;
}

/** What the policy build says of itself (policies/build/manifest.json), for `labels` and `bundles`. */
export interface PolicyBuildInfo {
  opaVersion: string | null;
  sourceHash: string | null;
}

export interface DecisionLogEntry {
  decision_id: string;
  /** `authz/decision` for authorize(); `authz/label_rules` in a LabelRulesLogEntry. */
  path: string;
  input: LoggedInput;
  result: Decision;
  timestamp: string;
  metrics: { timer_rego_query_eval_ns: number };
  labels: { id: string; app: 'gatehouse'; version: string | null };
  bundles: { authz: { revision: string | null } };
}

/** The label rules a connector read was given (authz/label_rules): who read which connector, and the mode and selectors applied. */
export type LabelRulesLogEntry = Omit<DecisionLogEntry, 'input' | 'result'> & { input: LabelRulesInput; result: LabelRulesAnswer };

type LoggedInput = Pick<
  AuthzInput,
  'subject' | 'org_id' | 'action' | 'resource' | 'chat' | 'delegate' | 'target_user' | 'destination' | 'setup' | 'requires' | 'author'
>;

const resourceOf = (ref: ResourceRef): ResourceRef =>
  'scope' in ref ? { scope: ref.scope } : 'uid' in ref ? { kind: ref.kind, uid: ref.uid } : { kind: ref.kind, id: ref.id };

/** The input as logged: only the fields the policy contract names (policies/README.md), each rebuilt from its own parts. */
function loggedInput(input: AuthzInput): LoggedInput {
  const { subject } = input;
  const logged: LoggedInput = {
    subject: { id: subject.id, kind: subject.kind, server_admin: subject.server_admin, disabled: subject.disabled },
    org_id: input.org_id,
    action: input.action,
  };
  if (input.resource) logged.resource = resourceOf(input.resource);
  if (input.chat) {
    const { agent_type, tool, permission_mode, write } = input.chat;
    logged.chat = { agent_type, tool, permission_mode, write };
  }
  if (input.delegate) logged.delegate = input.delegate.map(({ action, scope }) => ({ action, scope }));
  if (input.target_user) logged.target_user = { server_admin: input.target_user.server_admin };
  if (input.destination) logged.destination = resourceOf(input.destination);
  if (input.setup) logged.setup = { open: input.setup.open };
  if (input.requires) logged.requires = input.requires.map(({ action, resource }) => ({ action, resource: resourceOf(resource) }));
  if (input.author) logged.author = { kind: input.author.kind, id: input.author.id, must: input.author.must };
  return logged;
}

/** The manifest tools/policy-build.sh writes beside the wasm; a build without one logs nulls. */
export function readPolicyBuildInfo(wasmPath: string): PolicyBuildInfo {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(path.dirname(wasmPath), 'manifest.json'), 'utf8')) as Partial<PolicyBuildInfo>;
    return { opaVersion: manifest.opaVersion ?? null, sourceHash: manifest.sourceHash ?? null };
  } catch {
    return { opaVersion: null, sourceHash: null };
  }
}

export class DecisionLog {
  /** Names this process in `labels.id`, as OPA names its instance. */
  private readonly instanceId = randomUUID();
  /** The running policy's revision, for `bundles.authz.revision`. */
  private revision: string | null;

  constructor(
    private readonly settings: DecisionLogSettings,
    private readonly build: PolicyBuildInfo,
    private readonly sink: DecisionSink,
    private readonly random: () => number = Math.random,
  ) {
    this.revision = build.sourceHash;
  }

  /**
   * Opens the configured destination; the file is written synchronously so that no decision is
   * lost on exit. A file that cannot be written stops startup as a configuration error.
   */
  static open(settings: DecisionLogSettings, build: PolicyBuildInfo, delivery?: DecisionDelivery): DecisionLog {
    if (settings.target === 'http') {
      if (!delivery) throw new Error('DECISION_LOG=http is opened with a delivery (an outbound client and its observer)');
      const sink = new HttpDecisionSink({ url: settings.url!, bufferSize: settings.bufferSize }, delivery.client, delivery.observer, delivery.onFailure);
      return new DecisionLog(settings, build, sink);
    }
    if (settings.target === 'file') {
      try {
        fs.mkdirSync(path.dirname(settings.path), { recursive: true });
        fs.closeSync(fs.openSync(settings.path, 'a'));
      } catch (err) {
        throw new ConfigError(`DECISION_LOG_PATH ${settings.path} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
    }
    const sink = pino.destination({ dest: settings.target === 'file' ? settings.path : 1, append: true, sync: true });
    return new DecisionLog(settings, build, sink);
  }

  record(input: AuthzInput, result: Decision, evalNanoseconds: number, at: Date): void {
    const logged = { allow: result.allow, reasons: result.reasons, ...(result.message !== undefined && { message: result.message }) };
    this.write('authz/decision', loggedInput(input), logged, evalNanoseconds, at);
  }

  /** The label rules a read of a connector was restricted by: the mode and the selectors applied. */
  recordLabelRules(input: LabelRulesInput, result: LabelRulesAnswer, evalNanoseconds: number, at: Date): void {
    const { subject } = input;
    const logged: LabelRulesInput = {
      subject: { id: subject.id, kind: subject.kind, server_admin: subject.server_admin, disabled: subject.disabled },
      org_id: input.org_id,
      resource: { kind: input.resource.kind, uid: input.resource.uid },
    };
    this.write('authz/label_rules', logged, { mode: result.mode, selectors: [...result.selectors] }, evalNanoseconds, at);
  }

  private write(path: string, input: LoggedInput | LabelRulesInput, result: Decision | LabelRulesAnswer, evalNanoseconds: number, at: Date): void {
    if (this.settings.sample < 1 && this.random() >= this.settings.sample) return;
    const entry: Omit<DecisionLogEntry, 'input' | 'result'> & { input: LoggedInput | LabelRulesInput; result: Decision | LabelRulesAnswer } = {
      decision_id: randomUUID(),
      path,
      input,
      result,
      timestamp: at.toISOString(),
      metrics: { timer_rego_query_eval_ns: evalNanoseconds },
      labels: { id: this.instanceId, app: 'gatehouse', version: this.build.opaVersion },
      bundles: { authz: { revision: this.revision } },
    };
    this.sink.write(`${JSON.stringify(entry)}\n`);
  }

  /** Sends what `target: http` still holds (shutdown); the other targets write at once. */
  async close(): Promise<void> {
    await this.sink.close?.();
  }

  /** The revision of the policy that decides from now on (a reload swapped it). */
  useRevision(revision: string | null): void {
    this.revision = revision;
  }
}
