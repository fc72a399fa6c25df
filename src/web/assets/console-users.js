// The users of the server (`/admin/users`, server admins): search, create, disable and enable,
// and set a password. Someone without users:read gets the refused state, and the API refuses
// them anyway.
import { useState } from 'preact/hooks';
import { ALL_USERS, call, messageOf, navigate, query, useApi } from '/assets/console-api.js';
import { Field, Forbidden, html, Loaded, Outcome, Page, Pager, SearchForm } from '/assets/console-ui.js';

const PER_PAGE = 50;

function CreateUser({ onCreated }) {
  const [outcome, setOutcome] = useState(null);
  const [busy, setBusy] = useState(false);
  async function submit(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const body = Object.fromEntries(['name', 'login', 'email', 'password'].map((name) => [name, form.elements[name].value]));
    setBusy(true);
    const result = await call('POST', '/api/admin/users', body);
    setBusy(false);
    if (result.ok) {
      form.reset();
      setOutcome({ ok: true, text: `Created user ${result.body.login}.` });
      onCreated();
    } else setOutcome({ ok: false, text: messageOf(result) });
  }
  const input = (name, label, type = 'text', extra = {}) =>
    html`<${Field} label=${label} id=${`new-${name}`}><input id=${`new-${name}`} name=${name} type=${type} required ...${extra} /><//>`;
  return html`<section class="panel" aria-labelledby="create-heading">
    <h2 id="create-heading">Create a user</h2>
    <form onSubmit=${submit} aria-label="Create a user">
      <div class="row">
        ${input('name', 'Name')} ${input('login', 'Login')} ${input('email', 'Email', 'email')}
        ${input('password', 'Password', 'password', { minLength: 12, autocomplete: 'new-password' })}
      </div>
      <button type="submit" disabled=${busy}>Create user</button>
    </form>
    <${Outcome} outcome=${outcome} />
  </section>`;
}

function ResetPassword({ user, onDone, onCancel }) {
  const [busy, setBusy] = useState(false);
  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    const result = await call('POST', `/api/admin/users/${encodeURIComponent(user.id)}/password`, { password: event.currentTarget.elements.password.value });
    setBusy(false);
    onDone(result.ok ? { ok: true, text: `Set the password of ${user.login}; their sessions ended.` } : { ok: false, text: messageOf(result) });
  }
  const id = `password-${user.id}`;
  return html`<form class="inline-form" onSubmit=${submit} aria-label=${`New password for ${user.login}`}>
    <${Field} label=${`New password for ${user.login}`} id=${id}>
      <input id=${id} name="password" type="password" minlength="12" required autocomplete="new-password" ref=${(el) => el && el.focus()} />
    <//>
    <button type="submit" disabled=${busy}>Set password</button>
    <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
  </form>`;
}

function UserRow({ user, can, onChanged }) {
  const [resetting, setResetting] = useState(false);
  const [busy, setBusy] = useState(false);
  async function toggle() {
    setBusy(true);
    const result = await call('POST', `/api/admin/users/${encodeURIComponent(user.id)}/${user.isDisabled ? 'enable' : 'disable'}`);
    setBusy(false);
    onChanged(result.ok ? { ok: true, text: `${user.isDisabled ? 'Enabled' : 'Disabled'} ${user.login}.` } : { ok: false, text: messageOf(result) });
  }
  const mayToggle = can(user.isDisabled ? 'users:enable' : 'users:disable', ALL_USERS);
  return html`<tr>
    <td>${user.login}</td>
    <td>${user.name}</td>
    <td>${user.email}</td>
    <td>${user.isSvcAdmin ? 'Server admin' : user.orgs.map((o) => `${o.role} of ${o.name}`).join(', ') || '—'}</td>
    <td>${user.isDisabled ? 'Disabled' : 'Active'}</td>
    <td class="row-actions">
      ${
        mayToggle &&
        html`<button type="button" class="secondary small" disabled=${busy} onClick=${toggle}>
          ${user.isDisabled ? 'Enable' : 'Disable'}<span class="sr-only"> ${user.login}</span>
        </button>`
      }
      ${
        can('users.password:write', ALL_USERS) &&
        !resetting &&
        html`<button type="button" class="secondary small" onClick=${() => setResetting(true)}>
          Reset password<span class="sr-only"> of ${user.login}</span>
        </button>`
      }
      <a class="small" href=${`/admin/audit${query({ actorId: user.id })}`}>Audit<span class="sr-only"> entries of ${user.login}</span></a>
      ${
        resetting &&
        html`<${ResetPassword}
          user=${user}
          onCancel=${() => setResetting(false)}
          onDone=${(outcome) => {
            setResetting(false);
            onChanged(outcome);
          }}
        />`
      }
    </td>
  </tr>`;
}

export function UsersPage({ can, params }) {
  const allowed = can('users:read', ALL_USERS);
  const users = useApi(allowed ? `/api/admin/users${query({ query: params.query, page: params.page, perpage: PER_PAGE })}` : null);
  const [outcome, setOutcome] = useState(null);
  const changed = (result) => {
    setOutcome(result);
    users.reload();
  };
  if (!allowed) {
    return html`<${Page} title="Users"><${Forbidden} message="Managing users needs users:read, which server administrators hold." /><//>`;
  }
  return html`<${Page} title="Users">
    <${SearchForm} key=${params.query ?? ''} path="/admin/users" label="Search users" id="users-search" initial=${params.query} />
    <${Outcome} outcome=${outcome} />
    <${Loaded}
      resource=${users}
      what="users"
      isEmpty=${(data) => data.users.length === 0}
      empty=${params.query ? `No user matches “${params.query}”.` : 'No users yet.'}
      render=${(data) =>
        html`<div class="table-wrap">
            <table>
              <caption class="sr-only">
                Users
              </caption>
              <thead>
                <tr>
                  <th scope="col">Login</th>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Access</th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${data.users.map((user) => html`<${UserRow} key=${user.id} user=${user} can=${can} onChanged=${changed} />`)}
              </tbody>
            </table>
          </div>
          <${Pager}
            label="User pages"
            total=${data.totalCount}
            page=${data.page}
            perPage=${data.perPage}
            onPage=${(page) => navigate(`/admin/users${query({ ...params, page })}`)}
          />`}
    />
    ${can('users:create') && html`<${CreateUser} onCreated=${users.reload} />`}
  <//>`;
}
