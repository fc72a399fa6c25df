// The console's API client and what it knows of the signed-in user. The console has no powers of
// its own: every call is the user's, with their session cookie (the browser adds the Origin the
// API's cross-site check wants), and what the user may do comes from GET /api/user/permissions.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '/assets/api.js';

export { messageOf };

/** Calls the API; a 401 (the session ended) sends the browser to the login page, back here after. */
export async function call(method, path, body) {
  const result = await api(method, path, body);
  if (result.status === 401 && path !== '/api/logout') {
    const back = window.location.pathname + window.location.search;
    window.location.assign(`/login?${new URLSearchParams({ redirect: back })}`);
  }
  return result;
}

/** A query string of the defined, non-empty values of `params`. */
export function query(params) {
  const defined = Object.entries(params).filter(([, value]) => value !== undefined && value !== null && value !== '');
  return defined.length ? `?${new URLSearchParams(defined.map(([k, v]) => [k, String(v)]))}` : '';
}

/**
 * Loads a GET answer for a component: `{status: 'loading' | 'ok' | 'forbidden' | 'error', data,
 * message, reload}`. `path` null loads nothing (status 'idle').
 */
export function useApi(path) {
  const [state, setState] = useState({ status: path ? 'loading' : 'idle' });
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  useEffect(() => {
    if (!path) {
      setState({ status: 'idle' });
      return undefined;
    }
    let current = true;
    setState((previous) => ({ ...previous, status: 'loading' }));
    call('GET', path).then((result) => {
      if (!current) return;
      if (result.ok) setState({ status: 'ok', data: result.body });
      else if (result.status === 403) setState({ status: 'forbidden', message: messageOf(result) });
      else setState({ status: 'error', message: messageOf(result) });
    });
    return () => {
      current = false;
    };
  }, [path, generation]);
  return { ...state, reload };
}

/** Whether a scope the user holds covers `scope`: the same, or a wildcard (`folders:*`, `*`) over it. */
function covers(held, scope) {
  if (held === scope || held === '*') return true;
  return held.endsWith('*') && scope.startsWith(held.slice(0, -1));
}

/**
 * What the user may do, from `{action: [scope]}`: `can(action)` holds it anywhere, and
 * `can(action, scopes)` on one of `scopes` (a resource's own scope and those it inherits).
 * An action may be held through a wildcard (`*`, `users:*`), as a server admin holds everything.
 * A hint for what to offer only: the API decides every request.
 */
export function permissionChecker(permissions) {
  return function can(action, scopes) {
    const held = Object.entries(permissions)
      .filter(([name]) => covers(name, action))
      .flatMap(([, heldScopes]) => heldScopes);
    if (held.length === 0) return false;
    if (!scopes) return true;
    return scopes.some((scope) => held.some((h) => covers(h, scope)));
  };
}

/** The scope of every user: a page over all of them needs its action there, not on one's own record. */
export const ALL_USERS = ['users:*'];

/** The scopes a folder's permission reaches a resource in it through: the folder and its ancestors. */
export const folderScopes = (folderUids) => folderUids.map((uid) => `folders:uid:${uid}`);

/** The action names the API knows, from the enum of `POST /api/access-control/evaluate` in the OpenAPI document. */
export function actionsOf(openapi) {
  const operation = openapi?.paths?.['/api/access-control/evaluate']?.post;
  const schema = operation?.requestBody?.content?.['application/json']?.schema;
  return schema?.properties?.action?.enum ?? [];
}

/** Goes to a console address without reloading: the shell redraws on popstate. */
export function navigate(url, { replace = false } = {}) {
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** The console's address: its path and its query as an object, redrawn on every navigation. */
export function useLocation() {
  const read = () => ({ path: window.location.pathname, params: Object.fromEntries(new URLSearchParams(window.location.search)) });
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const update = () => setLocation(read());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return location;
}
