/**
 * `GET /metrics` in Prometheus' text format. Public by declaration: Prometheus scrapes with no
 * session; an operator who sets METRICS_TOKEN makes it answer only to `Authorization: Bearer
 * <METRICS_TOKEN>`, compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '../errors.ts';
import type { RouteModule } from '../http/route.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Equal digests: the comparison takes as long whatever the offered token's length. */
function sameToken(offered: string, expected: string): boolean {
  return timingSafeEqual(digest(offered), digest(expected));
}

export const metricsRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/metrics',
    access: 'public',
    skipAuthentication: true,
    summary: 'Metrics in Prometheus text format (Authorization: Bearer <METRICS_TOKEN> when one is set).',
    responses: { 200: null },
    async handler({ ctx, services }) {
      const expected = services.config.metricsToken;
      if (expected) {
        const offered = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
        if (!offered || !sameToken(offered, expected)) {
          ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
          throw new UnauthorizedError('the metrics need Authorization: Bearer <METRICS_TOKEN>');
        }
      }
      ctx.type = services.metrics.contentType;
      ctx.body = await services.metrics.render();
    },
  });
};
