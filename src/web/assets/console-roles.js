// Roles (`/admin/roles`, `?role=<uid>` for one): the basic, fixed and custom roles of the active
// org with their permissions; creating, changing and deleting custom roles (permissions as action
// and scope rows); and who a role is assigned to (users, teams, service accounts), with forms to
// assign and unassign it. Only what the user's permissions allow is offered.
import { useState } from 'preact/hooks';
import { actionsOf, ALL_USERS, call, messageOf, navigate, query, useApi } from '/assets/console-api.js';
import { Empty, Field, Forbidden, html, Loaded, Outcome, Page } from '/assets/console-ui.js';

const KINDS = [
  { kind: 'basic', title: 'Basic roles', hint: 'Each comes with an org role (Viewer, Editor, Admin); change a person’s org role to change it.' },
  { kind: 'fixed', title: 'Fixed roles', hint: 'Narrow bundles of permissions the service defines, to assign as they are.' },
  { kind: 'custom', title: 'Custom roles', hint: 'Roles of this org (or of the server, when global) that their administrators define.' },
];

/** A role's kind, from its uid's prefix (as the API decides it). */
export const kindOf = (uid) => (uid.startsWith('basic:') ? 'basic' : uid.startsWith('fixed:') ? 'fixed' : uid.startsWith('managed:') ? 'managed' : 'custom');
const roleScopes = (uid) => [`roles:uid:${uid}`];
const roleHref = (uid) => `/admin/roles${query({ role: uid })}`;

/** The permission rows of a role form: an action and a scope each, added and removed in place. */
function PermissionRows({ rows, setRows, actions, idPrefix }) {
  const set = (index, field) => (event) => setRows(rows.map((row, i) => (i === index ? { ...row, [field]: event.currentTarget.value } : row)));
  return html`<fieldset class="permission-rows">
    <legend>Permissions</legend>
    ${rows.length === 0 && html`<${Empty}>No permissions yet: add one.<//>`}
    ${rows.map(
      (row, index) =>
        html`<div class="row permission-row" key=${index}>
          <${Field} label=${`Action ${index + 1}`} id=${`${idPrefix}-action-${index}`}>
            <input
              id=${`${idPrefix}-action-${index}`}
              list=${`${idPrefix}-actions`}
              required
              maxlength="190"
              value=${row.action}
              onInput=${set(index, 'action')}
            />
          <//>
          <${Field} label=${`Scope ${index + 1}`} id=${`${idPrefix}-scope-${index}`}>
            <input id=${`${idPrefix}-scope-${index}`} required maxlength="190" value=${row.scope} onInput=${set(index, 'scope')} />
          <//>
          <button type="button" class="secondary small" onClick=${() => setRows(rows.filter((_, i) => i !== index))}>
            Remove<span class="sr-only"> permission ${index + 1}</span>
          </button>
        </div>`,
    )}
    <datalist id=${`${idPrefix}-actions`}>${actions.map((action) => html`<option value=${action}></option>`)}</datalist>
    <button type="button" class="secondary small" onClick=${() => setRows([...rows, { action: '', scope: '*' }])}>Add a permission</button>
  </fieldset>`;
}

const cleanRows = (rows) => rows.map((row) => ({ action: row.action.trim(), scope: row.scope.trim() || '*' })).filter((row) => row.action);

/** Creates a custom role: its name (which is its uid), display name, description and permissions. */
function CreateRole({ actions, onCreated }) {
  const [rows, setRows] = useState([{ action: '', scope: '*' }]);
  const [outcome, setOutcome] = useState(null);
  const [busy, setBusy] = useState(false);
  async function submit(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const raw = form.elements.name.value.trim();
    const name = raw.startsWith('custom:') ? raw : `custom:${raw}`;
    setBusy(true);
    const result = await call('POST', '/api/access-control/roles', {
      uid: name,
      name,
      displayName: form.elements.displayName.value.trim() || raw,
      description: form.elements.description.value,
      permissions: cleanRows(rows),
    });
    setBusy(false);
    if (!result.ok) return setOutcome({ ok: false, text: messageOf(result) });
    form.reset();
    setRows([{ action: '', scope: '*' }]);
    setOutcome({ ok: true, text: `Created role ${result.body.displayName}.` });
    onCreated(result.body);
  }
  return html`<section class="panel" aria-labelledby="create-role-heading">
    <h2 id="create-role-heading">Create a custom role</h2>
    <form onSubmit=${submit} aria-label="Create a custom role">
      <div class="row">
        <${Field} label="Name" id="role-name" hint="Its uid too; custom: is put in front when it is missing.">
          <input id="role-name" name="name" required maxlength="183" aria-describedby="role-name-hint" />
        <//>
        <${Field} label="Display name" id="role-display-name"><input id="role-display-name" name="displayName" maxlength="190" /><//>
      </div>
      <${Field} label="Description" id="role-description"><textarea id="role-description" name="description" maxlength="1000" rows="2"></textarea><//>
      <${PermissionRows} rows=${rows} setRows=${setRows} actions=${actions} idPrefix="new-role" />
      <button type="submit" disabled=${busy}>Create role</button>
    </form>
    <${Outcome} outcome=${outcome} />
  </section>`;
}

/**
 * Changes a custom role at the version it was read at; a 409 says someone changed it first. The
 * form is drawn afresh for each version, so what it did is said by the role's panel.
 */
function EditRole({ role, actions, onSaved, setOutcome }) {
  const [rows, setRows] = useState(role.permissions.map((p) => ({ ...p })));
  async function submit(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const result = await call('PUT', `/api/access-control/roles/${encodeURIComponent(role.uid)}`, {
      version: role.version,
      displayName: form.elements.displayName.value.trim() || role.displayName,
      description: form.elements.description.value,
      permissions: cleanRows(rows),
    });
    setOutcome(result.ok ? { ok: true, text: `Saved role ${result.body.displayName}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) onSaved();
  }
  return html`<form class="grant-form" onSubmit=${submit} aria-label=${`Change ${role.displayName}`}>
    <h3>Change this role</h3>
    <${Field} label="Display name" id="edit-role-display-name">
      <input id="edit-role-display-name" name="displayName" maxlength="190" defaultValue=${role.displayName} />
    <//>
    <${Field} label="Description" id="edit-role-description">
      <textarea id="edit-role-description" name="description" maxlength="1000" rows="2" defaultValue=${role.description}></textarea>
    <//>
    <${PermissionRows} rows=${rows} setRows=${setRows} actions=${actions} idPrefix="edit-role" />
    <button type="submit">Save role</button>
  </form>`;
}

function PermissionsTable({ permissions }) {
  if (permissions.length === 0) return html`<${Empty}>This role grants nothing.<//>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        The role’s permissions
      </caption>
      <thead>
        <tr>
          <th scope="col">Action</th>
          <th scope="col">Scope</th>
        </tr>
      </thead>
      <tbody>
        ${permissions.map(
          (p) =>
            html`<tr key=${`${p.action} ${p.scope}`}>
              <td><code>${p.action}</code></td>
              <td><code>${p.scope}</code></td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

const ASSIGNEE_KINDS = { user: 'User', team: 'Team', serviceaccount: 'Service account' };
const assignmentPath = (kind, id, roleUid, global = false) =>
  `/api/access-control/${kind === 'team' ? 'teams' : 'users'}/${encodeURIComponent(id)}/roles${roleUid ? `/${encodeURIComponent(roleUid)}` : ''}${global ? query({ global: true }) : ''}`;

/** Who holds the role in the active org: its users (some by a global assignment), teams and service accounts. */
function useHolders(roleUid, mayRead) {
  const holders = useApi(mayRead ? `/api/access-control/roles/${encodeURIComponent(roleUid)}/assignments` : null);
  // while a reload is under way the last answer stays on the page
  if (holders.data === undefined) return holders;
  const data = [
    ...holders.data.users.map((u) => ({ kind: 'user', id: u.userId, name: u.login, global: u.global })),
    ...holders.data.teams.map((t) => ({ kind: 'team', id: t.teamId, name: t.name, global: false })),
    ...holders.data.serviceAccounts.map((a) => ({ kind: 'serviceaccount', id: a.serviceAccountId, name: a.name, global: a.global })),
  ];
  return { ...holders, data };
}

/** The picker of whom to assign the role to: a user, a team or a service account found by name. */
function AssignForm({ role, can, onAssigned }) {
  const kinds = Object.keys(ASSIGNEE_KINDS).filter((kind) =>
    kind === 'user' ? can('org.users:read', ALL_USERS) : kind === 'team' ? can('teams:read') : can('serviceaccounts:read'),
  );
  const [kind, setKind] = useState(kinds[0]);
  const [search, setSearch] = useState('');
  const [chosen, setChosen] = useState('');
  const [outcome, setOutcome] = useState(null);
  const text = search ? { query: search } : {};
  const people = useApi(kind === 'user' ? `/api/org/users/lookup${query({ limit: 50, ...text })}` : null);
  const teams = useApi(kind === 'team' ? `/api/teams/search${query({ perpage: 100, ...text })}` : null);
  const accounts = useApi(kind === 'serviceaccount' ? `/api/serviceaccounts/search${query({ perpage: 100, ...text })}` : null);
  if (kinds.length === 0) return null;
  const options =
    kind === 'user'
      ? (people.data ?? []).map((u) => ({ value: String(u.userId), label: u.login }))
      : kind === 'team'
        ? (teams.data?.teams ?? []).map((t) => ({ value: String(t.id), label: t.name }))
        : (accounts.data?.serviceAccounts ?? []).map((a) => ({ value: String(a.id), label: a.name }));
  const value = chosen || options[0]?.value || '';

  async function submit(event) {
    event.preventDefault();
    if (!value) return;
    const label = options.find((o) => o.value === value)?.label ?? value;
    const result = await call('POST', assignmentPath(kind, value), { roleUid: role.uid });
    setOutcome(result.ok ? { ok: true, text: `Assigned ${role.displayName} to ${ASSIGNEE_KINDS[kind]} ${label}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) onAssigned();
  }

  return html`<form class="grant-form" onSubmit=${submit} aria-label=${`Assign ${role.displayName}`}>
    <h3>Assign this role</h3>
    <div class="row">
      <${Field} label="Assign to" id="assign-kind">
        <select
          id="assign-kind"
          value=${kind}
          onChange=${(e) => {
            setKind(e.currentTarget.value);
            setChosen('');
            setSearch('');
          }}
        >
          ${kinds.map((k) => html`<option value=${k}>${ASSIGNEE_KINDS[k]}</option>`)}
        </select>
      <//>
      <${Field} label="Find by name" id="assign-search">
        <input
          id="assign-search"
          type="search"
          value=${search}
          onInput=${(e) => {
            setSearch(e.currentTarget.value);
            setChosen('');
          }}
        />
      <//>
      <${Field} label=${ASSIGNEE_KINDS[kind]} id="assign-principal">
        <select id="assign-principal" value=${value} onChange=${(e) => setChosen(e.currentTarget.value)}>
          ${options.length === 0 && html`<option value="">No match</option>`} ${options.map((o) => html`<option value=${o.value}>${o.label}</option>`)}
        </select>
      <//>
    </div>
    <button type="submit" disabled=${!value}>Assign</button>
    <${Outcome} outcome=${outcome} />
  </form>`;
}

/** Who holds a fixed or custom role, with the buttons to unassign it and the form to assign it. */
function Holders({ role, can, user }) {
  const mayRead = can('roles:read', roleScopes(role.uid));
  const holders = useHolders(role.uid, mayRead);
  const [outcome, setOutcome] = useState(null);
  const mayAssign = can('roles:write', roleScopes(role.uid));
  // a global assignment is the server's: only a server admin takes it away
  const mayUnassign = (holder) => mayAssign && (!holder.global || user.isSvcAdmin);
  const described = (holder) => `${ASSIGNEE_KINDS[holder.kind]} ${holder.name}${holder.global ? ' (every org)' : ''}`;

  async function unassign(holder) {
    const result = await call('DELETE', assignmentPath(holder.kind, holder.id, role.uid, holder.global));
    setOutcome(result.ok ? { ok: true, text: `Unassigned ${role.displayName} from ${described(holder)}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) holders.reload();
  }

  return html`
    ${
      mayRead
        ? html`<${Loaded}
            resource=${holders}
            what="the assignments"
            isEmpty=${(data) => data.length === 0}
            empty="This role is assigned to no one in this org."
            render=${(data) =>
              html`<ul class="grants">
                ${data.map(
                  (holder) =>
                    html`<li key=${`${holder.kind}:${holder.id}:${holder.global}`}>
                      <span>${ASSIGNEE_KINDS[holder.kind]} <strong>${holder.name}</strong>${holder.global ? ' (every org)' : ''}</span>
                      ${
                        mayUnassign(holder) &&
                        html`<button type="button" class="secondary small" onClick=${() => unassign(holder)}>
                          Unassign<span class="sr-only"> ${role.displayName} from ${described(holder)}</span>
                        </button>`
                      }
                    </li>`,
                )}
              </ul>`}
          />`
        : html`<p class="muted">Listing who holds this role needs roles:read on it.</p>`
    }
    ${mayAssign && html`<${AssignForm} role=${role} can=${can} onAssigned=${holders.reload} />`}
    <${Outcome} outcome=${outcome} />
  `;
}

/** A role's assignments: a basic role's holders are those with its org role, the others are assigned. */
function Assignments({ role, can, user }) {
  return html`<section class="panel" aria-labelledby="assignments-heading">
    <h2 id="assignments-heading">Assignments</h2>
    ${
      role.kind === 'basic'
        ? html`<p>
            ${
              role.uid === 'basic:server_admin'
                ? 'This role comes with being a server admin: every server admin holds it.'
                : `This role comes with the org role ${role.displayName}: everyone with that org role holds it.`
            }
          </p>`
        : html`<${Holders} role=${role} can=${can} user=${user} />`
    }
  </section>`;
}

function RoleDetail({ uid, can, user, actions, onChanged }) {
  const role = useApi(`/api/access-control/roles/${encodeURIComponent(uid)}`);
  const [outcome, setOutcome] = useState(null);
  async function remove(data) {
    if (!window.confirm(`Delete role ${data.displayName}? It is taken from everyone it is assigned to.`)) return;
    const result = await call('DELETE', `/api/access-control/roles/${encodeURIComponent(uid)}`);
    if (result.ok) {
      onChanged();
      navigate('/admin/roles');
    } else setOutcome({ ok: false, text: messageOf(result) });
  }
  return html`<${Loaded}
    resource=${role}
    what="the role"
    render=${(data) => {
      const kind = kindOf(data.uid);
      const custom = kind === 'custom';
      return html`<section class="panel" aria-labelledby="role-heading">
          <h2 id="role-heading">${data.displayName}</h2>
          <dl class="profile">
            <dt>Name</dt>
            <dd><code>${data.name}</code></dd>
            <dt>Kind</dt>
            <dd>${kind}${data.global ? ' (global: every org)' : ''}</dd>
            ${
              data.description &&
              html`<dt>Description</dt>
                <dd>${data.description}</dd>`
            }
            <dt>Version</dt>
            <dd>${data.version}</dd>
          </dl>
          <h3>Permissions</h3>
          <${PermissionsTable} permissions=${data.permissions} />
          ${
            custom &&
            can('roles:write', roleScopes(data.uid)) &&
            html`<${EditRole}
              key=${data.version}
              role=${data}
              actions=${actions}
              setOutcome=${setOutcome}
              onSaved=${() => {
                role.reload();
                onChanged();
              }}
            />`
          }
          ${
            custom &&
            can('roles:delete', roleScopes(data.uid)) &&
            html`<p>
              <button type="button" class="danger" onClick=${() => remove(data)}>Delete role<span class="sr-only"> ${data.displayName}</span></button>
            </p>`
          }
          <${Outcome} outcome=${outcome} />
        </section>
        <${Assignments} key=${data.uid} role=${{ ...data, kind }} can=${can} user=${user} />`;
    }}
  />`;
}

function RoleTable({ roles, selected }) {
  return html`<div class="table-wrap">
    <table class="role-table">
      <thead>
        <tr>
          <th scope="col">Role</th>
          <th scope="col" class="role-about">Description</th>
          <th scope="col">Permissions</th>
        </tr>
      </thead>
      <tbody>
        ${roles.map(
          (r) =>
            html`<tr key=${r.uid}>
              <td>
                <a href=${roleHref(r.uid)} aria-current=${r.uid === selected ? 'page' : undefined}>${r.displayName}</a>
                ${r.global && r.uid.startsWith('custom') ? html` <span class="badge">global</span>` : null}
              </td>
              <td class="role-about">${r.description || '—'}</td>
              <td>${r.permissions.length}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function RolesPage({ can, user, params }) {
  const allowed = can('roles:read');
  const roles = useApi(allowed ? '/api/access-control/roles?perpage=1000' : null);
  const openapi = useApi(allowed && can('roles:write') ? '/api/openapi.json' : null);
  if (!allowed) return html`<${Page} title="Roles"><${Forbidden} message="Reading roles needs roles:read, which org administrators hold." /><//>`;
  const actions = actionsOf(openapi.data);
  return html`<${Page} title="Roles">
    ${params.role && html`<${RoleDetail} key=${params.role} uid=${params.role} can=${can} user=${user} actions=${actions} onChanged=${roles.reload} />`}
    <${Loaded}
      resource=${roles}
      what="the roles"
      render=${(data) =>
        KINDS.map(({ kind, title, hint }) => {
          const ofKind = data.roles.filter((r) => kindOf(r.uid) === kind);
          return html`<section class="panel" aria-labelledby=${`${kind}-roles-heading`} key=${kind}>
            <h2 id=${`${kind}-roles-heading`}>${title}</h2>
            <p class="muted">${hint}</p>
            ${ofKind.length === 0 ? html`<${Empty}>No ${kind} roles yet.<//>` : html`<${RoleTable} roles=${ofKind} selected=${params.role} />`}
          </section>`;
        })}
    />
    ${can('roles:write') && html`<${CreateRole} actions=${actions} onCreated=${(role) => (roles.reload(), navigate(roleHref(role.uid)))} />`}
  <//>`;
}
