/**
 * The OpenAPI 3.1 document of the service, generated from the route table: every route with its
 * path and query parameters, its request body, the responses it declares (src/http/responses.ts)
 * and the `{message}` error every route may answer. JSON Schema 2020-12 is OpenAPI 3.1's own
 * dialect, so the schemas the routes validate with go in as they are.
 */
import type { RouteEntry } from '../http/route.ts';
import { ERROR_SCHEMA, closed } from '../http/responses.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  302: 'Redirect',
  303: 'Redirect',
  400: 'Bad request',
  401: 'Unauthorized',
};

/** `/api/teams/:teamId/members/*path` → `/api/teams/{teamId}/members/{path}` and its parameter names. */
function openApiPath(path: string): { path: string; names: string[] } {
  const names: string[] = [];
  const converted = path.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  return { path: converted, names };
}

interface ObjectSchema {
  properties?: Record<string, unknown>;
  required?: readonly string[];
}

function parameters(entry: RouteEntry, pathNames: string[]) {
  const params = (entry.schemas.params ?? {}) as ObjectSchema;
  const query = (entry.schemas.query ?? {}) as ObjectSchema;
  return [
    ...pathNames.map((name) => ({ name, in: 'path', required: true, schema: params.properties?.[name] ?? { type: 'string' } })),
    ...Object.entries(query.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: query.required?.includes(name) ?? false, schema })),
  ];
}

function responses(entry: RouteEntry) {
  const declared = Object.entries(entry.responses ?? {}).map(([status, schema]) => [
    status,
    {
      description: STATUS_TEXT[Number(status)] ?? `Status ${status}`,
      ...(schema && { content: { 'application/json': { schema: closed(schema) } } }),
    },
  ]);
  return { ...Object.fromEntries(declared), default: { $ref: '#/components/responses/Error' } };
}

export function openApiDocument(routes: readonly RouteEntry[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of routes) {
    const { path, names } = openApiPath(entry.path);
    (paths[path] ??= {})[entry.method] = {
      operationId: `${entry.method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
      ...(entry.summary && { summary: entry.summary }),
      ...(entry.access === 'authenticated' && { security: [{ session: [] }, { token: [] }] }),
      parameters: parameters(entry, names),
      ...(entry.schemas.body !== undefined && { requestBody: { required: true, content: { 'application/json': { schema: entry.schemas.body } } } }),
      responses: responses(entry),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Gatehouse', version, description: 'Identity, access control and connectors of a multi-tenant observability platform.' },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
        token: { type: 'http', scheme: 'bearer', description: 'A service-account token or a personal access token (also as X-Api-Key).' },
      },
      responses: { Error: { description: 'An error: the status says which, the message why.', content: { 'application/json': { schema: ERROR_SCHEMA } } } },
    },
  };
}
