/**
 * The policy's reasons are data: `{kind, ...}` objects (policies/README.md, "Reasons"). This is
 * the one place that words them; explain, who-can, the CLI and the logs read the fields and never
 * the words.
 */

/** A grant that allows: a role permission, a legacy ACL entry, or a rule of the policy itself. */
export type GrantReason =
  /** A role holds `action` (the asked one or a wildcard of it) on `scope`; no scope: on some scope (a request without a target). */
  | { kind: 'grant'; role: string; action: string; scope?: string }
  /** A legacy ACL entry of `level` on `scope` for `principal` (`user:<id>`, `team:<id>`, `role:<OrgRole>`). */
  | { kind: 'acl'; level: number; scope: string; principal: string }
  /** A rule: a subject on its own record, a member reading its org, a server admin administering an org, the open setup wizard. */
  | { kind: 'rule'; rule: 'self' | 'member' | 'server-admin' | 'setup-open'; action: string };

/** Why a request is refused. */
export type RefusalReason =
  /** The request's own action is granted on none of `scopes` (the target's candidates, most specific first); no scopes: on no scope at all. */
  | { kind: 'missing'; action: string; scopes?: string[] }
  /** Something the request needs besides its own action is not held. */
  | { kind: 'unmet'; need: 'requirement' | 'destination' | 'delegation' | 'chat'; action: string; scope?: string }
  /** More requirements not granted than the ones named. */
  | { kind: 'unmet-more'; need: 'requirement'; count: number }
  | { kind: 'server-only'; action: string }
  /** A SCIM action, which only a service account's token may perform. */
  | { kind: 'service-account-only'; action: string }
  | { kind: 'subject'; problem: 'anonymous' | 'missing' | 'no-id' | 'no-kind' | 'unknown-kind' | 'disabled' | 'disabled-not-boolean'; subjectKind?: string }
  | { kind: 'org'; problem: 'no-org-id' | 'server-level' | 'other-document' | 'not-member' | 'no-org' | 'pinned-elsewhere'; org?: string }
  | { kind: 'chat'; problem: 'tool' | 'no-tool' | 'read-only' | 'no-mode'; agentType?: string; tool?: string }
  /** Four eyes: the subject is the author (`differ`) or is not (`match`). */
  | { kind: 'author'; must: 'differ' | 'match' }
  /** Only a server admin changes a server admin's org role or membership. */
  | { kind: 'protected' }
  /** A field of the input is malformed (no field: the request could not be evaluated at all). */
  | { kind: 'input'; field?: 'action' | 'resource' | 'requires' | 'author' | 'subject.pinned_org'; resourceKind?: string }
  /** Set by the service, not the policy: the evaluation failed, and the request is refused. */
  | { kind: 'error' };

/** Why the request may act in the org it names (authz/active_org). */
export type ActiveOrgReason = { kind: 'active-org'; via: 'token' | 'membership'; org: string };

export type Reason = GrantReason | RefusalReason | ActiveOrgReason;

export const REASON_KINDS = [
  'grant',
  'acl',
  'rule',
  'missing',
  'unmet',
  'unmet-more',
  'server-only',
  'service-account-only',
  'subject',
  'org',
  'chat',
  'author',
  'protected',
  'input',
  'active-org',
  'error',
] as const satisfies ReadonlyArray<Reason['kind']>;

const SUBJECT_PROBLEMS: Record<Extract<Reason, { kind: 'subject' }>['problem'], string> = {
  anonymous: 'subject is anonymous',
  missing: 'no subject',
  'no-id': 'subject has no id',
  'no-kind': 'subject has no kind',
  'unknown-kind': 'unknown subject kind',
  disabled: 'subject is disabled',
  'disabled-not-boolean': 'subject.disabled is not a boolean',
};

const INPUT_PROBLEMS: Record<NonNullable<Extract<Reason, { kind: 'input' }>['field']>, string> = {
  action: 'no action given',
  resource: 'resource must be {kind, uid}, {kind, id} or {scope} with a scope *, <kind>:* or <kind>:<attr>:<value>',
  requires: "the request's requires must be a list of {action, resource}",
  author: "the request's author must be {kind, id, must: differ|match}",
  'subject.pinned_org': 'subject.pinned_org must be a string or null, org_id a string or null',
};

function orgText(reason: Extract<Reason, { kind: 'org' }>): string {
  switch (reason.problem) {
    case 'no-org-id':
      return 'no org_id: null for server-level actions, else the active org';
    case 'server-level':
      return 'only a server admin may act outside an org';
    case 'other-document':
      return `policy data is not for org ${reason.org}`;
    case 'not-member':
      return `not a member of org ${reason.org}`;
    case 'no-org':
      return 'not a member of any org';
    case 'pinned-elsewhere':
      return `the token is pinned to org ${reason.org}, and the request names another`;
  }
}

function unmetText(reason: Extract<Reason, { kind: 'unmet' }>): string {
  switch (reason.need) {
    case 'requirement':
      return `no role grants ${reason.action} on ${reason.scope}, which the request requires`;
    case 'destination':
      return `no role grants ${reason.action} on the destination ${reason.scope ?? 'of no known shape'}`;
    case 'delegation':
      return `you do not hold ${reason.action} on ${reason.scope}, which the change grants`;
    case 'chat':
      return `no role grants ${reason.action}, which a chat-driven request needs`;
  }
}

function chatText(reason: Extract<Reason, { kind: 'chat' }>): string {
  switch (reason.problem) {
    case 'tool':
      return `chat: tool ${reason.tool} is not allowed for agent type ${reason.agentType}`;
    case 'no-tool':
      return 'chat: agent_type and tool are required';
    case 'read-only':
      return 'chat: permission mode read_only forbids writes';
    case 'no-mode':
      return 'chat: a write needs a permission mode';
  }
}

/** A reason in English, as evaluate, the CLI's explain and who-can show it. */
export function renderReason(reason: Reason): string {
  switch (reason.kind) {
    case 'grant':
      return `role ${reason.role} grants ${reason.action} on ${reason.scope ?? 'some scope'}`;
    case 'acl':
      return `legacy ACL grants level ${reason.level} on ${reason.scope} to ${reason.principal}`;
    case 'rule':
      switch (reason.rule) {
        case 'self':
          return `a subject may ${reason.action} on itself`;
        case 'member':
          return `a member may ${reason.action} the org it is in`;
        case 'server-admin':
          return `a server admin may ${reason.action} on every org`;
        case 'setup-open':
          return `setup is open: anyone may ${reason.action} until the first user exists`;
      }
      break;
    case 'missing':
      return `no role grants ${reason.action} on ${reason.scopes ? reason.scopes.join(', ') : 'any scope'}`;
    case 'unmet':
      return unmetText(reason);
    case 'unmet-more':
      return `and ${reason.count} more requirements not granted`;
    case 'server-only':
      return `only a server admin may ${reason.action}`;
    case 'service-account-only':
      return `only a service account may ${reason.action}`;
    case 'subject':
      return reason.problem === 'unknown-kind' ? `unknown subject kind ${reason.subjectKind}` : SUBJECT_PROBLEMS[reason.problem];
    case 'org':
      return orgText(reason);
    case 'chat':
      return chatText(reason);
    case 'author':
      return reason.must === 'differ'
        ? 'the subject is the author, and the author may not do this'
        : 'the subject is not the author, and only the author may do this';
    case 'protected':
      return "only a server admin may change a server admin's org role or membership";
    case 'input':
      if (reason.field === 'resource' && reason.resourceKind !== undefined) return `unknown resource kind ${reason.resourceKind}`;
      return reason.field ? INPUT_PROBLEMS[reason.field] : 'the request could not be evaluated';
    case 'active-org':
      return reason.via === 'token' ? `the token is pinned to org ${reason.org}` : `a member of org ${reason.org}`;
    case 'error':
      return 'policy evaluation failed';
  }
  return JSON.stringify(reason);
}

/** The reasons in English, in the policy's order. */
export const renderReasons = (reasons: readonly Reason[]): string[] => reasons.map(renderReason);

const text = { type: 'string' } as const;

/**
 * A reason as the HTTP answers carry it beside its English (`details` beside `reasons`): the
 * kind, and the fields of that kind (policies/README.md, "Reasons").
 */
export const REASON_SCHEMA = {
  type: 'object',
  description:
    'A reason of the policy as data: its kind and the fields of that kind. grant {role, action, scope?}; acl {level, scope, principal}; ' +
    'rule {rule: self|member|server-admin|setup-open, action}; missing {action, scopes?}; unmet {need: requirement|destination|delegation|chat, action, scope?}; ' +
    'unmet-more {need, count}; server-only {action}; service-account-only {action}; subject {problem, subjectKind?}; org {problem, org?}; chat {problem, agentType?, tool?}; ' +
    'author {must}; protected {}; input {field?, resourceKind?}; active-org {via, org}; error {}.',
  properties: {
    kind: { type: 'string', enum: REASON_KINDS },
    role: text,
    action: text,
    scope: text,
    scopes: { type: 'array', items: text },
    level: { type: 'integer' },
    principal: text,
    rule: { type: 'string', enum: ['self', 'member', 'server-admin', 'setup-open'] },
    need: { type: 'string', enum: ['requirement', 'destination', 'delegation', 'chat'] },
    count: { type: 'integer' },
    problem: text,
    subjectKind: text,
    org: text,
    agentType: text,
    tool: text,
    must: { type: 'string', enum: ['differ', 'match'] },
    field: text,
    resourceKind: text,
    via: { type: 'string', enum: ['token', 'membership'] },
  },
  required: ['kind'],
} as const;
