// Folders and dashboards: the folder tree (one level loaded at a time, eight deep), a folder's
// page (`/dashboards/f/<uid>/`, the API's folder url) with its dashboards, alert rules and
// permissions, and a dashboard's page (`/d/<uid>/<slug>`, the API's dashboard url).
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, folderScopes, useApi } from '/assets/console-api.js';
import { Empty, html, Loaded, Page, PermissionsPanel } from '/assets/console-ui.js';

/** How deep the tree goes: the API's folder nesting limit. */
const MAX_DEPTH = 8;

const folderHref = (uid) => `/dashboards/f/${encodeURIComponent(uid)}/`;

/**
 * One level of the tree, loaded when its parent is opened. `opening` holds the ancestors of the
 * folder the address selects: those open by themselves, so the selected folder is in view.
 */
function TreeLevel({ parentUid, depth, selected, opening }) {
  const level = useApi(`/api/folders?perpage=1000${parentUid ? `&parentUid=${encodeURIComponent(parentUid)}` : ''}`);
  return html`<${Loaded}
    resource=${level}
    what="folders"
    isEmpty=${(data) => data.folders.length === 0}
    empty=${parentUid ? 'No subfolders.' : 'No folders you may see.'}
    render=${(data) =>
      html`<ul class=${depth === 1 ? 'tree' : 'tree-level'}>
        ${data.folders.map((folder) => html`<${TreeNode} key=${folder.uid} folder=${folder} depth=${depth} selected=${selected} opening=${opening} />`)}
      </ul>`}
  />`;
}

function TreeNode({ folder, depth, selected, opening }) {
  const [open, setOpen] = useState(opening.includes(folder.uid));
  const link = useRef(null);
  const isSelected = selected === folder.uid;
  // An ancestor of the selected folder opens, also when the selection arrives after it is drawn.
  useEffect(() => {
    if (opening.includes(folder.uid)) setOpen(true);
  }, [opening.join('/')]);
  // The selected folder's entry is scrolled into view and takes the focus once it is drawn.
  useEffect(() => {
    if (!isSelected || !link.current) return;
    link.current.scrollIntoView({ block: 'nearest' });
    link.current.focus({ preventScroll: true });
  }, [isSelected]);
  const childrenId = `tree-${folder.uid}`;
  return html`<li>
    <div class="tree-item">
      ${
        depth < MAX_DEPTH
          ? html`<button type="button" class="tree-toggle" aria-expanded=${open} aria-controls=${childrenId} onClick=${() => setOpen(!open)}>
              <span aria-hidden="true">${open ? '▾' : '▸'}</span><span class="sr-only">${open ? 'Close' : 'Open'} ${folder.title}</span>
            </button>`
          : html`<span class="tree-toggle" aria-hidden="true"></span>`
      }
      <a href=${folderHref(folder.uid)} ref=${link} aria-current=${isSelected ? 'page' : undefined}>${folder.title}</a>
    </div>
    ${open && html`<div id=${childrenId}><${TreeLevel} parentUid=${folder.uid} depth=${depth + 1} selected=${selected} opening=${opening} /></div>`}
  </li>`;
}

/**
 * The folder `uid` and its ancestors, nearest first, read from the API one parent at a time:
 * where a folder's inherited grants come from. Null while loading; a folder the user may not
 * read ends the chain.
 */
function useFolderChain(uid) {
  const [state, setState] = useState({ uid: undefined, chain: null });
  useEffect(() => {
    let current = true;
    (async () => {
      const folders = [];
      let next = uid;
      while (next && folders.length < MAX_DEPTH) {
        const result = await call('GET', `/api/folders/${encodeURIComponent(next)}`);
        if (!result.ok) break;
        folders.push(result.body);
        next = result.body.parentUid;
      }
      if (current) setState({ uid, chain: folders });
    })();
    return () => {
      current = false;
    };
  }, [uid]);
  // a chain read for another folder is no answer for this one
  return state.uid === uid ? state.chain : null;
}

/** The direct grants of each ancestor folder, marked with the folder they come from. */
function useAncestorGrants(ancestors) {
  const [grants, setGrants] = useState([]);
  const key = ancestors.map((folder) => folder.uid).join('/');
  useEffect(() => {
    let current = true;
    Promise.all(
      ancestors.map(async (folder) => {
        const result = await call('GET', `/api/folders/${encodeURIComponent(folder.uid)}/permissions`);
        return result.ok ? result.body.filter((g) => !g.inherited).map((g) => ({ ...g, inherited: true, folderUid: folder.uid })) : [];
      }),
    ).then((lists) => current && setGrants(lists.flat()));
    return () => {
      current = false;
    };
  }, [key]);
  return grants;
}

const titlesOf = (chain) => Object.fromEntries((chain ?? []).map((folder) => [folder.uid, folder.title]));

function Breadcrumbs({ chain }) {
  if (!chain || chain.length === 0) return null;
  const path = [...chain].reverse();
  return html`<nav aria-label="Breadcrumb" class="breadcrumbs">
    <ol>
      <li><a href="/admin/folders">Folders</a></li>
      ${path.map(
        (folder, index) =>
          html`<li>
            <a href=${folderHref(folder.uid)} aria-current=${index === path.length - 1 ? 'page' : undefined}>${folder.title}</a>
          </li>`,
      )}
    </ol>
  </nav>`;
}

function FolderContents({ uid, can, chain }) {
  const dashboards = useApi(`/api/search?type=dash-db&perpage=1000&folderUIDs=${encodeURIComponent(uid)}`);
  const rules = useApi(`/api/v1/provisioning/alert-rules?perpage=1000&folderUID=${encodeURIComponent(uid)}`);
  const scopes = folderScopes(chain.map((folder) => folder.uid));
  const ancestorGrants = useAncestorGrants(chain.slice(1));
  const titles = titlesOf(chain);
  return html`
    <section class="panel" aria-labelledby="dashboards-heading">
      <h2 id="dashboards-heading">Dashboards</h2>
      <${Loaded}
        resource=${dashboards}
        what="dashboards"
        isEmpty=${(data) => data.hits.length === 0}
        empty="No dashboards in this folder."
        render=${(data) =>
          html`<ul class="items">
            ${data.hits.map((hit) => html`<li key=${hit.uid}><a href=${hit.url}>${hit.title}</a></li>`)}
          </ul>`}
      />
    </section>
    <section class="panel" aria-labelledby="rules-heading">
      <h2 id="rules-heading">Alert rules</h2>
      <${Loaded}
        resource=${rules}
        what="alert rules"
        isEmpty=${(data) => data.alertRules.length === 0}
        empty="No alert rules in this folder."
        render=${(data) =>
          html`<ul class="items">
            ${data.alertRules.map((rule) => html`<li key=${rule.uid}>${rule.title}</li>`)}
          </ul>`}
      />
    </section>
    ${
      can('folders.permissions:read', scopes) &&
      html`<${PermissionsPanel}
        title="Folder permissions"
        idPrefix="folder-perms"
        path=${`/api/folders/${encodeURIComponent(uid)}/permissions`}
        canWrite=${can('folders.permissions:write', scopes)}
        extraInherited=${ancestorGrants}
        folderTitles=${titles}
      />`
    }
    ${
      can('alert.rules.permissions:read', scopes) &&
      html`<${PermissionsPanel}
        title="Alert rule permissions"
        idPrefix="rule-perms"
        path=${`/api/access-control/alert.rules/${encodeURIComponent(uid)}/permissions`}
        canWrite=${can('alert.rules.permissions:write', scopes)}
        folderTitles=${titles}
      />`
    }
  `;
}

function FolderDetail({ uid, can, chain }) {
  if (chain === null) return html`<p class="state-loading" role="status">Loading the folder…</p>`;
  if (chain.length === 0) {
    return html`<div class="state-error" role="alert"><p>Folder ${uid} was not found, or you may not see it.</p></div>`;
  }
  const folder = chain[0];
  return html`<${Breadcrumbs} chain=${chain} />
    <h2 class="folder-title">${folder.title}</h2>
    ${folder.description && html`<p>${folder.description}</p>`}
    <${FolderContents} key=${uid} uid=${uid} can=${can} chain=${chain} />`;
}

/** The tree beside the selected folder's page; the tree opens down to the folder the address names. */
export function FoldersPage({ uid, can }) {
  const chain = useFolderChain(uid || null);
  const opening = chain ? chain.slice(1).map((folder) => folder.uid) : [];
  return html`<${Page} title="Folders">
    <div class="split">
      <nav class="tree-pane" aria-label="Folder tree">
        <${TreeLevel} parentUid=${null} depth=${1} selected=${uid} opening=${opening} />
      </nav>
      <div class="detail-pane">
        ${
          uid
            ? html`<${FolderDetail} key=${uid} uid=${uid} can=${can} chain=${chain} />`
            : html`<${Empty}>Choose a folder in the tree to see its dashboards, alert rules and permissions.<//>`
        }
      </div>
    </div>
  <//>`;
}

export function DashboardPage({ uid, can }) {
  const dashboard = useApi(`/api/dashboards/uid/${encodeURIComponent(uid)}`);
  const folderUid = dashboard.data?.meta.folderUid || null;
  const chain = useFolderChain(folderUid);
  return html`<${Page} title=${dashboard.data ? `Dashboard ${dashboard.data.dashboard.title}` : 'Dashboard'}>
    <${Loaded}
      resource=${dashboard}
      what="the dashboard"
      render=${({ dashboard: model, meta }) => {
        const scopes = [`dashboards:uid:${uid}`, ...folderScopes((chain ?? []).map((folder) => folder.uid))];
        return html`
          <${Breadcrumbs} chain=${chain} />
          <dl class="profile">
            <dt>Title</dt>
            <dd>${model.title}</dd>
            <dt>UID</dt>
            <dd><code>${uid}</code></dd>
            <dt>Folder</dt>
            <dd>${meta.folderUid ? html`<a href=${folderHref(meta.folderUid)}>${meta.folderTitle}</a>` : meta.folderTitle}</dd>
            <dt>Version</dt>
            <dd>${meta.version}</dd>
            <dt>Created</dt>
            <dd>${new Date(meta.created).toLocaleString()}</dd>
            <dt>Updated</dt>
            <dd>${new Date(meta.updated).toLocaleString()}</dd>
            <dt>You may</dt>
            <dd>${['view', meta.canEdit && 'edit', meta.canAdmin && 'administer', meta.canDelete && 'delete'].filter(Boolean).join(', ')}</dd>
          </dl>
          ${
            chain !== null &&
            can('dashboards.permissions:read', scopes) &&
            html`<${PermissionsPanel}
              title="Dashboard permissions"
              idPrefix="dash-perms"
              path=${`/api/dashboards/uid/${encodeURIComponent(uid)}/permissions`}
              canWrite=${can('dashboards.permissions:write', scopes)}
              folderTitles=${titlesOf(chain)}
            />`
          }
        `;
      }}
    />
  <//>`;
}
