// The orgs of the server (`/admin/orgs`, server admins): search, create, and an org's people
// with their roles.
import { useState } from 'preact/hooks';
import { call, messageOf, query, useApi } from '/assets/console-api.js';
import { Field, Forbidden, html, Loaded, Outcome, Page, SearchForm } from '/assets/console-ui.js';

/** Listing the orgs is a server-wide action: held on everything, as a server admin holds it. */
export const SERVER_WIDE = ['*'];

function People({ org }) {
  const people = useApi(`/api/orgs/${encodeURIComponent(org.id)}/users?perpage=1000`);
  return html`<section class="panel" aria-labelledby="org-people-heading">
    <h2 id="org-people-heading">People of ${org.name}</h2>
    <${Loaded}
      resource=${people}
      what="the people"
      isEmpty=${(data) => data.orgUsers.length === 0}
      empty="Nobody belongs to this org."
      render=${(data) =>
        html`<ul class="grants">
          ${data.orgUsers.map(
            (m) =>
              html`<li key=${m.userId}>
                <span>${m.login}${m.name && m.name !== m.login ? ` (${m.name})` : ''}: <strong>${m.role}</strong></span>
              </li>`,
          )}
        </ul>`}
    />
  </section>`;
}

export function OrgsPage({ can, params }) {
  const allowed = can('orgs:read', SERVER_WIDE);
  const orgs = useApi(allowed ? `/api/orgs${query({ query: params.query, perpage: 100 })}` : null);
  const [outcome, setOutcome] = useState(null);
  if (!allowed)
    return html`<${Page} title="Orgs"><${Forbidden} message="Listing the orgs of the server needs orgs:read, which server administrators hold." /><//>`;
  const selected = orgs.data?.orgs.find((o) => String(o.id) === params.org);

  async function create(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const result = await call('POST', '/api/orgs', { name: form.elements.name.value });
    setOutcome(result.ok ? { ok: true, text: `Created org ${form.elements.name.value}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) {
      form.reset();
      orgs.reload();
    }
  }

  return html`<${Page} title="Orgs">
    <${SearchForm} key=${params.query ?? ''} path="/admin/orgs" label="Search orgs" id="orgs-search" initial=${params.query} />
    <${Loaded}
      resource=${orgs}
      what="orgs"
      isEmpty=${(data) => data.orgs.length === 0}
      empty=${params.query ? `No org matches “${params.query}”.` : 'No orgs.'}
      render=${(data) =>
        html`<ul class="items">
          ${data.orgs.map(
            (o) =>
              html`<li key=${o.id}>
                <a href=${`/admin/orgs${query({ ...params, org: o.id })}`} aria-current=${String(o.id) === params.org ? 'page' : undefined}>${o.name}</a>
              </li>`,
          )}
        </ul>`}
    />
    ${selected && html`<${People} key=${selected.id} org=${selected} />`}
    ${
      can('orgs:create') &&
      html`<section class="panel" aria-labelledby="create-org-heading">
        <h2 id="create-org-heading">Create an org</h2>
        <form onSubmit=${create} aria-label="Create an org">
          <${Field} label="Org name" id="org-name"><input id="org-name" name="name" required maxlength="190" /><//>
          <button type="submit">Create org</button>
        </form>
        <${Outcome} outcome=${outcome} />
      </section>`
    }
  <//>`;
}
