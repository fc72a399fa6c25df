// The policy explorer (`/admin/policy`): a decision explained (principal, action, resource →
// allow or deny with the policy's reasons), who holds an action on a resource, a user's
// permissions, the org's data document the policy reads, and the policy build's manifest.
// Every answer is the policy's own, through the API; nothing here decides anything.
import { useState } from 'preact/hooks';
import { actionsOf, call, messageOf, query, useApi } from '/assets/console-api.js';
import { Empty, ErrorState, Field, Forbidden, html, Loaded, Page } from '/assets/console-ui.js';

const RESOURCE_KINDS = ['folders', 'dashboards', 'connectors', 'alert.rules', 'teams'];

/** A user of the org, found by login, email or name; empty means the signed-in user. */
function UserPicker({ id, label, value, onChange, allowSelf = true }) {
  const [search, setSearch] = useState('');
  const people = useApi(`/api/org/users/lookup?limit=50${search ? `&${new URLSearchParams({ query: search })}` : ''}`);
  const options = (people.data ?? []).map((u) => ({ value: u.userId, label: `${u.login}${u.name && u.name !== u.login ? ` (${u.name})` : ''}` }));
  if (value && !options.some((o) => o.value === value)) options.unshift({ value, label: value });
  return html`<div class="row">
    <${Field} label=${`Find ${label.toLowerCase()}`} id=${`${id}-search`}>
      <input id=${`${id}-search`} type="search" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} />
    <//>
    <${Field} label=${label} id=${id}>
      <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
        ${allowSelf ? html`<option value="">Me</option>` : html`<option value="">Choose a user</option>`}
        ${options.map((o) => html`<option value=${o.value}>${o.label}</option>`)}
      </select>
    <//>
  </div>`;
}

function ActionSelect({ id, actions, value, onChange }) {
  return html`<${Field} label="Action" id=${id}>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)} required>
      ${actions.map((action) => html`<option value=${action}>${action}</option>`)}
    </select>
  <//>`;
}

/** How a member comes to hold a role, in words. */
function routeOf(via) {
  if (!via) return '';
  const parts = [];
  if (via.direct) parts.push('granted directly');
  if (via.orgRole) parts.push(`as ${via.orgRole}`);
  if (via.teams?.length) parts.push(`through team ${via.teams.join(', ')}`);
  if (via.serverAdmin) parts.push('as server admin');
  return parts.join('; ');
}

/** One grant that gives the action: the role and scope, where it is inherited from, and how it is held. */
function grantText(grant) {
  if ('reason' in grant) return grant.reason;
  const from = grant.inheritedFrom ? `, inherited from ${grant.inheritedFrom}` : '';
  if ('legacyAcl' in grant) return `legacy ACL level ${grant.legacyAcl.level} of ${grant.legacyAcl.principal} on ${grant.scope}${from}`;
  const held = routeOf(grant.via);
  return `${grant.roleUid ? `role ${grant.roleUid} gives ` : ''}${grant.action} on ${grant.scope}${from}${held ? ` (${held})` : ''}`;
}

const Grants = ({ grants }) =>
  html`<ul class="grant-reasons">
    ${grants.map((grant) => html`<li>${grantText(grant)}</li>`)}
  </ul>`;

function resourceOf(kind, uid) {
  if (!kind || !uid) return undefined;
  if (kind === 'teams') return { kind, id: uid };
  // the alert rules of a folder are decided on the folder
  return { kind: kind === 'alert.rules' ? 'folders' : kind, uid };
}

function Explain({ actions, params }) {
  const [userId, setUserId] = useState(params.userId ?? '');
  const [action, setAction] = useState(params.action ?? 'dashboards:read');
  const [kind, setKind] = useState(params.kind ?? 'dashboards');
  const [uid, setUid] = useState(params.uid ?? '');
  const [answer, setAnswer] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    const resource = resourceOf(kind, uid.trim());
    const result = await call('POST', '/api/access-control/evaluate', { action, ...(resource && { resource }), ...(userId && { userId }) });
    setBusy(false);
    setAnswer(result.ok ? { decision: result.body } : { message: messageOf(result), forbidden: result.status === 403 });
  }

  return html`<section class="panel" aria-labelledby="explain-heading">
    <h2 id="explain-heading">Explain a decision</h2>
    <form onSubmit=${submit} aria-label="Explain a decision">
      <${UserPicker} id="explain-user" label="Principal" value=${userId} onChange=${setUserId} />
      <div class="row">
        <${ActionSelect} id="explain-action" actions=${actions} value=${action} onChange=${setAction} />
        <${Field} label="Resource kind" id="explain-kind">
          <select id="explain-kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
            <option value="">None (the org)</option>
            ${RESOURCE_KINDS.map((k) => html`<option value=${k}>${k}</option>`)}
          </select>
        <//>
        <${Field} label="Resource UID" id="explain-uid">
          <input id="explain-uid" value=${uid} onInput=${(e) => setUid(e.currentTarget.value)} />
        <//>
      </div>
      <button type="submit" disabled=${busy}>Explain</button>
    </form>
    <div aria-live="polite">
      ${answer?.message && (answer.forbidden ? html`<${Forbidden} message=${answer.message} />` : html`<${ErrorState} message=${answer.message} />`)}
      ${
        answer?.decision &&
        html`<div class="decision">
          <p class=${`verdict ${answer.decision.allow ? 'allow' : 'deny'}`}><strong>${answer.decision.allow ? 'Allowed' : 'Denied'}</strong></p>
          ${
            answer.decision.reasons.length === 0
              ? html`<${Empty}>The policy gave no reason.<//>`
              : html`<ol class="reasons">
                  ${answer.decision.reasons.map((reason) => html`<li>${reason}</li>`)}
                </ol>`
          }
          <details>
            <summary>Reasons as data</summary>
            <pre>${JSON.stringify(answer.decision.reasonDetails, null, 2)}</pre>
          </details>
        </div>`
      }
    </div>
  </section>`;
}

function Holders({ answer }) {
  const none = ['users', 'serviceAccounts', 'teams', 'roles', 'orgRoles'].every((key) => answer[key].length === 0);
  if (none) return html`<${Empty}>Nobody holds ${answer.action} on this resource.<//>`;
  return html`<div class="holders">
    ${
      answer.users.length > 0 &&
      html`<h3>Users</h3>
        <ul>
          ${answer.users.map((u) => html`<li><strong>${u.login}</strong>${u.name !== u.login ? ` (${u.name})` : ''}<${Grants} grants=${u.grants} /></li>`)}
        </ul>`
    }
    ${
      answer.serviceAccounts.length > 0 &&
      html`<h3>Service accounts</h3>
        <ul>
          ${answer.serviceAccounts.map((u) => html`<li><strong>${u.name}</strong><${Grants} grants=${u.grants} /></li>`)}
        </ul>`
    }
    ${
      answer.teams.length > 0 &&
      html`<h3>Teams</h3>
        <ul>
          ${answer.teams.map((t) => html`<li><strong>${t.name}</strong><${Grants} grants=${t.grants} /></li>`)}
        </ul>`
    }
    ${
      answer.roles.length > 0 &&
      html`<h3>Roles</h3>
        <ul>
          ${answer.roles.map((r) => html`<li><strong>${r.uid}</strong><${Grants} grants=${r.grants} /></li>`)}
        </ul>`
    }
    ${
      answer.orgRoles.length > 0 &&
      html`<h3>Org roles</h3>
        <ul>
          ${answer.orgRoles.map((r) => html`<li><strong>${r.role}</strong><${Grants} grants=${r.grants} /></li>`)}
        </ul>`
    }
  </div>`;
}

function WhoCan({ actions, params }) {
  const [kind, setKind] = useState(params.kind && RESOURCE_KINDS.includes(params.kind) ? params.kind : 'dashboards');
  const [uid, setUid] = useState(params.uid ?? '');
  const [action, setAction] = useState(params.action ?? 'dashboards:read');
  const [path, setPath] = useState(null);
  const answer = useApi(path);
  function submit(event) {
    event.preventDefault();
    if (!uid.trim()) return;
    setPath(`/api/access-control/resources/${encodeURIComponent(kind)}/${encodeURIComponent(uid.trim())}/principals${query({ action })}`);
    if (path) answer.reload();
  }
  return html`<section class="panel" aria-labelledby="whocan-heading">
    <h2 id="whocan-heading">Who can</h2>
    <form onSubmit=${submit} aria-label="Who can">
      <div class="row">
        <${Field} label="Kind" id="whocan-kind">
          <select id="whocan-kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
            ${RESOURCE_KINDS.map((k) => html`<option value=${k}>${k}</option>`)}
          </select>
        <//>
        <${Field} label="UID" id="whocan-uid"><input id="whocan-uid" value=${uid} required onInput=${(e) => setUid(e.currentTarget.value)} /><//>
        <${ActionSelect} id="whocan-action" actions=${actions} value=${action} onChange=${setAction} />
      </div>
      <button type="submit">Find who can</button>
    </form>
    <div aria-live="polite">
      <${Loaded} resource=${answer} what="who can" render=${(data) => html`<${Holders} answer=${data} />`} />
    </div>
  </section>`;
}

function UserPermissions() {
  const [userId, setUserId] = useState('');
  const permissions = useApi(userId ? `/api/access-control/users/${encodeURIComponent(userId)}/permissions` : '/api/user/permissions');
  return html`<section class="panel" aria-labelledby="perms-heading">
    <h2 id="perms-heading">A principal's permissions</h2>
    <${UserPicker} id="perms-user" label="User" value=${userId} onChange=${setUserId} />
    <${Loaded}
      resource=${permissions}
      what="the permissions"
      isEmpty=${(data) => Object.keys(data).length === 0}
      empty="No permissions in this org."
      render=${(data) =>
        html`<div class="table-wrap">
          <table>
            <caption class="sr-only">
              Actions and the scopes they are held on
            </caption>
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">Scopes</th>
              </tr>
            </thead>
            <tbody>
              ${Object.keys(data)
                .sort()
                .map(
                  (action) =>
                    html`<tr key=${action}>
                      <td><code>${action}</code></td>
                      <td>${data[action].map((s) => html`<code class="scope">${s || '(any)'}</code> `)}</td>
                    </tr>`,
                )}
            </tbody>
          </table>
        </div>`}
    />
  </section>`;
}

function DataDocument() {
  const [path, setPath] = useState(null);
  const document = useApi(path);
  return html`<section class="panel" aria-labelledby="data-heading">
    <h2 id="data-heading">The org's data document</h2>
    <p class="muted">What the policy reads for this org: members, teams, roles, folders, dashboards and grants.</p>
    ${
      path === null
        ? html`<button type="button" class="secondary" onClick=${() => setPath('/api/access-control/policy-data')}>Load the data document</button>`
        : html`<${Loaded}
            resource=${document}
            what="the data document"
            render=${(data) => html`<pre class="document" tabindex="0" aria-label="Data document">${JSON.stringify(data, null, 2)}</pre>`}
          />`
    }
  </section>`;
}

function Manifest() {
  const manifest = useApi('/assets/policy-manifest.json');
  return html`<section class="panel" aria-labelledby="manifest-heading">
    <h2 id="manifest-heading">Policy build</h2>
    <${Loaded}
      resource=${manifest}
      what="the policy build"
      render=${(data) =>
        html`<dl class="profile">
          <dt>OPA version</dt>
          <dd>${data.opaVersion}</dd>
          <dt>Source hash</dt>
          <dd><code>${data.sourceHash}</code></dd>
          <dt>Entry points</dt>
          <dd>${data.entrypoints.join(', ')}</dd>
        </dl>`}
    />
  </section>`;
}

export function PolicyPage({ can, params }) {
  const openapi = useApi('/api/openapi.json');
  const mayExport = can('policy.data:read');
  return html`<${Page} title="Policy">
    <${Loaded}
      resource=${openapi}
      what="the actions"
      render=${(data) => {
        const actions = actionsOf(data);
        return html`
          <${Explain} actions=${actions} params=${params} />
          ${
            mayExport
              ? html`<${WhoCan} actions=${actions} params=${params} />`
              : html`<section class="panel">
                  <h2>Who can</h2>
                  <${Forbidden} message="Who-can needs policy.data:read." />
                </section>`
          }
          <${UserPermissions} />
          ${mayExport && html`<${DataDocument} />`}
          <${Manifest} />
        `;
      }}
    />
  <//>`;
}
