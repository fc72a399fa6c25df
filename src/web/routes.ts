/**
 * The browser side of Gatehouse: the setup wizard, the login page, a small home page and their
 * assets. The pages are static HTML; everything about the user is fetched from the API by the
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
