// The admin console's shell: who is signed in and what they may do, the navigation (only the
// pages they may use), and the client-side routes. Each page is a module of its own.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ALL_USERS, call, messageOf, navigate, permissionChecker, useApi, useLocation } from '/assets/console-api.js';
import { ErrorState, html, Loading, Page } from '/assets/console-ui.js';
import { DashboardPage, FoldersPage } from '/assets/console-folders.js';
import { AuditPage } from '/assets/console-audit.js';
import { PolicyPage } from '/assets/console-policy.js';
import { UsersPage } from '/assets/console-users.js';
import { TeamsPage } from '/assets/console-teams.js';
import { ServiceAccountsPage } from '/assets/console-serviceaccounts.js';
import { OrgsPage, SERVER_WIDE } from '/assets/console-orgs.js';
import { RolesPage } from '/assets/console-roles.js';
import { ConnectorsPage } from '/assets/console-connectors.js';

/**
 * The console's pages: the address, the navigation label, and the permission that shows it in the
 * menu (none for the policy explorer: everyone may have their own decisions explained).
 */
const NAVIGATION = [
  { href: '/admin/folders', label: 'Folders', action: 'folders:read' },
  { href: '/admin/audit', label: 'Audit log', action: 'audit:read' },
  { href: '/admin/policy', label: 'Policy', action: null },
  { href: '/admin/users', label: 'Users', action: 'users:read', scopes: ALL_USERS },
  { href: '/admin/teams', label: 'Teams', action: 'teams:read' },
  { href: '/admin/serviceaccounts', label: 'Service accounts', action: 'serviceaccounts:read' },
  { href: '/admin/roles', label: 'Roles', action: 'roles:read' },
  { href: '/admin/connectors', label: 'Connectors', action: 'connectors:read' },
  { href: '/admin/orgs', label: 'Orgs', action: 'orgs:read', scopes: SERVER_WIDE },
];

/** The page an address names, with what it needs from the address. */
function route(path) {
  if (path === '/admin' || path === '/admin/') return { redirect: '/admin/folders' };
  let match = /^\/dashboards\/f\/([^/]+)\/?$/.exec(path);
  if (match) return { page: 'folders', uid: decodeURIComponent(match[1]) };
  match = /^\/d\/([^/]+)(?:\/[^/]*)?\/?$/.exec(path);
  if (match) return { page: 'dashboard', uid: decodeURIComponent(match[1]) };
  match = /^\/admin\/([a-z]+)\/?$/.exec(path);
  if (match) return { page: match[1] };
  return { page: 'missing' };
}

function NotFound() {
  return html`<${Page} title="Page not found">
    <p>The console has no page at this address.</p>
    <p><a href="/admin/folders">Go to the folders</a></p>
  <//>`;
}

function Console({ user, can }) {
  const location = useLocation();
  const target = route(location.path);
  useEffect(() => {
    if (target.redirect) navigate(target.redirect, { replace: true });
  }, [target.redirect]);
  const [signOutError, setSignOutError] = useState('');

  async function signOut() {
    const result = await call('POST', '/api/logout');
    if (result.ok || result.status === 401) window.location.assign('/login');
    else setSignOutError(messageOf(result));
  }

  const props = { user, can, params: location.params, uid: target.uid };
  const pages = {
    folders: FoldersPage,
    dashboard: DashboardPage,
    audit: AuditPage,
    policy: PolicyPage,
    users: UsersPage,
    teams: TeamsPage,
    serviceaccounts: ServiceAccountsPage,
    orgs: OrgsPage,
    roles: RolesPage,
    connectors: ConnectorsPage,
  };
  const Current = Object.hasOwn(pages, target.page) ? pages[target.page] : NotFound;
  const currentSection = target.page === 'dashboard' ? 'folders' : target.page;

  return html`
    <a class="skip-link" href="#content">Skip to content</a>
    <header class="topbar console-topbar">
      <a class="brand" href="/"><img src="/assets/favicon.svg" alt="" width="28" height="28" />Gatehouse</a>
      <nav aria-label="Console">
        <ul class="console-nav">
          ${NAVIGATION.filter((item) => !item.action || can(item.action, item.scopes)).map(
            (item) =>
              html`<li>
                <a href=${item.href} aria-current=${item.href === `/admin/${currentSection}` ? 'page' : undefined}>${item.label}</a>
              </li>`,
          )}
        </ul>
      </nav>
      <div class="console-user">
        <span class="muted">${user.name || user.login}</span>
        <button type="button" class="secondary small" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    ${signOutError && html`<p class="alert" role="alert">${signOutError}</p>`}
    <main id="content" class="console-main">${target.redirect ? null : html`<${Current} ...${props} />`}</main>
  `;
}

/** Follows a click on a link to another console address without reloading the page. */
function followConsoleLinks(event) {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target.closest && event.target.closest('a[href]');
  if (!link || link.target || link.hasAttribute('download')) return;
  const url = new URL(link.href, window.location.href);
  if (url.origin !== window.location.origin) return;
  if (!/^\/(admin(\/|$)|d\/|dashboards\/f\/)/.test(url.pathname)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}

function Start() {
  const user = useApi('/api/user');
  const permissions = useApi('/api/user/permissions');
  if (user.status === 'error' || permissions.status === 'error') {
    return html`<main id="content" class="console-main">
      <h1>Gatehouse console</h1>
      <${ErrorState} message=${user.message || permissions.message} retry=${() => (user.reload(), permissions.reload())} />
    </main>`;
  }
  if (user.status !== 'ok' || permissions.status !== 'ok') {
    return html`<main id="content" class="console-main">
      <h1>Gatehouse console</h1>
      <${Loading} what="the console" />
    </main>`;
  }
  return html`<${Console} user=${user.data} can=${permissionChecker(permissions.data)} />`;
}

document.addEventListener('click', followConsoleLinks);
const root = document.getElementById('console');
root.textContent = '';
render(html`<${Start} />`, root);
