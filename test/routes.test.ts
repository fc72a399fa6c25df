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
