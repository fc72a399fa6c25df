// The teams of the active org (`/admin/teams`): search, create, and a team's members (add, make
// admin or member, remove), as far as the user may.
import { useState } from 'preact/hooks';
import { call, messageOf, query, useApi } from '/assets/console-api.js';
import { Field, Forbidden, html, Loaded, Outcome, Page, SearchForm } from '/assets/console-ui.js';

const teamScope = (id) => [`teams:id:${id}`];

function Members({ team, can, onChanged }) {
  const members = useApi(`/api/teams/${encodeURIComponent(team.id)}/members?perpage=1000`);
  const [outcome, setOutcome] = useState(null);
  const [search, setSearch] = useState('');
  const [userId, setUserId] = useState('');
  const people = useApi(`/api/org/users/lookup?limit=50${search ? `&${new URLSearchParams({ query: search })}` : ''}`);
  const mayWrite = can('teams:write', teamScope(team.id));
  const mayPermissions = can('team.permissions:write', teamScope(team.id));

  async function act(method, path, body, done) {
    const result = await call(method, path, body);
    setOutcome(result.ok ? { ok: true, text: done } : { ok: false, text: messageOf(result) });
    if (result.ok) {
      members.reload();
      onChanged();
    }
  }
  const base = `/api/teams/${encodeURIComponent(team.id)}/members`;
  const chosen = userId || people.data?.[0]?.userId || '';
  return html`<section class="panel" aria-labelledby=${`team-${team.id}-heading`}>
    <h2 id=${`team-${team.id}-heading`}>Members of ${team.name}</h2>
    <${Loaded}
      resource=${members}
      what="the members"
      isEmpty=${(data) => data.teamMembers.length === 0}
      empty="This team has no members."
      render=${(data) =>
        html`<ul class="grants">
          ${data.teamMembers.map(
            (m) =>
              html`<li key=${m.userId}>
                <span>${m.login}${m.name && m.name !== m.login ? ` (${m.name})` : ''}: <strong>${m.permission === 4 ? 'Admin' : 'Member'}</strong></span>
                ${
                  mayPermissions &&
                  html`<button
                    type="button"
                    class="secondary small"
                    onClick=${() => act('PUT', `${base}/${encodeURIComponent(m.userId)}`, { permission: m.permission === 4 ? 0 : 4 }, `${m.login} is a team ${m.permission === 4 ? 'member' : 'admin'}.`)}
                  >
                    Make ${m.permission === 4 ? 'member' : 'admin'}<span class="sr-only"> ${m.login}</span>
                  </button>`
                }
                ${
                  mayWrite &&
                  html`<button
                    type="button"
                    class="secondary small"
                    onClick=${() => act('DELETE', `${base}/${encodeURIComponent(m.userId)}`, undefined, `Removed ${m.login}.`)}
                  >
                    Remove<span class="sr-only"> ${m.login}</span>
                  </button>`
                }
              </li>`,
          )}
        </ul>`}
    />
    ${
      mayWrite &&
      html`<form
        class="grant-form"
        aria-label=${`Add a member to ${team.name}`}
        onSubmit=${(e) => {
          e.preventDefault();
          if (chosen) act('POST', base, { userId: chosen }, 'Added the member.');
        }}
      >
        <div class="row">
          <${Field} label="Find a user" id="member-search"
            ><input
              id="member-search"
              type="search"
              value=${search}
              onInput=${(e) => {
                setSearch(e.currentTarget.value);
                setUserId('');
              }}
          /><//>
          <${Field} label="User" id="member-user">
            <select id="member-user" value=${chosen} onChange=${(e) => setUserId(e.currentTarget.value)}>
              ${(people.data ?? []).length === 0 && html`<option value="">No match</option>`}
              ${(people.data ?? []).map((u) => html`<option value=${u.userId}>${u.login}</option>`)}
            </select>
          <//>
        </div>
        <button type="submit" disabled=${!chosen}>Add member</button>
      </form>`
    }
    <${Outcome} outcome=${outcome} />
  </section>`;
}

export function TeamsPage({ can, params }) {
  const allowed = can('teams:read');
  const teams = useApi(allowed ? `/api/teams/search${query({ query: params.query, perpage: 100 })}` : null);
  const [outcome, setOutcome] = useState(null);
  if (!allowed) return html`<${Page} title="Teams"><${Forbidden} message="Reading teams needs teams:read." /><//>`;
  const selected = teams.data?.teams.find((t) => String(t.id) === params.team);

  async function create(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const result = await call('POST', '/api/teams', { name: form.elements.name.value });
    setOutcome(result.ok ? { ok: true, text: `Created team ${result.body.name}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) {
      form.reset();
      teams.reload();
    }
  }

  return html`<${Page} title="Teams">
    <${SearchForm} key=${params.query ?? ''} path="/admin/teams" label="Search teams" id="teams-search" initial=${params.query} />
    <${Loaded}
      resource=${teams}
      what="teams"
      isEmpty=${(data) => data.teams.length === 0}
      empty=${params.query ? `No team matches “${params.query}”.` : 'No teams you may see.'}
      render=${(data) =>
        html`<div class="table-wrap">
          <table>
            <caption class="sr-only">
              Teams
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Members</th>
              </tr>
            </thead>
            <tbody>
              ${data.teams.map(
                (t) =>
                  html`<tr key=${t.id}>
                    <td>
                      <a href=${`/admin/teams${query({ ...params, team: t.id })}`} aria-current=${String(t.id) === params.team ? 'page' : undefined}
                        >${t.name}</a
                      >
                    </td>
                    <td>${t.email || '—'}</td>
                    <td>${t.memberCount}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>`}
    />
    ${selected && html`<${Members} key=${selected.id} team=${selected} can=${can} onChanged=${teams.reload} />`}
    ${
      can('teams:create') &&
      html`<section class="panel" aria-labelledby="create-team-heading">
        <h2 id="create-team-heading">Create a team</h2>
        <form onSubmit=${create} aria-label="Create a team">
          <${Field} label="Team name" id="team-name"><input id="team-name" name="name" required maxlength="190" /><//>
          <button type="submit">Create team</button>
        </form>
        <${Outcome} outcome=${outcome} />
      </section>`
    }
  <//>`;
}
