/**
 * The API contract: `GET /api/openapi.json` is generated from the route table, every route
 * declares what it answers, and an answer that breaks its declaration is caught (the suite runs
 * with RESPONSE_VALIDATION=true, so every response any test receives is checked).
 */
import { expect } from 'chai';
import { compileResponseCheck } from '../src/http/responses.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('the API contract', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('serves an OpenAPI 3.1 document with every route, without signing in', async () => {
    const res = await app.request('GET', '/api/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal('3.1.0');
    const operations = Object.entries(res.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
    );
    const routes = app.built.routes.map((route) => `${route.method.toUpperCase()} ${route.path.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')}`);
    expect(operations.map((op) => op.route).sort()).to.deep.equal([...routes].sort());
    for (const { operation } of operations) expect(operation.responses.default).to.deep.equal({ $ref: '#/components/responses/Error' });
    expect(res.body.paths['/api/teams/{id}'].get.parameters).to.deep.include({
      name: 'id',
      in: 'path',
      required: true,
      schema: { type: 'string', minLength: 1, maxLength: 40 },
    });
  });

  it('every route declares its responses', () => {
    const undeclared = app.built.routes.filter((route) => !route.responses || Object.keys(route.responses).length === 0);
    expect(undeclared.map((route) => `${route.method.toUpperCase()} ${route.path}`)).to.deep.equal([]);
  });

  it('refuses an undeclared status, an undeclared field, a missing field and a wrong type', () => {
    const check = compileResponseCheck('GET /thing', {
      200: {
        type: 'object',
        properties: { id: { type: 'string' }, tags: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } },
        required: ['id'],
      },
      204: null,
    });
    expect(() => check(200, { id: 'a', tags: [{ name: 'x' }] })).to.not.throw();
    expect(() => check(204, undefined)).to.not.throw();
    expect(() => check(404, { message: 'not found' })).to.not.throw();
    expect(() => check(201, { id: 'a' })).to.throw('response contract: GET /thing answered 201, which it does not declare');
    expect(() => check(200, { id: 'a', secret: 's' })).to.throw('response contract: GET /thing 200: body must NOT have additional properties (secret)');
    expect(() => check(200, { id: 'a', tags: [{ name: 'x', extra: 1 }] })).to.throw('body/tags/0 must NOT have additional properties (extra)');
    expect(() => check(200, {})).to.throw("body must have required property 'id'");
    expect(() => check(200, { id: 1 })).to.throw('body/id must be string');
    // what the client receives is checked: a Date is a string on the wire
    const dated = compileResponseCheck('GET /dated', { 200: { type: 'object', properties: { at: { type: 'string' } } } });
    expect(() => dated(200, { at: new Date(0) })).to.not.throw();
  });
});
