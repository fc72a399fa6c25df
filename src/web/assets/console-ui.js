// The console's shared pieces: the page frame, the four states every page has (loading, empty,
// error, refused), paging, a list's search form, and the permissions panel of folders, dashboards and alert rules.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { call, messageOf, navigate, query, useApi } from '/assets/console-api.js';

export const html = htm.bind(h);

/** A page: its heading takes the focus when the page is drawn, so a screen reader hears where it is. */
export function Page({ title, children }) {
  const heading = useRef(null);
  useEffect(() => {
    document.title = `${title} · Gatehouse console`;
    heading.current?.focus();
  }, [title]);
  return html`<h1 tabindex="-1" ref=${heading}>${title}</h1>
    ${children}`;
}

export const Loading = ({ what }) => html`<p class="state-loading" role="status">Loading ${what}…</p>`;
export const Empty = ({ children }) => html`<p class="state-empty">${children}</p>`;
export const ErrorState = ({ message, retry }) =>
  html`<div class="state-error" role="alert">
    <p>${message}</p>
    ${retry && html`<button type="button" class="secondary" onClick=${retry}>Try again</button>`}
  </div>`;
export const Forbidden = ({ message }) =>
  html`<div class="state-forbidden" role="alert">
    <h2>Access denied</h2>
    <p>${message || 'You do not have permission to see this page.'}</p>
    <p>Ask an administrator of your organization for access.</p>
  </div>`;

/**
 * Draws a loaded answer: loading, error (with retry) and 403 each in their own state; `render`
 * gets the data, and `isEmpty(data)` draws `empty` instead.
 */
export function Loaded({ resource, what, render, isEmpty, empty }) {
  if (resource.status === 'idle') return null;
  if (resource.status === 'loading' && resource.data === undefined) return html`<${Loading} what=${what} />`;
  if (resource.status === 'forbidden') return html`<${Forbidden} message=${resource.message} />`;
  if (resource.status === 'error') return html`<${ErrorState} message=${resource.message} retry=${resource.reload} />`;
  if (isEmpty && isEmpty(resource.data)) return html`<${Empty}>${empty}<//>`;
  return render(resource.data);
}

/** Previous / next over a `{totalCount, page, perPage}` answer. */
export function Pager({ total, page, perPage, onPage, label }) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  return html`<nav class="pager" aria-label=${label}>
    <button type="button" class="secondary" disabled=${page <= 1} onClick=${() => onPage(page - 1)}>Previous</button>
    <span>Page ${page} of ${pages} (${total} in all)</span>
    <button type="button" class="secondary" disabled=${page >= pages} onClick=${() => onPage(page + 1)}>Next</button>
  </nav>`;
}

/** A labelled control: the label names the input for assistive technology and for the tests. */
export function Field({ label, id, children, hint, wide }) {
  return html`<div class=${wide ? 'field wide' : 'field'}>
    <label for=${id}>${label}</label>
    ${children} ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
  </div>`;
}

/** A list's search: submitting it goes to `path` with the text as `query`, so the search has an address. */
export function SearchForm({ path, label, id, initial }) {
  const [text, setText] = useState(initial ?? '');
  return html`<form
    role="search"
    class="search"
    onSubmit=${(e) => {
      e.preventDefault();
      navigate(`${path}${query({ query: text.trim() })}`);
    }}
  >
    <${Field} label=${label} id=${id}><input id=${id} type="search" value=${text} onInput=${(e) => setText(e.currentTarget.value)} /><//>
    <button type="submit">Search</button>
  </form>`;
}

/** A polite status line for what an action did, and an alert for what it could not do. */
export function Outcome({ outcome }) {
  if (!outcome) return html`<p class="sr-only" role="status"></p>`;
  return outcome.ok ? html`<p class="state-done" role="status">${outcome.text}</p>` : html`<p class="alert" role="alert">${outcome.text}</p>`;
}

const LEVELS = { 1: 'View', 2: 'Edit', 4: 'Admin' };

/** Who a grant names, for people: a user's login, a team's name, or an org role. */
export function principalOf(grant) {
  if (grant.userId) return `User ${grant.userLogin || grant.userId}`;
  if (grant.teamId) return `Team ${grant.team || grant.teamId}`;
  return `Role ${grant.role}`;
}

const itemOf = (grant) => ({
  ...(grant.userId ? { userId: grant.userId } : grant.teamId ? { teamId: grant.teamId } : { role: grant.role }),
  permission: grant.permission,
});
const samePrincipal = (a, b) => (a.userId ?? null) === (b.userId ?? null) && (a.teamId ?? null) === (b.teamId ?? null) && (a.role ?? null) === (b.role ?? null);

/**
 * The grants on a resource: the direct ones (revocable when the user may write them), then the
 * inherited ones with the folder each comes from, and a form to grant a user, a team or an org
 * role a level. `extraInherited` adds grants the endpoint does not list (a folder's ancestors').
 * A POST replaces the direct set, so a grant or a revoke sends the whole set changed by one.
 */
export function PermissionsPanel({ title, path, canWrite, extraInherited = [], folderTitles = {}, idPrefix }) {
  const grants = useApi(path);
  const [outcome, setOutcome] = useState(null);
  const [busy, setBusy] = useState(false);

  async function replace(items, done) {
    setBusy(true);
    const result = await call('POST', path, { items });
    setBusy(false);
    if (result.ok) {
      setOutcome({ ok: true, text: done });
      grants.reload();
    } else setOutcome({ ok: false, text: messageOf(result) });
  }

  const direct = grants.data ? grants.data.filter((g) => !g.inherited) : [];
  const inherited = grants.data ? [...grants.data.filter((g) => g.inherited), ...extraInherited] : [];
  const from = (grant) => (grant.folderUid ? folderTitles[grant.folderUid] || grant.folderUid : '');

  function revoke(grant) {
    replace(direct.filter((g) => !samePrincipal(g, grant)).map(itemOf), `Revoked ${LEVELS[grant.permission]} from ${principalOf(grant)}.`);
  }

  return html`<section class="panel" aria-labelledby=${`${idPrefix}-heading`}>
    <h2 id=${`${idPrefix}-heading`}>${title}</h2>
    <${Loaded}
      resource=${grants}
      what="the permissions"
      render=${() => html`
        <h3>Direct grants</h3>
        ${
          direct.length === 0
            ? html`<${Empty}>No direct grants.<//>`
            : html`<ul class="grants">
                ${direct.map(
                  (grant) =>
                    html`<li>
                      <span>${principalOf(grant)}: <strong>${grant.permissionName}</strong></span>
                      ${
                        canWrite &&
                        html`<button type="button" class="secondary small" disabled=${busy} onClick=${() => revoke(grant)}>
                          Revoke<span class="sr-only"> ${grant.permissionName} from ${principalOf(grant)}</span>
                        </button>`
                      }
                    </li>`,
                )}
              </ul>`
        }
        <h3>Inherited grants</h3>
        ${
          inherited.length === 0
            ? html`<${Empty}>Nothing is inherited.<//>`
            : html`<ul class="grants">
                ${inherited.map(
                  (grant) =>
                    html`<li>
                      <span>${principalOf(grant)}: <strong>${grant.permissionName}</strong></span>
                      <span class="muted">
                        from folder${' '}
                        ${grant.folderUid ? html`<a href=${`/dashboards/f/${encodeURIComponent(grant.folderUid)}/`}>${from(grant)}</a>` : 'above'}
                      </span>
                    </li>`,
                )}
              </ul>`
        }
        ${
          canWrite &&
          html`<${GrantForm}
            idPrefix=${idPrefix}
            busy=${busy}
            onGrant=${(item, name) =>
              replace([...direct.filter((g) => !samePrincipal(g, item)).map(itemOf), item], `Granted ${LEVELS[item.permission]} to ${name}.`)}
          />`
        }
        <${Outcome} outcome=${outcome} />
      `}
    />
  </section>`;
}

/** Grant a level to an org member (found by login, email or name), a team, or an org role. */
function GrantForm({ idPrefix, busy, onGrant }) {
  const [kind, setKind] = useState('user');
  const [search, setSearch] = useState('');
  const [principal, setPrincipal] = useState('');
  const [level, setLevel] = useState('1');
  const people = useApi(kind === 'user' ? `/api/org/users/lookup?limit=50${search ? `&${new URLSearchParams({ query: search })}` : ''}` : null);
  const teams = useApi(kind === 'team' ? `/api/teams/search?perpage=100${search ? `&${new URLSearchParams({ query: search })}` : ''}` : null);
  const options =
    kind === 'role'
      ? ['Viewer', 'Editor', 'Admin'].map((role) => ({ value: role, label: role }))
      : kind === 'user'
        ? (people.data ?? []).map((u) => ({ value: u.userId, label: `${u.login}${u.name && u.name !== u.login ? ` (${u.name})` : ''}` }))
        : (teams.data?.teams ?? []).map((t) => ({ value: String(t.id), label: t.name }));

  function submit(event) {
    event.preventDefault();
    const chosen = principal || options[0]?.value;
    if (!chosen) return;
    const item = { [kind === 'user' ? 'userId' : kind === 'team' ? 'teamId' : 'role']: chosen, permission: Number(level) };
    const label = options.find((o) => o.value === chosen)?.label ?? chosen;
    onGrant(item, `${kind === 'user' ? 'User' : kind === 'team' ? 'Team' : 'Role'} ${label}`);
  }

  return html`<form class="grant-form" onSubmit=${submit} aria-label="Add a permission">
    <h3>Add a permission</h3>
    <div class="row">
      <${Field} label="Grant to" id=${`${idPrefix}-kind`}>
        <select
          id=${`${idPrefix}-kind`}
          value=${kind}
          onChange=${(e) => {
            setKind(e.currentTarget.value);
            setPrincipal('');
            setSearch('');
          }}
        >
          <option value="user">User</option>
          <option value="team">Team</option>
          <option value="role">Org role</option>
        </select>
      <//>
      ${
        kind !== 'role' &&
        html`<${Field} label=${kind === 'user' ? 'Find a user' : 'Find a team'} id=${`${idPrefix}-search`}>
          <input
            id=${`${idPrefix}-search`}
            type="search"
            value=${search}
            onInput=${(e) => {
              setSearch(e.currentTarget.value);
              setPrincipal('');
            }}
          />
        <//>`
      }
      <${Field} label=${kind === 'user' ? 'User' : kind === 'team' ? 'Team' : 'Role'} id=${`${idPrefix}-principal`}>
        <select id=${`${idPrefix}-principal`} value=${principal || options[0]?.value || ''} onChange=${(e) => setPrincipal(e.currentTarget.value)}>
          ${options.length === 0 && html`<option value="">No match</option>`} ${options.map((o) => html`<option value=${o.value}>${o.label}</option>`)}
        </select>
      <//>
      <${Field} label="Permission" id=${`${idPrefix}-level`}>
        <select id=${`${idPrefix}-level`} value=${level} onChange=${(e) => setLevel(e.currentTarget.value)}>
          <option value="1">View</option>
          <option value="2">Edit</option>
          <option value="4">Admin</option>
        </select>
      <//>
    </div>
    <button type="submit" disabled=${busy || options.length === 0}>Grant</button>
  </form>`;
}
