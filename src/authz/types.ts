/** The shapes exchanged with the policy; policies/README.md is their contract. */

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
}

export interface FilterInput {
  subject: Subject;
  org_id: string | null;
  action: string;
  resources: ResourceRef[];
}

export interface Decision {
  allow: boolean;
  reasons: string[];
  /** Set by the policy on a refusal whose explanation is safe to show the caller (delegation). */
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
  restricted_connectors: Record<string, true>;
  legacy_acl: Record<string, Record<string, number>>;
  chat_agents: Record<string, { tools: Record<string, true> }>;
}
