/** `GET /api/openapi.json`: the API contract, generated from the route table (public). */
import { readFileSync } from 'node:fs';
import type { RouteModule } from '../http/route.ts';
import { openApiDocument } from './document.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export const openApiRoutes: RouteModule = (routes) => {
  let document: ReturnType<typeof openApiDocument> | null = null;
  routes.add({
    method: 'get',
    path: '/api/openapi.json',
    access: 'public',
    skipAuthentication: true,
    summary: 'This document.',
    responses: { 200: { type: 'object' } },
    async handler({ ctx }) {
      // every route has registered by the first request
      document ??= openApiDocument(routes.table, VERSION);
      ctx.body = document;
    },
  });
};
