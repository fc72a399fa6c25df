/**
 * The browser pages and their assets, read once at startup into memory. Only the files named
 * here are ever served: a request names a key of these maps, never a path on disk, so there is
 * nothing to traverse.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Context } from 'koa';

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

function load(relative: string, type: string): StaticFile {
  const body = readFileSync(new URL(relative, import.meta.url));
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

/** The `/assets/<file>` whitelist. */
const ASSETS = new Map<string, StaticFile>([
  ['style.css', load('./assets/style.css', CSS)],
  ['api.js', load('./assets/api.js', JS)],
  ['setup.js', load('./assets/setup.js', JS)],
  ['login.js', load('./assets/login.js', JS)],
  ['home.js', load('./assets/home.js', JS)],
  ['favicon.svg', load('./assets/favicon.svg', 'image/svg+xml')],
]);

export type PageName = 'home' | 'setup' | 'login';

const PAGES: Record<PageName, StaticFile> = {
  home: load('./pages/home.html', HTML),
  setup: load('./pages/setup.html', HTML),
  login: load('./pages/login.html', HTML),
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

export function setPageSecurityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // Whether a page or a redirect is served depends on the session and on the users table.
  ctx.set('Cache-Control', 'no-store');
}

export function sendPage(ctx: Context, name: PageName): void {
  setPageSecurityHeaders(ctx);
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
