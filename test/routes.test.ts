/**
 * Every route is accounted for: the router holds exactly the declared routes, and each one is
 * either declared public or calls authorize() exactly once — proven by calling it.
 */
import { expect } from 'chai';
import type { JSONSchema } from '../src/http/guard.ts';
import { sample, STRING_CANDIDATES } from './helpers/schema-sample.ts';
import { createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('route accounting', () => {
  let app: TestApp;
  let admin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  it('the routers hold exactly the declared routes', () => {
    const declared = app.built.routes.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    const registered = new Set(
      app.built.routeIndex.routers.flatMap((router) =>
        router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${layer.path}`)),
      ),
    );
    expect([...registered].sort()).to.deep.equal(declared);
    expect(declared.length).to.be.greaterThan(5);
  });

  it('every static route is reached without its router, by its methods and HEAD for a GET', () => {
    const staticRoutes = app.built.routes.filter((r) => !/[:*({]/.test(r.path));
    expect(staticRoutes.length).to.be.greaterThan(5);
    for (const route of staticRoutes) {
      const methods = route.method === 'get' ? ['GET', 'HEAD'] : [route.method.toUpperCase()];
      for (const method of methods) {
        expect(app.built.routeIndex.direct.get(`${method} ${route.path.toLowerCase()}`)?.path, `${method} ${route.path}`).to.equal(route.path);
      }
    }
    const parameterRoutes = app.built.routes.filter((r) => r.path.includes(':'));
    for (const route of parameterRoutes) {
      expect([...app.built.routeIndex.direct.values()].map((layer) => layer.path)).not.to.include(route.path);
    }
  });

  it('resolves every route without the router exactly as the router would: the same route and parameters', () => {
    const index = app.built.routeIndex;
    const odd = ['x1', 'A.b-C_d~e', 'a%2Fb', '%E0%A4%A', 'caf%C3%A9', 'search', 'permissions', '..', 'a:b', '(a)', '42'];
    let resolvedDirectly = 0;
    for (const router of index.routers) {
      for (const layer of router.stack) {
        const template = String(layer.path);
        for (const value of odd) {
          const path = template.replace(/:(\w+)/g, () => value).replace(/\*\w+/, 'rest/of/it');
          for (const spelling of [path, path.toUpperCase()]) {
            for (const method of layer.methods) {
              const direct = index.resolve(method, spelling);
              if (!direct) continue;
              resolvedDirectly++;
              const [routed] = router.match(spelling, method).pathAndMethod;
              expect(direct.layer.path, `${method} ${spelling}`).to.equal(routed?.path);
              expect(direct.params, `${method} ${spelling}`).to.deep.equal(routed!.params(spelling, routed!.captures(spelling), {}));
            }
          }
        }
        if (!template.includes('*')) {
          const plain = template.replace(/:(\w+)/g, 'x1');
          expect(index.resolve(layer.methods.at(-1)!, plain), `${template} resolves without the router`).not.to.equal(null);
        }
      }
    }
    expect(resolvedDirectly).to.be.greaterThan(1000);
    expect(index.resolve('GET', '/api/teams/search/')).to.equal(null);
    expect(index.resolve('GET', '/api//teams')).to.equal(null);
  });

  it('answers a static route the same, reached directly or through its router (another case, a trailing slash)', async () => {
    const direct = await app.request('GET', '/api/teams/search', { cookie: admin.cookie });
    expect(direct.status).to.equal(200);
    for (const spelling of ['/API/Teams/Search', '/api/teams/search/']) {
      const routed = await app.request('GET', spelling, { cookie: admin.cookie });
      expect(routed.status, spelling).to.equal(200);
      expect(routed.body, spelling).to.deep.equal(direct.body);
    }
    // a static path under a parameter route declared after it is still the static route's
    const user = await app.request('GET', '/api/user', { cookie: admin.cookie });
    expect(user.body).to.have.property('login', admin.login);
    const head = await app.request('HEAD', '/api/user', { cookie: admin.cookie });
    expect(head.status).to.equal(200);
  });

  it('every route is public by declaration or calls authorize() once', async () => {
    const engine = app.services.engine;
    const original = engine.authorize.bind(engine);
    let calls = 0;
    engine.authorize = async (input) => {
      calls++;
      return original(input);
    };
    try {
      for (const route of app.built.routes.filter((r) => r.access === 'authenticated')) {
        const paramSchemas = ((route.schemas.params as { properties?: Record<string, JSONSchema> } | undefined)?.properties ?? {}) as Record<
          string,
          JSONSchema
        >;
        const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
          const value = paramSchemas[name] ? sample(paramSchemas[name]) : undefined;
          return encodeURIComponent(typeof value === 'string' && !STRING_CANDIDATES.includes(value) ? value : 'x1');
        });
        const query = new URLSearchParams(sample(route.schemas.query) as Record<string, string>).toString();
        const url = query ? `${path}?${query}` : path;
        const body = route.schemas.body ? sample(route.schemas.body) : undefined;

        const anonymous = await app.request(route.method.toUpperCase(), url, { body });
        expect(anonymous.status, `${route.method} ${route.path} without credentials`).to.equal(401);

        calls = 0;
        const res = await app.request(route.method.toUpperCase(), url, { body, cookie: admin.cookie });
        expect(res.status, `${route.method} ${route.path}: ${JSON.stringify(res.body)}`).to.be.lessThan(500);
        expect(calls, `${route.method} ${route.path} must call authorize() once`).to.equal(1);
      }
    } finally {
      engine.authorize = original;
    }
  });
});
