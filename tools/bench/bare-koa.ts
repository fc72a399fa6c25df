/**
 * The baseline of tools/bench/http.ts: a bare Koa app with a router answering the benchmarked
 * paths, no authentication, no database. Each path answers the JSON body the service gave for it
 * (BODIES: a JSON object of path → body), as an object Koa serializes on every request, as a bare
 * app's handler would: the comparison is then of the same answer, not of answers of different
 * sizes (the service's permission map is 2.3 KB). Listens on PORT.
 */
import Router from '@koa/router';
import Koa from 'koa';

const bodies = JSON.parse(process.env.BODIES ?? '{}') as Record<string, unknown>;
const app = new Koa();
const router = new Router();
for (const [path, body] of Object.entries(bodies)) {
  router.get(path, (ctx) => {
    ctx.body = body;
  });
}
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1');
