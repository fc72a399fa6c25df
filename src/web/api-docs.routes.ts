/**
 * The API reference page: GET /api/docs renders the service's own OpenAPI document
 * (GET /api/openapi.json) in the browser with Redoc, whose bundle the service serves itself, so the
 * page loads nothing from anywhere else. Public, like the document it shows.
 */
import { NotFoundError } from '../errors.ts';
import type { RouteModule } from '../http/route.ts';
import { sendApiDocsAsset, sendPage } from './static.ts';

export const apiDocsRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/docs',
    access: 'public',
    skipAuthentication: true,
    summary: 'The API reference page (HTML): this document, rendered by Redoc.',
    responses: { 200: null },
    async handler({ ctx }) {
      sendPage(ctx, 'api-docs');
    },
  });

  routes.add({
    method: 'get',
    path: '/api/docs/assets/:file',
    access: 'public',
    summary: "A script of the API reference page (Redoc's bundle, gzipped when the client accepts it); 304 when the If-None-Match ETag is current.",
    responses: { 200: null, 304: null },
    params: { type: 'object', properties: { file: { type: 'string', maxLength: 100 } }, required: ['file'], additionalProperties: false },
    async handler({ ctx, params }) {
      if (!sendApiDocsAsset(ctx, params.file)) throw new NotFoundError('asset not found');
    },
  });
};
