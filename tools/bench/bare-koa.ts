/**
 * The baseline of tools/bench/http.ts: a bare Koa app with a router answering the benchmarked
 * paths with a small fixed JSON body, no authentication, no database. Listens on PORT.
 */
import Router from '@koa/router';
import Koa from 'koa';

const app = new Koa();
const router = new Router();
const user = { id: 'u_1', login: 'bench', email: 'bench@example.com', name: 'bench', isGrafanaAdmin: true, orgId: 'org_main' };
router.get('/api/user', (ctx) => {
  ctx.body = user;
});
router.get('/api/user/permissions', (ctx) => {
  ctx.body = { 'dashboards:read': ['dashboards:*'], 'folders:read': ['folders:*'] };
});
router.get('/api/teams/search', (ctx) => {
  ctx.body = { totalCount: 0, teams: [], page: 1, perPage: 1000 };
});
router.get('/api/health', (ctx) => {
  ctx.body = { status: 'ok' };
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1');
