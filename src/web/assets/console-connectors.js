// Connectors (`/admin/connectors`, `?connector=<uid>` for one): the list, and a connector's page
// with its settings, a connectivity test, its permissions, its label rules, and its secrets.
// Secrets are write-only: the API says which are set and never their values, and the console
// keeps a typed value only in its input until the save, which then empties the form.
import { useState } from 'preact/hooks';
import { ALL_USERS, call, messageOf, query, useApi } from '/assets/console-api.js';
import { Empty, Field, Forbidden, html, Loaded, Outcome, Page, PermissionsPanel, SearchForm } from '/assets/console-ui.js';

const connectorScopes = (uid) => [`connectors:uid:${uid}`];
const connectorHref = (uid) => `/admin/connectors${query({ connector: uid })}`;
const connectorPath = (uid) => `/api/connectors/${encodeURIComponent(uid)}`;
/** The connector types whose reads label rules restrict (src/connectors/label-rules.ts). */
const RULED_TYPES = ['tsmetrics', 'logstore'];

/** Name, URL, default and the backend settings (jsonData, as JSON), saved at the version read. */
function Settings({ connector, mayWrite, onSaved }) {
  const [outcome, setOutcome] = useState(null);
  async function submit(event) {
    event.preventDefault();
    const form = event.currentTarget;
    let jsonData;
    try {
      jsonData = JSON.parse(form.elements.jsonData.value || '{}');
    } catch (err) {
      return setOutcome({ ok: false, text: `The settings are not JSON: ${err.message}` });
    }
    const body = { version: connector.version, name: form.elements.name.value, isDefault: form.elements.isDefault.checked, jsonData };
    if (connector.type !== 'changes') body.url = form.elements.url.value;
    const result = await call('PUT', connectorPath(connector.uid), body);
    setOutcome(result.ok ? { ok: true, text: `Saved ${result.body.name}.` } : { ok: false, text: messageOf(result) });
    if (result.ok) onSaved();
  }
  if (!mayWrite) {
    return html`<dl class="profile">
      <dt>Type</dt>
      <dd>${connector.type} (${connector.signalType})</dd>
      <dt>URL</dt>
      <dd>${connector.url || '—'}</dd>
      <dt>Default</dt>
      <dd>${connector.isDefault ? 'yes' : 'no'}</dd>
      <dt>Settings</dt>
      <dd><pre>${JSON.stringify(connector.jsonData, null, 2)}</pre></dd>
    </dl>`;
  }
  return html`<form onSubmit=${submit} aria-label="Connector settings">
    <p class="muted">Type ${connector.type} (${connector.signalType}), version ${connector.version}.</p>
    <div class="row">
      <${Field} label="Name" id="connector-name"><input id="connector-name" name="name" required maxlength="190" defaultValue=${connector.name} /><//>
      ${
        connector.type !== 'changes' &&
        html`<${Field} label="URL" id="connector-url"
          ><input id="connector-url" name="url" type="url" required maxlength="2048" defaultValue=${connector.url}
        /><//>`
      }
    </div>
    <div class="checkbox-field">
      <input id="connector-default" name="isDefault" type="checkbox" defaultChecked=${connector.isDefault} />
      <label for="connector-default">The default connector of its signal (${connector.signalType})</label>
    </div>
    <${Field} label="Backend settings (JSON)" id="connector-json" hint="Grafana's data-source jsonData fields: auth user, headers, TLS.">
      <textarea
        id="connector-json"
        name="jsonData"
        rows="5"
        spellcheck="false"
        aria-describedby="connector-json-hint"
        defaultValue=${JSON.stringify(connector.jsonData, null, 2)}
      ></textarea>
    <//>
    <button type="submit">Save settings</button>
    <${Outcome} outcome=${outcome} />
  </form>`;
}

/** The connectivity test: the backend's answer, or why it did not answer. */
function TestButton({ connector }) {
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  async function run() {
    setBusy(true);
    setResult(null);
    const answer = await call('POST', `${connectorPath(connector.uid)}/test`);
    setBusy(false);
    setResult({ ok: answer.ok && answer.body?.status === 'OK', text: messageOf(answer), status: answer.body?.status });
  }
  return html`<div class="test-row">
    <button type="button" class="secondary" disabled=${busy} onClick=${run}>${busy ? 'Testing…' : 'Test the connection'}</button>
    ${
      result
        ? result.ok
          ? html`<p class="state-done" role="status">Test passed: ${result.text}</p>`
          : html`<p class="alert" role="alert">Test failed: ${result.text}</p>`
        : html`<p class="sr-only" role="status"></p>`
    }
  </div>`;
}

/**
 * The secrets, write-only: each set one shows as set, and can be replaced or cleared; a new one
 * is added by name. A value typed in lives only in its password input, which the save empties.
 */
function Secrets({ connector, mayWrite, onSaved }) {
  const [replacing, setReplacing] = useState(null);
  const [outcome, setOutcome] = useState(null);
  const names = Object.keys(connector.secureJsonFields);

  async function save(secureJsonData, done, form) {
    const result = await call('PUT', connectorPath(connector.uid), { version: connector.version, secureJsonData });
    if (form) form.reset();
    setOutcome(result.ok ? { ok: true, text: done } : { ok: false, text: messageOf(result) });
    if (result.ok) {
      setReplacing(null);
      onSaved();
    }
  }
  function submitValue(event, name) {
    event.preventDefault();
    const form = event.currentTarget;
    const key = name ?? form.elements.secretName.value.trim();
    const value = form.elements.secretValue.value;
    if (!key || !value) return;
    save({ [key]: value }, `Secret ${key} saved.`, form);
  }

  return html`<section class="panel" aria-labelledby="secrets-heading">
    <h2 id="secrets-heading">Secrets</h2>
    <p class="muted">Secrets are write-only: the service never sends one back, so none is shown here.</p>
    ${
      names.length === 0
        ? html`<${Empty}>No secret is set.<//>`
        : html`<ul class="grants secrets">
            ${names.map(
              (name) =>
                html`<li key=${name}>
                  <span><code>${name}</code>: <span class="badge">set</span></span>
                  ${
                    mayWrite &&
                    html`<button
                        type="button"
                        class="secondary small"
                        onClick=${() => setReplacing(replacing === name ? null : name)}
                        aria-expanded=${replacing === name}
                      >
                        Replace<span class="sr-only"> ${name}</span>
                      </button>
                      <button type="button" class="secondary small" onClick=${() => save({ [name]: '' }, `Secret ${name} cleared.`)}>
                        Clear<span class="sr-only"> ${name}</span>
                      </button>`
                  }
                  ${
                    replacing === name &&
                    html`<form class="inline-form" onSubmit=${(e) => submitValue(e, name)} aria-label=${`Replace ${name}`}>
                      <${Field} label=${`New value of ${name}`} id="secret-replace-value">
                        <input id="secret-replace-value" name="secretValue" type="password" autocomplete="new-password" required />
                      <//>
                      <button type="submit" class="small">Save<span class="sr-only"> ${name}</span></button>
                    </form>`
                  }
                </li>`,
            )}
          </ul>`
    }
    ${
      mayWrite &&
      html`<form class="grant-form" onSubmit=${(e) => submitValue(e)} aria-label="Set a secret">
        <h3>Set a secret</h3>
        <div class="row">
          <${Field} label="Secret name" id="secret-name" hint="For example bearerToken, basicAuthPassword, httpHeaderValue1.">
            <input id="secret-name" name="secretName" required maxlength="190" list="secret-names" aria-describedby="secret-name-hint" />
          <//>
          <${Field} label="Secret value" id="secret-value">
            <input id="secret-value" name="secretValue" type="password" autocomplete="new-password" required />
          <//>
        </div>
        <datalist id="secret-names">
          ${['bearerToken', 'basicAuthPassword', 'httpHeaderValue1', 'tlsClientCert', 'tlsClientKey', 'tlsCACert'].map((n) => html`<option value=${n}></option>`)}
        </datalist>
        <button type="submit">Save secret</button>
      </form>`
    }
    <${Outcome} outcome=${outcome} />
  </section>`;
}

const RULE_KINDS = { role: 'Org role', team: 'Team', userId: 'User', serviceAccountId: 'Service account' };
const ORG_ROLES = ['None', 'Viewer', 'Editor', 'Admin'];
const kindOfRule = (rule) =>
  rule.role !== undefined ? 'role' : rule.teamId !== undefined ? 'team' : rule.userId !== undefined ? 'userId' : 'serviceAccountId';
const valueOfRule = (rule) => rule.role ?? rule.teamId ?? rule.userId ?? rule.serviceAccountId ?? '';
const ruleOf = (row) => ({ [row.kind === 'team' ? 'teamId' : row.kind]: row.principal, selector: row.selector.trim() });

/**
 * The label rules: one row per principal and selector. A save replaces the whole set; a 400
 * naming a rule's selector is shown under that rule's selector.
 */
function LabelRules({ connector, mayWrite, can }) {
  const path = `${connectorPath(connector.uid)}/label-rules`;
  const rules = useApi(path);
  const people = useApi(can('org.users:read', ALL_USERS) ? '/api/org/users/lookup?limit=100' : null);
  const teams = useApi(can('teams:read') ? '/api/teams/search?perpage=1000' : null);
  const accounts = useApi(can('serviceaccounts:read') ? '/api/serviceaccounts/search?perpage=1000' : null);
  const [rows, setRows] = useState(null);
  const [outcome, setOutcome] = useState(null);
  const [problem, setProblem] = useState(null);

  const choices = {
    role: ORG_ROLES.map((r) => ({ value: r, label: r })),
    team: (teams.data?.teams ?? []).map((t) => ({ value: String(t.id), label: t.name })),
    userId: (people.data ?? []).map((u) => ({ value: String(u.userId), label: u.login })),
    serviceAccountId: (accounts.data?.serviceAccounts ?? []).map((a) => ({ value: String(a.id), label: a.name })),
  };
  const nameOf = (kind, value) => choices[kind].find((c) => c.value === String(value))?.label ?? value;
  const current = rows ?? (rules.data?.rules ?? []).map((rule) => ({ kind: kindOfRule(rule), principal: String(valueOfRule(rule)), selector: rule.selector }));
  const set = (index, change) => {
    setRows(current.map((row, i) => (i === index ? { ...row, ...change } : row)));
    setProblem(null);
  };

  async function save(event) {
    event.preventDefault();
    const result = await call('PUT', path, { rules: current.map(ruleOf) });
    if (result.ok) {
      setRows(null);
      setProblem(null);
      setOutcome({ ok: true, text: `Saved ${result.body.rules.length} label ${result.body.rules.length === 1 ? 'rule' : 'rules'}.` });
      rules.reload();
      return;
    }
    const text = messageOf(result);
    const named = /^Body\.rules\[(\d+)\]\.selector/i.exec(text);
    setProblem(named ? { index: Number(named[1]), text } : null);
    setOutcome({ ok: false, text });
  }

  return html`<section class="panel" aria-labelledby="label-rules-heading">
    <h2 id="label-rules-heading">Label rules</h2>
    <p class="muted">
      Which series or log streams each principal may read, as a label-matcher set such as <code>{namespace="checkout"}</code>. Once a connector has a rule, a
      reader no rule names is refused (org and connector admins read everything).
    </p>
    <${Loaded}
      resource=${rules}
      what="the label rules"
      render=${() =>
        mayWrite
          ? html`<form onSubmit=${save} aria-label="Label rules" novalidate>
              ${current.length === 0 && html`<${Empty}>No label rules: every reader the permissions allow reads everything.<//>`}
              ${current.map((row, index) => {
                const error = problem && problem.index === index;
                return html`<div class="row rule-row" key=${index}>
                  <${Field} label=${`Principal kind ${index + 1}`} id=${`rule-kind-${index}`}>
                    <select
                      id=${`rule-kind-${index}`}
                      value=${row.kind}
                      onChange=${(e) => set(index, { kind: e.currentTarget.value, principal: choices[e.currentTarget.value][0]?.value ?? '' })}
                    >
                      ${Object.entries(RULE_KINDS).map(([value, label]) => html`<option value=${value}>${label}</option>`)}
                    </select>
                  <//>
                  <${Field} label=${`Principal ${index + 1}`} id=${`rule-principal-${index}`}>
                    <select id=${`rule-principal-${index}`} value=${row.principal} onChange=${(e) => set(index, { principal: e.currentTarget.value })}>
                      ${choices[row.kind].length === 0 && html`<option value="">None to choose</option>`}
                      ${!choices[row.kind].some((c) => c.value === row.principal) && row.principal && html`<option value=${row.principal}>${row.principal}</option>`}
                      ${choices[row.kind].map((c) => html`<option value=${c.value}>${c.label}</option>`)}
                    </select>
                  <//>
                  <div class="field">
                    <label for=${`rule-selector-${index}`}>${`Selector ${index + 1}`}</label>
                    <input
                      id=${`rule-selector-${index}`}
                      value=${row.selector}
                      required
                      maxlength="1000"
                      spellcheck="false"
                      aria-invalid=${error ? 'true' : undefined}
                      aria-describedby=${error ? `rule-selector-${index}-error` : undefined}
                      onInput=${(e) => set(index, { selector: e.currentTarget.value })}
                    />
                    ${error && html`<p class="field-error" id=${`rule-selector-${index}-error`}>${problem.text}</p>`}
                  </div>
                  <button type="button" class="secondary small" onClick=${() => setRows(current.filter((_, i) => i !== index))}>
                    Remove<span class="sr-only"> rule ${index + 1}</span>
                  </button>
                </div>`;
              })}
              <div class="actions">
                <button type="button" class="secondary" onClick=${() => setRows([...current, { kind: 'role', principal: 'Viewer', selector: '' }])}>
                  Add a rule
                </button>
                <button type="submit">Save label rules</button>
              </div>
            </form>`
          : current.length === 0
            ? html`<${Empty}>No label rules.<//>`
            : html`<ul class="grants">
                ${current.map(
                  (row) =>
                    html`<li>
                      <span>${RULE_KINDS[row.kind]} <strong>${nameOf(row.kind, row.principal)}</strong>: <code>${row.selector}</code></span>
                    </li>`,
                )}
              </ul>`}
    />
    <${Outcome} outcome=${outcome} />
  </section>`;
}

function ConnectorDetail({ uid, can, onChanged }) {
  const connector = useApi(connectorPath(uid));
  const scopes = connectorScopes(uid);
  const mayWrite = can('connectors:write', scopes);
  const reload = () => {
    connector.reload();
    onChanged();
  };
  return html`<${Loaded}
    resource=${connector}
    what="the connector"
    render=${(data) => html`
      <section class="panel" aria-labelledby="connector-heading">
        <h2 id="connector-heading">${data.name}</h2>
        <${Settings} connector=${data} mayWrite=${mayWrite} onSaved=${reload} />
        ${mayWrite && data.type !== 'changes' && html`<${TestButton} key=${data.uid} connector=${data} />`}
      </section>
      <${Secrets} connector=${data} mayWrite=${mayWrite} onSaved=${reload} />
      ${
        can('connectors.permissions:read', scopes) &&
        html`<${PermissionsPanel}
          title="Connector permissions"
          idPrefix="connector-perms"
          path=${`${connectorPath(uid)}/permissions`}
          canWrite=${can('connectors.permissions:write', scopes)}
        />`
      }
      ${
        RULED_TYPES.includes(data.type) &&
        can('connectors.permissions:read', scopes) &&
        html`<${LabelRules} key=${data.uid} connector=${data} mayWrite=${can('connectors.permissions:write', scopes)} can=${can} />`
      }
    `}
  />`;
}

export function ConnectorsPage({ can, params }) {
  const allowed = can('connectors:read');
  const connectors = useApi(allowed ? `/api/connectors${query({ query: params.query, perpage: 100 })}` : null);
  if (!allowed) return html`<${Page} title="Connectors"><${Forbidden} message="Reading connectors needs connectors:read." /><//>`;
  return html`<${Page} title="Connectors">
    <${SearchForm} key=${params.query ?? ''} path="/admin/connectors" label="Search connectors" id="connectors-search" initial=${params.query} />
    <${Loaded}
      resource=${connectors}
      what="connectors"
      isEmpty=${(data) => data.connectors.length === 0}
      empty=${params.query ? `No connector matches “${params.query}”.` : 'No connectors you may see.'}
      render=${(data) =>
        html`<div class="table-wrap">
          <table>
            <caption class="sr-only">
              Connectors
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">URL</th>
                <th scope="col">Default</th>
              </tr>
            </thead>
            <tbody>
              ${data.connectors.map(
                (c) =>
                  html`<tr key=${c.uid}>
                    <td>
                      <a href=${connectorHref(c.uid)} aria-current=${c.uid === params.connector ? 'page' : undefined}>${c.name}</a>
                    </td>
                    <td>${c.type}</td>
                    <td>${c.url || '—'}</td>
                    <td>${c.isDefault ? 'yes' : ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>`}
    />
    ${params.connector && html`<${ConnectorDetail} key=${params.connector} uid=${params.connector} can=${can} onChanged=${connectors.reload} />`}
  <//>`;
}
