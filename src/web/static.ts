/**
 * The browser pages and their assets, read once at startup into memory. Only the files named
 * here are ever served: a request names a key of these maps, never a path on disk, so there is
 * nothing to traverse.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

function load(file: string | URL, type: string): StaticFile {
  const body = readFileSync(typeof file === 'string' ? new URL(file, import.meta.url) : file);
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

const fromPackage = (specifier: string) => new URL(`file://${createRequire(import.meta.url).resolve(specifier)}`);
/** A file beside a package's entry point (its ES module build), which the package's exports do not name. */
const besidePackageEntry = (specifier: string, file: string) => new URL(file, fromPackage(specifier));

/** The `/assets/<file>` whitelist. */
const ASSETS = new Map<string, StaticFile>([
  ['style.css', load('./assets/style.css', CSS)],
  ['api.js', load('./assets/api.js', JS)],
  ['setup.js', load('./assets/setup.js', JS)],
  ['login.js', load('./assets/login.js', JS)],
  ['home.js', load('./assets/home.js', JS)],
  ['favicon.svg', load('./assets/favicon.svg', 'image/svg+xml')],
  // The admin console: its modules, and preact and htm as ES modules from node_modules, which the
  // console page's import map names, so the browser loads no build output and nothing from a CDN.
  ['console.css', load('./assets/console.css', CSS)],
  ['console.js', load('./assets/console.js', JS)],
  ['console-api.js', load('./assets/console-api.js', JS)],
  ['console-ui.js', load('./assets/console-ui.js', JS)],
  ['console-folders.js', load('./assets/console-folders.js', JS)],
  ['console-audit.js', load('./assets/console-audit.js', JS)],
  ['console-policy.js', load('./assets/console-policy.js', JS)],
  ['console-users.js', load('./assets/console-users.js', JS)],
  ['console-teams.js', load('./assets/console-teams.js', JS)],
  ['console-serviceaccounts.js', load('./assets/console-serviceaccounts.js', JS)],
  ['console-orgs.js', load('./assets/console-orgs.js', JS)],
  ['console-roles.js', load('./assets/console-roles.js', JS)],
  ['console-connectors.js', load('./assets/console-connectors.js', JS)],
  ['preact.js', load(besidePackageEntry('preact', 'preact.module.js'), JS)],
  ['preact-hooks.js', load(besidePackageEntry('preact/hooks', 'hooks.module.js'), JS)],
  ['htm.js', load(besidePackageEntry('htm', 'htm.module.js'), JS)],
  // What the committed policy build says of itself, for the console's policy explorer.
  ['policy-manifest.json', load('../../policies/build/manifest.json', 'application/json; charset=utf-8')],
]);

export type PageName = 'home' | 'setup' | 'login' | 'api-docs' | 'console';

const PAGES: Record<PageName, StaticFile> = {
  home: load('./pages/home.html', HTML),
  setup: load('./pages/setup.html', HTML),
  login: load('./pages/login.html', HTML),
  'api-docs': load('./pages/api-docs.html', HTML),
  console: load('./pages/console.html', HTML),
};

/**
 * The pages load nothing but our own files, so the policy can forbid everything else: an
 * injected script or an external font would be refused by the browser.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The console's import map is an inline script, which the browser runs only when the policy names
 * its hash: that one script, and no other inline one, is allowed.
 */
function consoleContentSecurityPolicy(): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(PAGES.console.body.toString('utf8'));
  if (!importMap) throw new Error('src/web/pages/console.html has no import map');
  const hash = createHash('sha256').update(importMap[1]!).digest('base64');
  return CONTENT_SECURITY_POLICY.replace("script-src 'self'", `script-src 'self' 'sha256-${hash}'`);
}
const CONSOLE_CONTENT_SECURITY_POLICY = consoleContentSecurityPolicy();

/**
 * The API reference page runs Redoc, which styles what it renders with style elements it writes
 * itself (styled-components, with no way to pass them a nonce) and draws its icons as data: images:
 * styles may be inline and images data:, scripts come from this service only, and nothing is
 * loaded from anywhere else (Redoc's credit logo on its CDN is refused).
 */
const API_DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function setPageSecurityHeaders(ctx: Context, page?: PageName): void {
  const policies: Partial<Record<PageName, string>> = { 'api-docs': API_DOCS_CONTENT_SECURITY_POLICY, console: CONSOLE_CONTENT_SECURITY_POLICY };
  ctx.set('Content-Security-Policy', (page && policies[page]) ?? CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // Whether a page or a redirect is served depends on the session and on the users table.
  ctx.set('Cache-Control', 'no-store');
}

export function sendPage(ctx: Context, name: PageName): void {
  setPageSecurityHeaders(ctx, name);
  ctx.type = PAGES[name].type;
  ctx.body = PAGES[name].body;
}

/** Serves a whitelisted asset; returns false when `name` is not one. */
export function sendAsset(ctx: Context, name: string): boolean {
  const file = ASSETS.get(name);
  if (!file) return false;
  ctx.set('X-Content-Type-Options', 'nosniff');
  // Revalidated on every use (cheap 304s), so a deploy never leaves a stale script behind.
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = file.type;
  ctx.etag = file.etag;
  ctx.body = file.body;
  if (ctx.fresh) ctx.status = 304;
  return true;
}

interface CompressibleFile extends StaticFile {
  gzip: Buffer;
}

/**
 * The `/api/docs/assets/<file>` whitelist: Redoc's standalone bundle (MIT, from node_modules, about
 * 1 MiB, so it is also kept gzipped) and the script that starts it. Read on the first request, so
 * an instance that never serves the page never holds them.
 */
const API_DOCS_ASSETS: Record<string, () => StaticFile> = {
  'redoc.standalone.js': () => load(fromPackage('redoc/bundles/redoc.standalone.js'), JS),
  'api-docs.js': () => load('./assets/api-docs.js', JS),
};
const apiDocsAssets = new Map<string, CompressibleFile>();

/** Serves a file of the API reference page; returns false when `name` is not one. */
export function sendApiDocsAsset(ctx: Context, name: string): boolean {
  if (!Object.hasOwn(API_DOCS_ASSETS, name)) return false;
  let file = apiDocsAssets.get(name);
  if (!file) {
    const loaded = API_DOCS_ASSETS[name]!();
    file = { ...loaded, gzip: gzipSync(loaded.body) };
    apiDocsAssets.set(name, file);
  }
  ctx.set('X-Content-Type-Options', 'nosniff');
  // Revalidated on every use (cheap 304s), so an upgrade of Redoc never leaves a stale bundle behind.
  ctx.set('Cache-Control', 'no-cache');
  ctx.vary('Accept-Encoding');
  ctx.type = file.type;
  ctx.etag = file.etag;
  // Koa judges freshness only for a successful status; the body comes after.
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return true;
  }
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzip;
  } else {
    ctx.body = file.body;
  }
  return true;
}
