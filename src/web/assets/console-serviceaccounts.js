// The service accounts of the active org (`/admin/serviceaccounts`): search, create, disable and
// enable, and their tokens. A token's key is in the answer that issues it and nowhere else, so the
// console shows it once, until the user dismisses it, and never stores it.
import { useState } from 'preact/hooks';
import { call, messageOf, query, useApi } from '/assets/console-api.js';
import { Field, Forbidden, html, Loaded, Outcome, Page, SearchForm } from '/assets/console-ui.js';

const accountScope = (id) => [`serviceaccounts:id:${id}`];

function Tokens({ account, can }) {
  const tokens = useApi(`/api/serviceaccounts/${encodeURIComponent(account.id)}/tokens?perpage=1000`);
  const [issued, setIssued] = useState(null);
  const [outcome, setOutcome] = useState(null);
  const mayWrite = can('serviceaccounts:write', accountScope(account.id));
  const base = `/api/serviceaccounts/${encodeURIComponent(account.id)}/tokens`;

  async function issue(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const result = await call('POST', base, { name: form.elements.name.value });
    if (result.ok) {
      form.reset();
      setIssued(result.body);
      setOutcome(null);
      tokens.reload();
    } else setOutcome({ ok: false, text: messageOf(result) });
  }
  async function revoke(token) {
    const result = await call('DELETE', `${base}/${encodeURIComponent(token.id)}`);
    setOutcome(result.ok ? { ok: true, text: `Revoked token ${token.name}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) tokens.reload();
  }

  return html`<section class="panel" aria-labelledby="tokens-heading">
    <h2 id="tokens-heading">Tokens of ${account.name}</h2>
    ${
      issued &&
      html`<div class="note" role="status">
        <p>Token <strong>${issued.name}</strong> issued. Copy its key now: it is not shown again.</p>
        <p><code class="token-key" aria-label="Token key">${issued.key}</code></p>
        <button type="button" class="secondary small" onClick=${() => setIssued(null)}>I have copied the key</button>
      </div>`
    }
    <${Loaded}
      resource=${tokens}
      what="the tokens"
      isEmpty=${(data) => data.tokens.length === 0}
      empty="No tokens."
      render=${(data) =>
        html`<ul class="grants">
          ${data.tokens.map(
            (t) =>
              html`<li key=${t.id}>
                <span>${t.name} <span class="muted">${t.expiration ? `expires ${new Date(t.expiration).toLocaleString()}` : 'never expires'}</span></span>
                ${mayWrite && html`<button type="button" class="secondary small" onClick=${() => revoke(t)}>Revoke<span class="sr-only"> token ${t.name}</span></button>`}
              </li>`,
          )}
        </ul>`}
    />
    ${
      mayWrite &&
      html`<form class="grant-form" onSubmit=${issue} aria-label="Issue a token">
        <${Field} label="Token name" id="token-name"><input id="token-name" name="name" required maxlength="190" /><//>
        <button type="submit">Issue token</button>
      </form>`
    }
    <${Outcome} outcome=${outcome} />
  </section>`;
}

export function ServiceAccountsPage({ can, params }) {
  const allowed = can('serviceaccounts:read');
  const accounts = useApi(allowed ? `/api/serviceaccounts/search${query({ query: params.query, perpage: 100 })}` : null);
  const [outcome, setOutcome] = useState(null);
  if (!allowed) return html`<${Page} title="Service accounts"><${Forbidden} message="Reading service accounts needs serviceaccounts:read." /><//>`;
  const selected = accounts.data?.serviceAccounts.find((a) => String(a.id) === params.account);

  async function create(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const result = await call('POST', '/api/serviceaccounts', { name: form.elements.name.value, role: form.elements.role.value });
    setOutcome(result.ok ? { ok: true, text: `Created service account ${result.body.name}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) {
      form.reset();
      accounts.reload();
    }
  }
  async function toggle(account) {
    const result = await call('PATCH', `/api/serviceaccounts/${encodeURIComponent(account.id)}`, { isDisabled: !account.isDisabled });
    setOutcome(result.ok ? { ok: true, text: `${account.isDisabled ? 'Enabled' : 'Disabled'} ${account.name}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) accounts.reload();
  }

  return html`<${Page} title="Service accounts">
    <${SearchForm} key=${params.query ?? ''} path="/admin/serviceaccounts" label="Search service accounts" id="sa-search" initial=${params.query} />
    <${Outcome} outcome=${outcome} />
    <${Loaded}
      resource=${accounts}
      what="service accounts"
      isEmpty=${(data) => data.serviceAccounts.length === 0}
      empty=${params.query ? `No service account matches “${params.query}”.` : 'No service accounts yet.'}
      render=${(data) =>
        html`<div class="table-wrap">
          <table>
            <caption class="sr-only">
              Service accounts
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Tokens</th>
                <th scope="col">Status</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              ${data.serviceAccounts.map(
                (a) =>
                  html`<tr key=${a.id}>
                    <td>
                      <a
                        href=${`/admin/serviceaccounts${query({ ...params, account: a.id })}`}
                        aria-current=${String(a.id) === params.account ? 'page' : undefined}
                        >${a.name}</a
                      >
                    </td>
                    <td>${a.role}</td>
                    <td>${a.tokens}</td>
                    <td>${a.isDisabled ? 'Disabled' : 'Active'}</td>
                    <td class="row-actions">
                      ${
                        can('serviceaccounts:write', accountScope(a.id)) &&
                        html`<button type="button" class="secondary small" onClick=${() => toggle(a)}>
                          ${a.isDisabled ? 'Enable' : 'Disable'}<span class="sr-only"> ${a.name}</span>
                        </button>`
                      }
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>`}
    />
    ${selected && html`<${Tokens} key=${selected.id} account=${selected} can=${can} />`}
    ${
      can('serviceaccounts:create') &&
      html`<section class="panel" aria-labelledby="create-sa-heading">
        <h2 id="create-sa-heading">Create a service account</h2>
        <form onSubmit=${create} aria-label="Create a service account">
          <div class="row">
            <${Field} label="Name" id="sa-name"><input id="sa-name" name="name" required maxlength="190" /><//>
            <${Field} label="Role" id="sa-role">
              <select id="sa-role" name="role">
                <option>Viewer</option>
                <option>Editor</option>
                <option>Admin</option>
              </select>
            <//>
          </div>
          <button type="submit">Create service account</button>
        </form>
      </section>`
    }
  <//>`;
}
