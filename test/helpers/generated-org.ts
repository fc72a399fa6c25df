/**
 * A deterministic, randomly shaped org document and a stream of authorization inputs over it,
 * for the wasm-versus-OPA parity test. Seeded, so a failure reproduces.
 */
import type { AuthzInput, FilterInput, OrgDocument, OrgRole, ResourceRef, Subject } from '../../src/authz/types.ts';
import { builtinRoleUids } from '../../src/authz/document.ts';
import { DEFAULT_CHAT_AGENTS } from '../../src/authz/chat-agents.ts';

export function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)]!;
    },
    chance: (p: number) => next() < p,
  };
}

const KINDS = ['dashboards', 'folders', 'alert.rules', 'connectors', 'teams', 'users', 'annotations', 'orgs', 'org.users'] as const;
const VERBS = ['read', 'write', 'create', 'delete', 'query'] as const;
const ROLES: OrgRole[] = ['Admin', 'Editor', 'Viewer', 'None'];

export interface GeneratedOrg {
  document: OrgDocument;
  inputs: AuthzInput[];
  filters: FilterInput[];
  subjects: Subject[];
}

export function generateOrg(seed: number, cases: number): GeneratedOrg {
  const rnd = prng(seed);
  const folders = Array.from({ length: 24 }, (_, i) => `f${i}`);
  const parent = new Map<string, string | null>();
  folders.forEach((uid, i) => parent.set(uid, i === 0 || rnd.chance(0.25) ? null : folders[rnd.int(i)]!));
  const ancestors = (uid: string) => {
    const chain: string[] = [];
    for (let p = parent.get(uid); p; p = parent.get(p)) chain.push(p);
    return chain;
  };
  const dashboards = Array.from({ length: 40 }, (_, i) => `d${i}`);
  const rules = Array.from({ length: 10 }, (_, i) => `r${i}`);
  const connectors = ['c0', 'c1', 'c2', 'c3'];
  const teams = ['t1', 't2', 't3', 't4'];
  const users = Array.from({ length: 16 }, (_, i) => `u${i}`);

  const randomScope = (): string => {
    const roll = rnd.int(8);
    if (roll === 0) return '*';
    if (roll === 1) return `${rnd.pick(KINDS)}:*`;
    if (roll === 2) return `folders:uid:${rnd.pick(folders)}`;
    if (roll === 3) return `dashboards:uid:${rnd.pick(dashboards)}`;
    if (roll === 4) return `connectors:uid:${rnd.pick(connectors)}`;
    if (roll === 5) return `teams:id:${rnd.pick(teams)}`;
    if (roll === 6) return `dashboards:uid:*`;
    return `folders:uid:${rnd.pick(folders)}`;
  };
  const randomAction = () => (rnd.chance(0.05) ? '*' : rnd.chance(0.05) ? `${rnd.pick(KINDS)}:*` : `${rnd.pick(KINDS)}:${rnd.pick(VERBS)}`);

  const roles: OrgDocument['roles'] = {
    'basic:viewer': { 'dashboards:read': { 'dashboards:*': true }, 'folders:read': { 'folders:*': true }, 'connectors:read': { 'connectors:*': true } },
    'basic:editor': { 'dashboards:write': { 'folders:*': true }, 'dashboards:create': { 'folders:*': true } },
    'basic:admin': { '*': { '*': true } },
    'basic:server_admin': { '*': { '*': true } },
  };
  const customRoles = [
    'custom:a',
    'custom:b',
    'custom:c',
    ...users.map((u) => `managed:users:${u}:permissions`),
    ...teams.map((t) => `managed:teams:${t}:permissions`),
    'managed:builtins:viewer:permissions',
  ];
  for (const uid of customRoles) {
    const grants: Record<string, Record<string, true>> = {};
    for (let i = 0; i < 1 + rnd.int(4); i++) (grants[randomAction()] ??= {})[randomScope()] = true;
    roles[uid] = grants;
  }
  // the default role entries of c0 and c2; c1 and c3 had theirs taken away
  const viewerEntries = roles['managed:builtins:viewer:permissions']!;
  viewerEntries['connectors:query'] = { ...viewerEntries['connectors:query'], 'connectors:uid:c0': true, 'connectors:uid:c2': true };

  const members: OrgDocument['members'] = {};
  for (const user of users.slice(0, 13)) {
    members[user] = {
      role: rnd.pick(ROLES),
      teams: teams.filter(() => rnd.chance(0.3)),
      roles: [`managed:users:${user}:permissions`, ...(rnd.chance(0.3) ? [rnd.pick(['custom:a', 'custom:b', 'custom:c'])] : [])],
    };
  }
  const legacy: OrgDocument['legacy_acl'] = {};
  for (let i = 0; i < 12; i++) {
    const scope = rnd.chance(0.5) ? `dashboards:uid:${rnd.pick(dashboards)}` : `folders:uid:${rnd.pick(folders)}`;
    const principal = rnd.pick([`user:${rnd.pick(users)}`, `team:${rnd.pick(teams)}`, `role:${rnd.pick(['Viewer', 'Editor', 'Admin'])}`]);
    (legacy[scope] ??= {})[principal] = rnd.pick([1, 2, 4]);
  }

  const document: OrgDocument = {
    org_id: 'org_gen',
    settings: { legacy_acl_enabled: rnd.chance(0.5) },
    members,
    teams: Object.fromEntries(teams.map((t) => [t, { roles: [`managed:teams:${t}:permissions`] }])),
    builtin_roles: builtinRoleUids(),
    roles,
    folders: Object.fromEntries(folders.map((f) => [f, { scopes: [f, ...ancestors(f)].map((uid) => `folders:uid:${uid}`) }])),
    dashboards: Object.fromEntries(dashboards.map((d) => [d, { folder: rnd.chance(0.1) ? '' : rnd.pick(folders) }])),
    alert_rules: Object.fromEntries(rules.map((r) => [r, { folder: rnd.pick(folders) }])),
    label_rules: {},
    legacy_acl: legacy,
    chat_agents: DEFAULT_CHAT_AGENTS,
  };

  const subjects: Subject[] = users.map((id) => ({
    id,
    kind: rnd.chance(0.15) ? 'service_account' : 'user',
    server_admin: rnd.chance(0.15),
    disabled: rnd.chance(0.08),
  }));
  subjects.push({ id: '', kind: 'anonymous', server_admin: false, disabled: false });

  const randomResource = (): ResourceRef | undefined => {
    const roll = rnd.int(10);
    if (roll === 0) return undefined;
    if (roll === 9) return { kind: 'orgs', id: rnd.chance(0.8) ? 'org_gen' : 'org_other' };
    if (roll === 1) return { kind: 'dashboards', uid: rnd.chance(0.9) ? rnd.pick(dashboards) : 'd-missing' };
    if (roll === 2) return { kind: 'folders', uid: rnd.pick(folders) };
    if (roll === 3) return { kind: 'alert.rules', uid: rnd.pick(rules) };
    if (roll === 4) return { kind: 'connectors', uid: rnd.pick(connectors) };
    if (roll === 5) return { kind: 'teams', id: rnd.pick(teams) };
    if (roll === 6) return { kind: 'users', id: rnd.pick(users) };
    if (roll === 7) return { scope: randomScope() };
    return { kind: 'dashboards', uid: rnd.pick(dashboards) };
  };
  const actionFor = (resource: ResourceRef | undefined) => {
    const kind = resource && 'kind' in resource ? resource.kind : rnd.pick(KINDS);
    return rnd.chance(0.1) ? randomAction() : `${kind}:${rnd.pick(VERBS)}`;
  };

  const inputs: AuthzInput[] = [];
  for (let i = 0; i < cases; i++) {
    const resource = randomResource();
    const input: AuthzInput = { subject: rnd.pick(subjects), org_id: rnd.chance(0.1) ? null : 'org_gen', action: actionFor(resource) };
    if (resource) input.resource = resource;
    if (rnd.chance(0.1)) input.delegate = Array.from({ length: 1 + rnd.int(3) }, () => ({ action: randomAction(), scope: randomScope() }));
    if (rnd.chance(0.15)) {
      input.chat = {
        agent_type: rnd.pick(['investigator', 'operator', 'dashboard_builder', 'unknown']),
        tool: rnd.pick(['connectors_list', 'metrics_query', 'changes_record', 'no_such_tool']),
        permission_mode: rnd.pick(['read_only', 'ask', 'auto']),
        write: rnd.chance(0.5),
      };
    }
    inputs.push(input);
  }
  const filters: FilterInput[] = Array.from({ length: 20 }, () => ({
    subject: rnd.pick(subjects),
    org_id: 'org_gen',
    action: rnd.pick(['dashboards:read', 'dashboards:write', 'folders:read', 'connectors:query']),
    resources: Array.from({ length: 8 }, () => randomResource() ?? { kind: 'dashboards', uid: 'd1' }),
  }));
  return { document, inputs, filters, subjects };
}
