/** The current user: `/api/user…`. */
import { NotFoundError } from '../http/errors.ts';
import type { RouteModule } from '../http/route.ts';
import { subjectOf } from '../http/subject.ts';
import { presentUser } from './user.presenter.ts';
import { findMembershipsOfUser, findUserById } from './users.store.ts';

export const currentUserRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/user',
    access: 'authenticated',
    level: 'server',
    async handler({ ctx, principal, services, authorize }) {
      await authorize('users:read', { kind: 'users', id: principal.user.id });
      const user = await findUserById(services.db, principal.user.id);
      if (!user) throw new NotFoundError('user not found');
      ctx.body = presentUser(user, await findMembershipsOfUser(services.db, user.id));
    },
  });

  routes.add({
    method: 'get',
    path: '/api/user/permissions',
    access: 'authenticated',
    level: 'org',
    async handler({ ctx, principal, orgId, services, authorize }) {
      await authorize('users.permissions:read', { kind: 'users', id: principal.user.id });
      ctx.body = await services.engine.permissions(subjectOf(principal), orgId);
    },
  });
};
