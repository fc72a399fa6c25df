// The audit log (`/admin/audit`): filters by actor, action, target, outcome and time, kept in the
// address so a filtered view is a link; each entry links to its actor's entries and to its target.
import { useEffect, useState } from 'preact/hooks';
import { navigate, query, useApi } from '/assets/console-api.js';
import { Field, Forbidden, html, Loaded, Page, Pager } from '/assets/console-ui.js';

const FILTERS = ['actorId', 'action', 'targetType', 'targetId', 'outcome', 'from', 'to'];
const PER_PAGE = 50;

/** Where a target is shown in the console, when it has a page there. */
function targetHref(entry) {
  if (!entry.targetId) return null;
  if (entry.targetType === 'dashboard') return `/d/${encodeURIComponent(entry.targetId)}/`;
  if (entry.targetType === 'folder') return `/dashboards/f/${encodeURIComponent(entry.targetId)}/`;
  if (entry.targetType === 'user') return `/admin/users${query({ query: entry.targetName || entry.targetId })}`;
  return `/admin/audit${query({ targetType: entry.targetType, targetId: entry.targetId })}`;
}

/** A `datetime-local` value as the ISO instant the API takes. */
const instantOf = (local) => (local ? new Date(local).toISOString() : '');

/** Whether the window is phone-narrow, kept current as it is resized or turned. */
function useNarrow(query = '(max-width: 40rem)') {
  const [narrow, setNarrow] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const media = window.matchMedia(query);
    const update = () => setNarrow(media.matches);
    media.addEventListener('change', update);
    update();
    return () => media.removeEventListener('change', update);
  }, [query]);
  return narrow;
}

/**
 * The filters: a row of fields on a wide screen; on a phone, a compact form of two columns folded
 * into a "Filters" disclosure that says how many filters are in effect.
 */
function Filters({ params }) {
  const narrow = useNarrow();
  const active = FILTERS.filter((name) => params[name]).length;
  const [values, setValues] = useState(() => Object.fromEntries(FILTERS.map((name) => [name, params[name] ?? ''])));
  const set = (name) => (event) => setValues({ ...values, [name]: event.currentTarget.value });
  function submit(event) {
    event.preventDefault();
    navigate(`/admin/audit${query(values)}`);
  }
  function clear() {
    setValues(Object.fromEntries(FILTERS.map((name) => [name, ''])));
    navigate('/admin/audit');
  }
  const text = (name, label) =>
    html`<${Field} label=${label} id=${`audit-${name}`}><input id=${`audit-${name}`} value=${values[name]} onInput=${set(name)} /><//>`;
  const form = html`<form class=${narrow ? 'filters compact' : 'filters'} onSubmit=${submit} aria-label="Audit log filters">
    <div class="row">
      ${text('actorId', 'Actor ID')} ${text('action', 'Action')} ${text('targetType', 'Target type')} ${text('targetId', 'Target ID')}
      <${Field} label="Outcome" id="audit-outcome">
        <select id="audit-outcome" value=${values.outcome} onChange=${set('outcome')}>
          <option value="">Any</option>
          <option value="success">Success</option>
          <option value="failure">Failure</option>
        </select>
      <//>
      <${Field} label="From" id="audit-from" wide>
        <input
          id="audit-from"
          type="datetime-local"
          value=${values.from ? toLocal(values.from) : ''}
          onInput=${(e) => setValues({ ...values, from: instantOf(e.currentTarget.value) })}
        />
      <//>
      <${Field} label="To" id="audit-to" wide>
        <input
          id="audit-to"
          type="datetime-local"
          value=${values.to ? toLocal(values.to) : ''}
          onInput=${(e) => setValues({ ...values, to: instantOf(e.currentTarget.value) })}
        />
      <//>
    </div>
    <div class="actions">
      <button type="button" class="secondary" onClick=${clear}>Clear</button>
      <button type="submit">Filter</button>
    </div>
  </form>`;
  if (!narrow) return form;
  return html`<details class="filters-disclosure">
    <summary>Filters${active > 0 ? ` (${active} active)` : ''}</summary>
    ${form}
  </details>`;
}

/** An ISO instant as a `datetime-local` value in the browser's time zone. */
function toLocal(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

function Entries({ data, params }) {
  return html`<div class="table-wrap">
      <table>
        <caption class="sr-only">
          Audit log entries, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          ${data.items.map((entry) => {
            const href = targetHref(entry);
            return html`<tr key=${entry.id}>
              <td><time datetime=${entry.timestamp}>${new Date(entry.timestamp).toLocaleString()}</time></td>
              <td>
                ${
                  entry.actorId
                    ? html`<a href=${`/admin/audit${query({ actorId: entry.actorId })}`} title="This actor's entries">${entry.actorName || entry.actorId}</a>`
                    : entry.actorName || entry.actorType
                }
              </td>
              <td><code>${entry.action}</code></td>
              <td>
                ${entry.targetType ? html`${entry.targetType} ${href ? html`<a href=${href}>${entry.targetName || entry.targetId}</a>` : entry.targetName || entry.targetId}` : '—'}
              </td>
              <td><span class=${`badge ${entry.outcome}`}>${entry.outcome}</span></td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
    <${Pager}
      label="Audit log pages"
      total=${data.totalCount}
      page=${data.page}
      perPage=${data.perPage}
      onPage=${(page) => navigate(`/admin/audit${query({ ...params, page })}`)}
    />`;
}

export function AuditPage({ can, params }) {
  const allowed = can('audit:read');
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params[name]]));
  const entries = useApi(allowed ? `/api/admin/audit-log${query({ ...filters, page: params.page, perpage: PER_PAGE })}` : null);
  return html`<${Page} title="Audit log">
    ${
      allowed
        ? html`<${Filters} key=${JSON.stringify(filters)} params=${params} />
            <${Loaded}
              resource=${entries}
              what="the audit log"
              isEmpty=${(data) => data.items.length === 0}
              empty="No audit entries match these filters."
              render=${(data) => html`<${Entries} data=${data} params=${params} />`}
            />`
        : html`<${Forbidden} message="Reading the audit log needs audit:read, which server administrators hold." />`
    }
  <//>`;
}
