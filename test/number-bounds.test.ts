/**
 * Every number a request carries is bounded by what the database behind it holds: a route or a
 * chat tool whose schema leaves one unbounded is refused where it is declared, and every numeric
 * field of every route and tool, sent extreme values, answers a 400 naming the field (or, within
 * its bounds, whatever the route answers), never a 500. MariaDB is where an unbounded value
 * shows: it refuses 1e19 in a BIGINT column ("Out of range value") and `Infinity` in SQL.
 */
import { expect } from 'chai';
import { callerServices } from '../src/app.ts';
import { CHAT_TOOLS } from '../src/chat/tools.ts';
import { compileGuard, type JSONSchema } from '../src/http/guard.ts';
import { RouteRegistrar } from '../src/http/route.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, buildRole, buildServiceAccount, buildTeam, createUser, type TestUser } from './helpers/factories.ts';
import { sample, STRING_CANDIDATES } from './helpers/schema-sample.ts';

type Schema = Record<string, any>;
type Part = 'params' | 'query' | 'body';

/** A numeric field: where it sits under its part (a property name, or 0 for an array's first item) and its schema. */
interface NumberField {
  path: Array<string | number>;
  schema: Schema;
}

function numberFields(schema: Schema | undefined, path: Array<string | number> = []): NumberField[] {
  if (!schema || typeof schema !== 'object') return [];
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const own = types.includes('integer') || types.includes('number') ? [{ path, schema }] : [];
  const nested = Object.entries((schema.properties ?? {}) as Record<string, Schema>).flatMap(([name, sub]) => numberFields(sub, [...path, name]));
  const items = schema.items && !Array.isArray(schema.items) ? numberFields(schema.items, [...path, 0]) : [];
  return [...own, ...nested, ...items];
}

/** The values sent, as they appear in a query string or as raw JSON text (1e400 parses to Infinity). */
const EXTREMES = ['1e308', '1e19', '-1e19', '1e400', String(2 ** 53), '-1', '0.5', 'NaN'];

/** Whether `raw` is a value the field's schema accepts: a finite number of its type, within its bounds or enum. */
function accepts(schema: Schema, raw: string): boolean {
  const value = Number(raw);
  if (!Number.isFinite(value)) return false;
  if (schema.enum) return schema.enum.includes(value);
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.includes('number') && !Number.isInteger(value)) return false;
  if (schema.minimum !== undefined && value < schema.minimum) return false;
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return false;
  if (schema.maximum !== undefined && value > schema.maximum) return false;
  return !(schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum);
}

/** The extremes, and the field's own (inclusive) bounds, which the database must hold. */
function valuesFor(schema: Schema): string[] {
  const bounds = [schema.minimum, schema.maximum].filter((bound): bound is number => typeof bound === 'number').map(String);
  return [...EXTREMES, ...bounds];
}

const PLACEHOLDER = '__number_under_test__';

/** A valid sample of `schema` with the value at `path` replaced by the placeholder, making the arrays and objects on the way. */
function withPlaceholder(schema: Schema, value: unknown, path: Array<string | number>): unknown {
  if (path.length === 0) return PLACEHOLDER;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const items = Array.isArray(value) && value.length > 0 ? [...value] : [sample(schema.items)];
    items[0] = withPlaceholder(schema.items, items[0], rest);
    return items;
  }
  const object = { ...((value && typeof value === 'object' ? value : sample(schema as JSONSchema)) as Record<string, unknown>) };
  object[head!] = withPlaceholder(schema.properties[head!], object[head!], rest);
  return object;
}

/** The body as JSON text with the raw value where the placeholder is: `1e400` is sent as written, `NaN` as a string. */
function rawBody(body: unknown, raw: string): string {
  return JSON.stringify(body).replace(`"${PLACEHOLDER}"`, raw === 'NaN' ? '"NaN"' : raw);
}

describe('number bounds', function () {
  this.timeout(120_000);
  let app: TestApp;
  let admin: TestUser;
  /** Real resources for the path parameters, so a value within its bounds reaches the database. */
  let resources: Record<string, string>;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    const as = api(app, admin);
    const connector = await as.post('/api/connectors', { name: 'deploys', type: 'changes' });
    const folder = await as.post('/api/folders', { title: 'numbers' });
    const dashboard = await as.post('/api/dashboards/db', { dashboard: { title: 'numbers' } });
    const role = await as.post('/api/access-control/roles', buildRole());
    for (const res of [connector, folder, dashboard, role]) expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 201]);
    resources = {
      connector: connector.body.uid,
      folder: folder.body.uid,
      dashboard: dashboard.body.uid,
      role: role.body.uid,
      team: (await buildTeam(app)).id,
      serviceAccount: (await buildServiceAccount(app)).id,
    };
  });
  after(async () => {
    await app.close();
  });

  /** The value of path parameter `name` of route `path`: a real resource where the route names one. */
  function parameterValue(path: string, name: string, schema: Schema | undefined): string {
    const byName: Record<string, string | undefined> = {
      userId: admin.id,
      teamId: resources.team,
      roleUid: resources.role,
      folderUid: resources.folder,
      orgId: 'org_main',
      id: path.startsWith('/api/orgs/')
        ? 'org_main'
        : path.startsWith('/api/teams/')
          ? resources.team
          : path.startsWith('/api/serviceaccounts/')
            ? resources.serviceAccount
            : undefined,
      uid: path.startsWith('/api/connectors/')
        ? resources.connector
        : path.startsWith('/api/folders/')
          ? resources.folder
          : path.startsWith('/api/dashboards/')
            ? resources.dashboard
            : undefined,
    };
    if (byName[name]) return byName[name]!;
    const sampled = schema ? sample(schema as JSONSchema) : undefined;
    return typeof sampled === 'string' && !STRING_CANDIDATES.includes(sampled) ? sampled : 'x1';
  }

  /** Sends every value to every numeric field of one request shape; returns what went wrong. */
  async function fuzz(
    label: string,
    fields: Array<NumberField & { part: Part; name: string }>,
    send: (field: NumberField & { part: Part }, raw: string) => Promise<{ status: number; body: any }>,
  ): Promise<string[]> {
    const wrong: string[] = [];
    for (const field of fields) {
      for (const raw of valuesFor(field.schema)) {
        const res = await send(field, raw);
        const what = `${label} ${field.name}=${raw}: ${res.status} ${JSON.stringify(res.body)}`;
        // the error's text: `message`, or `detail` in SCIM's error format (/scim/v2)
        const message = String(res.body?.message ?? res.body?.detail);
        if (res.status >= 500) wrong.push(what);
        else if (!accepts(field.schema, raw) && (res.status !== 400 || !message.startsWith(`${field.name} `))) wrong.push(what);
      }
    }
    return wrong;
  }

  it('a number without a minimum and a maximum is refused where its route or tool is declared', () => {
    const unbounded: Array<[JSONSchema, string]> = [
      [{ type: 'object', properties: { time: { type: 'integer', minimum: 0 } } }, 'body.time'],
      [{ type: 'object', properties: { time: { type: 'integer', maximum: 10 } } }, 'body.time'],
      [{ type: 'object', properties: { ratio: { type: 'number', exclusiveMinimum: 0, maximum: Infinity } } }, 'body.ratio'],
      [{ type: 'object', properties: { big: { type: 'integer', minimum: 0, maximum: 2 ** 63 } } }, 'body.big'],
      [
        { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { n: { type: ['integer', 'null'] } } } } } },
        'body.items[].n',
      ],
    ];
    for (const [schema, where] of unbounded) {
      expect(() => compileGuard('body', schema), where).to.throw(`${where}: a number needs a minimum and a maximum`);
    }
    const registrar = new RouteRegistrar(app.services, callerServices(app.services));
    expect(() =>
      registrar.add({
        method: 'get',
        path: '/api/unbounded',
        access: 'public',
        query: { type: 'object', properties: { page: { type: 'integer', minimum: 1 } } },
        async handler() {},
      }),
    ).to.throw('query.page: a number needs a minimum and a maximum');
    // an enum or a const bounds itself; bounds within the widest are accepted
    expect(() =>
      compileGuard('body', {
        type: 'object',
        properties: { level: { type: 'integer', enum: [1, 2, 4] }, n: { type: 'integer', minimum: -1, maximum: 2 ** 31 - 1 } },
      }),
    ).not.to.throw();
  });

  it('every numeric field of every route: an extreme value is a 400 naming the field, a value within bounds never a 500', async () => {
    const wrong: string[] = [];
    let fieldCount = 0;
    for (const route of app.built.routes) {
      const paramSchemas = ((route.schemas.params as Schema | undefined)?.properties ?? {}) as Record<string, Schema>;
      const fields = (['params', 'query', 'body'] as const).flatMap((part) =>
        numberFields(route.schemas[part] as Schema | undefined).map((field) => ({ ...field, part, name: [part, ...field.path].join('.') })),
      );
      fieldCount += fields.length;
      const label = `${route.method.toUpperCase()} ${route.path}`;
      wrong.push(
        ...(await fuzz(label, fields, (field, raw) => {
          const path = route.path.replace(/:(\w+)/g, (_, name: string) =>
            encodeURIComponent(field.part === 'params' && field.path[0] === name ? raw : parameterValue(route.path, name, paramSchemas[name])),
          );
          const query = { ...(sample(route.schemas.query) as Record<string, string> | undefined) };
          if (field.part === 'query') query[field.path[0] as string] = raw;
          const search = new URLSearchParams(query).toString();
          const url = search ? `${path}?${search}` : path;
          const body =
            field.part === 'body'
              ? rawBody(withPlaceholder(route.schemas.body as Schema, undefined, field.path), raw)
              : route.schemas.body
                ? JSON.stringify(sample(route.schemas.body))
                : undefined;
          return app.request(route.method.toUpperCase(), url, { cookie: admin.cookie, ...(body !== undefined && { rawBody: body }) });
        })),
      );
    }
    expect(fieldCount).to.be.greaterThan(40);
    expect(wrong).to.deep.equal([]);
  });

  it('every numeric argument of every chat tool: the same', async () => {
    const wrong: string[] = [];
    let fieldCount = 0;
    for (const [name, tool] of CHAT_TOOLS) {
      const fields = numberFields(tool.args as Schema).map((field) => ({ ...field, part: 'body' as const, name: ['body.args', ...field.path].join('.') }));
      fieldCount += fields.length;
      // the changes tools act on the test's connector, so a time within bounds is written and read back
      const base = { ...(sample(tool.args) as Record<string, unknown>), ...(name.startsWith('changes_') && { connector: resources.connector }) };
      wrong.push(
        ...(await fuzz(name, fields, (field, raw) => {
          const args = withPlaceholder(tool.args as Schema, base, field.path);
          const body = rawBody({ agentType: 'operator', permissionMode: 'default', args }, raw);
          return app.request('POST', `/api/chat/tools/${name}`, { cookie: admin.cookie, rawBody: body });
        })),
      );
    }
    expect(fieldCount).to.be.greaterThan(10);
    expect(wrong).to.deep.equal([]);
  });

  it('a change entry at the last time a Date holds is written and read back; one past it is a 400', async () => {
    const connector = await api(app, admin).post('/api/connectors', { name: 'far-future', type: 'changes' });
    const changes = `/api/connectors/${connector.body.uid}/changes`;
    const last = 8_640_000_000_000_000;
    const recorded = await api(app, admin).post(changes, { kind: 'deploy', title: 'far future', time: last });
    expect(recorded.status, JSON.stringify(recorded.body)).to.equal(201);
    expect(recorded.body.time).to.equal(last);
    const read = await api(app, admin).get(`${changes}?from=${last}&to=${last}`);
    expect(read.status).to.equal(200);
    expect(read.body.changes.map((entry: { id: string }) => entry.id)).to.deep.equal([recorded.body.id]);
    for (const time of ['1e19', '1e308', '1e400']) {
      const res = await app.request('POST', changes, { cookie: admin.cookie, rawBody: `{"kind":"deploy","title":"x","time":${time}}` });
      expect(res.status, time).to.equal(400);
      expect(res.body.message, time).to.match(/^body\.time must (be <= 8640000000000000|be integer)$/);
      const query = await app.request('GET', `${changes}?to=${time}`, { cookie: admin.cookie });
      expect(query.status, time).to.equal(400);
      expect(query.body.message, time).to.match(/^query\.to must (be <= 8640000000000000|be integer)$/);
    }
  });
});
