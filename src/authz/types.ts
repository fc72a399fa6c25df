/** The shapes exchanged with the policy; policies/README.md is their contract. */
import type { Reason } from './reasons.ts';

export type OrgRole = 'Admin' | 'Editor' | 'Viewer' | 'None';
export const ORG_ROLES: readonly OrgRole[] = ['Admin', 'Editor', 'Viewer', 'None'];

export interface Subject {
  id: string;
  kind: 'user' | 'service_account' | 'anonymous';
  server_admin: boolean;
  disabled: boolean;
}

export type ResourceRef = { kind: string; uid: string } | { kind: string; id: string } | { scope: string };

export interface ChatContext {
  agent_type: string;
  tool: string;
  permission_mode: string;
  write: boolean;
}

/** A permission a role would grant: who creates, changes or assigns the role must hold it too. */
export interface DelegatedPermission {
  action: string;
  scope: string;
}

/** What a request needs besides its own action: reading an alert rule needs query on each connector it reads. */
export interface Requirement {
  action: string;
  resource: ResourceRef;
}

export interface AuthzInput {
  subject: Subject;
  /** The active org; null for server-level actions. */
  org_id: string | null;
  action: string;
  resource?: ResourceRef;
  chat?: ChatContext;
  /** Role writes and assignments: every permission the role grants (Grafana's delegation rule). */
  delegate?: DelegatedPermission[];
  /** An org.users change: the user it is about (only a server admin changes a server admin). */
  target_user?: { server_admin: boolean };
  /** A move: the folder the resource lands in, where `<resource>:create` is needed too. */
  destination?: ResourceRef;
  /** A setup-wizard change: open while no user exists (then anyone may make it). */
  setup?: { open: boolean };
  /** Each must be allowed too, in the same decision. */
  requires?: Requirement[];
  /** Who authored the target (an ops plan): the subject must be someone else (`differ`) or that author (`match`). */
  author?: Authorship;
}

/** The author of what a request acts on, and whether the subject must be someone else or that author. */
export interface Authorship {
  kind: Subject['kind'];
  id: string;
  must: 'differ' | 'match';
}

/**
 * authz/active_org: the org a request asks for and the facts about it, gathered before any org's
 * data document is loaded (the policy evaluates it without one).
 */
export interface ActiveOrgInput {
  /** `pinned_org`: the org a service-account token is pinned to; null for anything else. */
  subject: Subject & { pinned_org: string | null };
  /** X-Svc-Org-Id, then ?orgId, then the token's pinned org, then the user's default org; null when there is none. */
  org_id: string | null;
  org: { is_member: boolean };
}

/** The kinds whose lists authz/visible answers as sets; every other kind is listed through filter. */
export type ListedKind = 'dashboards' | 'folders';

/** authz/visible: the items of `kind` on which `action` is allowed, as sets. */
export interface VisibleInput {
  subject: Subject;
  org_id: string | null;
  action: string;
  kind: ListedKind;
}

/**
 * What authz/visible answers: every item of the kind (`all`), or those in `folders` (a folder
 * itself, or a dashboard's folder) and those in `items` (uids granted directly).
 */
export type VisibleSet = { all: true } | { all: false; folders: readonly string[]; items: readonly string[] };

export interface FilterInput {
  subject: Subject;
  org_id: string | null;
  action: string;
  /** Each item may carry its own requires, as a single decision's input does. */
  resources: Array<ResourceRef & { requires?: Requirement[] }>;
}

/** authz/label_rules: whose label rules apply when `subject` reads the connector `resource`. */
export interface LabelRulesInput {
  subject: Subject;
  org_id: string;
  resource: { kind: 'connectors'; uid: string };
}

/**
 * What a read of the connector may see: everything (`none`: the connector has no rule; `bypass`:
 * an org or connector Admin), only what `selectors` match (`applied`, OR-ed), or nothing (`denied`).
 */
export interface LabelRulesAnswer {
  mode: 'none' | 'bypass' | 'applied' | 'denied';
  selectors: string[];
}

export interface Decision {
  allow: boolean;
  /** Data, worded by src/authz/reasons.ts. */
  reasons: Reason[];
  /** Set by the policy on a refusal whose explanation is safe to show the caller (delegation, active org, setup). */
  message?: string;
}

/** action -> scopes the subject holds in the org */
export type PermissionMap = Record<string, string[]>;

export interface OrgDocument {
  org_id: string | null;
  settings: { legacy_acl_enabled: boolean };
  members: Record<string, { role: OrgRole; teams: string[]; roles: string[] }>;
  teams: Record<string, { roles: string[] }>;
  builtin_roles: Record<OrgRole, string[]>;
  roles: Record<string, Record<string, Record<string, true>>>;
  folders: Record<string, { scopes: string[] }>;
  dashboards: Record<string, { folder: string }>;
  alert_rules: Record<string, { folder: string }>;
  legacy_acl: Record<string, Record<string, number>>;
  chat_agents: Record<string, { tools: Record<string, true> }>;
  /** connector uid -> principal key (`user:<id>`, `team:<id>`, `role:<OrgRole>`) -> the selectors of its rules there */
  label_rules: Record<string, Record<string, string[]>>;
}
