/**
 * What the console's browser tests share: their setting up through the API, a browser context
 * signed in as a user that records every request it makes to the service and every script error, the check that each recorded
 * request is a route of the OpenAPI document, and axe plus screenshots of pages at 1280 and 390
 * pixels wide, light and dark, under test-artifacts/console/.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from './app.ts';
import type { TestUser } from './factories.ts';

export const SHOTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));

export interface Recorded {
  method: string;
  path: string;
}

/** What a test's browser contexts saw: the requests to the service and the script errors. */
export interface ConsoleRecord {
  requests: Recorded[];
  pageErrors: string[];
}

export const newRecord = (): ConsoleRecord => ({ requests: [], pageErrors: [] });

/** Sends `method path` to `app` as `user`, expects it to succeed (200 or 201), and gives its body. */
export async function succeeded(app: TestApp, user: TestUser, method: string, path: string, body?: unknown) {
  const res = await app.request(method, path, { cookie: user.cookie, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
  return res.body;
}

/** A browser context signed in as `user` with their session cookie, recording into `record`. */
export async function signedIn(
  browser: Browser,
  app: TestApp,
  user: TestUser,
  record: ConsoleRecord,
  options: { bypassCSP?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  await context.addCookies([{ name: 'svc_session', value: user.cookie.slice('svc_session='.length), url: app.url }]);
  const page = await context.newPage();
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin === app.url) record.requests.push({ method: request.method(), path: url.pathname });
  });
  page.on('pageerror', (err) => record.pageErrors.push(err.message));
  return { context, page };
}

/** The recorded requests that are no route of `GET /api/openapi.json`. */
export async function requestsOffTheDocument(app: TestApp, requests: Recorded[]): Promise<Recorded[]> {
  const document = (await app.request('GET', '/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(document.paths).flatMap(([template, operations]) =>
    Object.keys(operations).map((method) => ({
      method: method.toUpperCase(),
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    })),
  );
  return requests.filter((r) => !routes.some((route) => route.method === r.method && route.pattern.test(r.path)));
}

/**
 * Each page, `[name, user, path]`, at 1280 and 390 wide in light and dark: a full-page screenshot
 * `<name>-<width>-<scheme>.png`, and axe's serious or critical violations at 1280 (as
 * `name (scheme): rule impact on n nodes`). axe is injected as an inline script, which the
 * pages' policy refuses: these contexts bypass it.
 */
export async function screenshotAndAxe(browser: Browser, app: TestApp, record: ConsoleRecord, pages: Array<[string, TestUser, string]>): Promise<string[]> {
  fs.mkdirSync(SHOTS, { recursive: true });
  const violations: string[] = [];
  for (const [name, user, path] of pages) {
    const { context, page } = await signedIn(browser, app, user, record, { bypassCSP: true });
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${app.url}${path}`);
        await page.locator('h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        await page.waitForFunction(() => !document.querySelector('.state-loading'));
        await page.screenshot({ path: `${SHOTS}${name}-${width}-${scheme}.png`, fullPage: true });
        if (width === 1280) {
          await page.addScriptTag({ path: AXE });
          const result = await page.evaluate(async () => {
            const axe = (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
            return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
          });
          for (const v of result.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
            violations.push(`${name} (${scheme}): ${v.id} ${v.impact} on ${v.nodes} nodes`);
          }
        }
      }
    }
    await context.close();
  }
  return violations;
}
