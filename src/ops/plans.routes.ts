/**
 * Ops plans: `POST /api/connectors/:uid/ops/plans` proposes one on a kubernetes connector (query
 * on the connector is enough: proposing changes nothing), `GET /api/ops/plans…` reads them
 * (only those on connectors the caller may query), and approve, reject and cancel decide them.
 * Approval needs write on the connector from someone other than the plan's author, cancelling
 * the author: the policy decides both in the one decision of the request (authz.authorship).
 * The work is in plans.ts, which the chat tool `ops_plan_create` calls too.
 */
import type { Action } from '../authz/actions.ts';
import type { Authorship } from '../authz/types.ts';
import { NotFoundError } from '../errors.ts';
import { connectorResource, findConnectorOrFail } from '../connectors/target.ts';
import { actorOf } from '../http/actor.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import { uidParams } from '../http/resource-uid.ts';
import { listPageSchema } from '../http/responses.ts';
import type { RouteContext, RouteModule } from '../http/route.ts';
import { subjectOf } from '../http/subject.ts';
import { approvePlan, cancelPlan, currentPlan, expireDuePlans, PLAN_SCHEMA, planSchema, presentPlan, proposePlan, rejectPlan } from './plans.ts';
import { findOpsConnectorOrFail } from './connector.ts';
import { findPlanConnectorUids, findPlanPage, findPlanRow, PLAN_STATES, type PlanRow, type PlanState } from './plans.store.ts';

const planParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['id'],
} as const;

const PLAN_PAGE_SCHEMA = listPageSchema('plans', PLAN_SCHEMA);

/** The plan's author as the policy compares it with the caller. */
const authorOf = (plan: PlanRow, must: Authorship['must']): Authorship => ({ kind: plan.created_by_kind as Authorship['kind'], id: plan.created_by, must });

type PlanRoute = Pick<RouteContext<unknown, unknown, { id: string }>, 'params' | 'orgId' | 'services' | 'authorize'>;

/**
 * The plan the route names, once the caller may do `action` on its connector (with the authorship
 * rule when `must` says so): the one decision of the route. An unknown plan (or one of another
 * org) is asked about without a target first, so only a caller who holds the action somewhere
 * learns that it does not exist.
 */
async function authorizedPlan({ params, orgId, services, authorize }: PlanRoute, action: Action, must?: Authorship['must']): Promise<PlanRow> {
  const plan = await findPlanRow(services.db, orgId, params.id);
  if (!plan) {
    await authorize(action);
    throw new NotFoundError(`ops plan ${params.id} not found`);
  }
  await authorize(action, connectorResource(plan.connector_uid), must ? { author: authorOf(plan, must) } : {});
  return plan;
}

export const opsPlanRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/connectors/:uid/ops/plans',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: planSchema,
    summary: 'Proposes an ops plan on a kubernetes connector: its steps are checked against the allowlists and dry-run; it waits for approval.',
    responses: { 201: PLAN_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('connectors:query', connectorResource(params.uid));
      const connector = await findOpsConnectorOrFail(services.db, orgId, params.uid);
      ctx.status = 201;
      ctx.body = await proposePlan(services, actorOf(ctx, principal), subjectOf(principal), connector, body, 'body');
    },
  });

  routes.add({
    method: 'get',
    path: '/api/ops/plans',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: {
        ...paginationQuerySchema,
        state: { type: 'string', enum: [...PLAN_STATES] },
        connectorUid: { type: 'string', minLength: 1, maxLength: 40 },
      },
      additionalProperties: false,
    },
    summary: 'Lists the ops plans on connectors the caller may query, newest first.',
    responses: { 200: PLAN_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize, filter }) {
      await authorize('connectors:query');
      const page = pageOf(query);
      await expireDuePlans(services, orgId, services.clock.now());
      const planFilter = { state: query.state as PlanState | undefined, connectorUid: query.connectorUid };
      // One policy call for the connectors that have matching plans, then the page of their plans.
      const queryable = await filter('connectors:query', await findPlanConnectorUids(services.db, orgId, planFilter), connectorResource);
      const found = await findPlanPage(services.db, orgId, planFilter, queryable, page);
      ctx.body = { totalCount: found.totalCount, plans: found.rows.map(presentPlan), page: page.page, perPage: page.perPage };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/ops/plans/:id',
    access: 'authenticated',
    level: 'org',
    params: planParams,
    summary: 'Reads an ops plan: its steps with their dry runs and, once run, their outcomes.',
    responses: { 200: PLAN_SCHEMA },
    async handler(route) {
      const plan = await authorizedPlan(route, 'connectors:query');
      route.ctx.body = presentPlan(await currentPlan(route.services, plan, route.services.clock.now()));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/ops/plans/:id/approve',
    access: 'authenticated',
    level: 'org',
    params: planParams,
    summary: "Approves a pending ops plan (write on its connector, and not the plan's author) and runs its steps in order, stopping at the first failure.",
    responses: { 200: PLAN_SCHEMA },
    async handler(route) {
      const { ctx, principal, orgId, services } = route;
      const plan = await authorizedPlan(route, 'connectors:write', 'differ');
      const connector = await findConnectorOrFail(services.db, orgId, plan.connector_uid);
      ctx.body = await approvePlan(services, actorOf(ctx, principal), plan, connector, principal.user.id);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/ops/plans/:id/reject',
    access: 'authenticated',
    level: 'org',
    params: planParams,
    body: {
      type: 'object',
      properties: { reason: { type: 'string', maxLength: 2000 } },
      additionalProperties: false,
    },
    summary: 'Rejects a pending ops plan (write on its connector); nothing runs.',
    responses: { 200: PLAN_SCHEMA },
    async handler(route) {
      const { ctx, body, principal, services } = route;
      const plan = await authorizedPlan(route, 'connectors:write');
      ctx.body = await rejectPlan(services, actorOf(ctx, principal), plan, principal.user.id, body.reason);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/ops/plans/:id/cancel',
    access: 'authenticated',
    level: 'org',
    params: planParams,
    summary: 'Cancels a pending ops plan: only its author may; nothing runs.',
    responses: { 200: PLAN_SCHEMA },
    async handler(route) {
      const { ctx, principal, services } = route;
      const plan = await authorizedPlan(route, 'connectors:query', 'match');
      ctx.body = await cancelPlan(services, actorOf(ctx, principal), plan, principal.user.id);
    },
  });
};
