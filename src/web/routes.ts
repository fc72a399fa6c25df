/**
 * The browser side of Gatehouse: the setup wizard, the login page, a small home page, the admin
 * console (docs/console.md) and their assets. The pages are static HTML; everything about the user is fetched from the API by the
 * page's script and written with textContent, so the server never templates user data into HTML.
 */
import { NotFoundError } from '../errors.ts';
import type { RouteModule } from '../http/route.ts';
import { anyHumanUserExists } from '../identity/users.store.ts';
import { sendAsset, sendPage, setPageSecurityHeaders } from './static.ts';

export const webRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/',
    access: 'public',
    summary: 'The home page (HTML); redirects to the setup wizard before the first user, else to the login page when signed out.',
    responses: { 200: null, 302: null },
    async handler({ ctx, services }) {
      // A fresh installation has nobody to sign in as: the wizard creates the first admin.
      if (!(await anyHumanUserExists(services.db))) {
        setPageSecurityHeaders(ctx);
        ctx.redirect('/setup');
        return;
      }
      if (!ctx.state.principal) {
        setPageSecurityHeaders(ctx);
        ctx.redirect('/login');
        return;
      }
      sendPage(ctx, 'home');
    },
  });

  routes.add({
    method: 'get',
    path: '/setup',
    access: 'public',
    summary: 'The setup wizard page (HTML).',
    responses: { 200: null },
    async handler({ ctx }) {
      sendPage(ctx, 'setup');
    },
  });

  routes.add({
    method: 'get',
    path: '/login',
    access: 'public',
    summary: 'The login page (HTML).',
    responses: { 200: null },
    async handler({ ctx }) {
      sendPage(ctx, 'login');
    },
  });

  // The console routes in the browser: every one of its addresses, and the pages the API's `url`
  // fields name (a dashboard's, a folder's), answers the same shell, whose script draws the page the
  // address names. The shell is static: nothing of the request is written into it.
  const consolePage = (path: string, summary: string, params: string[] = []) =>
    routes.add({
      method: 'get',
      path,
      access: 'public',
      summary,
      responses: { 200: null },
      ...(params.length > 0 && {
        params: {
          type: 'object',
          properties: Object.fromEntries(params.map((name) => [name, { type: 'string', maxLength: 200 }])),
          required: params,
          additionalProperties: false,
        },
      }),
      async handler({ ctx }) {
        sendPage(ctx, 'console');
      },
    });
  consolePage('/admin', "The admin console (HTML): it works through this API with the signed-in user's session.");
  consolePage('/admin/:page', "A page of the admin console (HTML): the console's shell, which draws the page.", ['page']);
  consolePage('/d/:uid', "A dashboard's page (HTML, the console's), without the title's slug.", ['uid']);
  consolePage('/d/:uid/:slug', "A dashboard's page (HTML, the console's): its metadata and permissions.", ['uid', 'slug']);
  consolePage('/dashboards/f/:uid', "A folder's page (HTML, the console's): its subfolders, dashboards, alert rules and permissions.", ['uid']);

  routes.add({
    method: 'get',
    path: '/assets/:file',
    access: 'public',
    summary: 'A script, style sheet or icon of the pages; 304 when the If-None-Match ETag is current.',
    responses: { 200: null, 304: null },
    params: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'], additionalProperties: false },
    async handler({ ctx, params }) {
      if (!sendAsset(ctx, params.file)) throw new NotFoundError('asset not found');
    },
  });
};
