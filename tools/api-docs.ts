/**
 * Writes docs/api.md, the HTTP API reference, from the OpenAPI document the service serves at
 * GET /api/openapi.json: the same route table, registered by the same modules, turned into the
 * same document, then into Markdown. test/api-docs.test.ts fails when docs/api.md differs from it.
 *
 *   npm run docs:api            # writes docs/api.md
 *   npm run docs:api -- --check # exits 1 when docs/api.md is not what it would write
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { callerServices, ROUTE_MODULES } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { RouteRegistrar } from '../src/http/route.ts';
import { openApiDocument } from '../src/openapi/document.ts';
import type { Services } from '../src/services.ts';

export const API_DOC_PATH = new URL('../docs/api.md', import.meta.url);

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  $ref?: string;
};

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: Schema;
}

interface Operation {
  summary?: string;
  security?: unknown[];
  parameters: Parameter[];
  requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, { description?: string; content?: { 'application/json': { schema: Schema } }; $ref?: string }>;
}

export interface ApiDocument {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
}

/** The document GET /api/openapi.json answers, built without a database: registering routes reads only the configuration. */
export function servedDocument(): ApiDocument {
  const config = loadConfig({ NODE_ENV: 'test', SECRET_KEY: 'x'.repeat(32), JWT_SECRET: 'x'.repeat(32) });
  const services = { config } as Services;
  const registrar = new RouteRegistrar(services, callerServices(services));
  for (const register of ROUTE_MODULES) register(registrar);
  const { version } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return openApiDocument(registrar.table, version) as unknown as ApiDocument;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string) => `\`${text}\``;

function bounds(low: number | undefined, high: number | undefined): string {
  if (low === undefined && high === undefined) return '';
  if (low !== undefined && high !== undefined) return ` ${low}–${high}`;
  return low !== undefined ? ` ≥ ${low}` : ` ≤ ${high}`;
}

/** A schema in a few words: `string`, `integer 1–1000`, `"a" \| "b"`, `object[]`. */
export function describeSchema(schema: Schema | undefined): string {
  if (!schema) return 'any';
  if (schema.$ref) return schema.$ref.replace(/^.*\//, '');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.map(describeSchema).join(' | ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return schema.properties ? 'object' : 'any';
  return types
    .map((type) => {
      if (type === 'array') return `${describeSchema(schema.items).includes(' ') ? `(${describeSchema(schema.items)})` : describeSchema(schema.items)}[]`;
      if (type === 'integer' || type === 'number') return `${type}${bounds(schema.minimum, schema.maximum)}`;
      if (type === 'string') {
        const length = bounds(schema.minLength, schema.maxLength);
        return `string${schema.format ? ` (${schema.format})` : ''}${length ? `,${length} characters` : ''}`;
      }
      return type;
    })
    .join(' | ');
}

/** The top-level fields of an object schema, as a table; anything else in a line. */
function fields(schema: Schema): string[] {
  if (!schema.properties || Object.keys(schema.properties).length === 0) return [`${describeSchema(schema)}`, ''];
  const required = new Set(schema.required ?? []);
  return [
    '| Field | Type | Required |',
    '|---|---|---|',
    ...Object.entries(schema.properties).map(
      ([name, property]) => `| ${code(name)} | ${cell(describeSchema(property))} | ${required.has(name) ? 'yes' : ''} |`,
    ),
    '',
  ];
}

function responseLine(status: string, response: Operation['responses'][string]): string {
  if (response.$ref) return `- ${status === 'default' ? 'any other status' : status}: \`{message}\`, the error every route may answer`;
  const schema = response.content?.['application/json'].schema;
  const shape = !schema ? 'no body' : schema.properties ? `\`{${Object.keys(schema.properties).join(', ')}}\`` : describeSchema(schema);
  return `- ${status} ${response.description ?? ''}: ${shape}`;
}

/** The group of a path: its segment after /api (`/api/teams/{id}` → `teams`), `scim` for SCIM, or the path itself outside both. */
function groupOf(path: string): string {
  const segments = path.split('/').filter(Boolean);
  if (segments[0] === 'scim') return 'scim';
  if (segments[0] !== 'api') return path;
  return segments[1] === 'v1' ? segments.slice(1, 3).join('/') : (segments[1] ?? path);
}

/** GitHub's anchor of an operation heading `GET /api/teams/{id}`. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

export function renderApiReference(document: ApiDocument): string {
  const groups = new Map<string, Array<[string, string, Operation]>>();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const group = groupOf(path);
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group)!.push([method.toUpperCase(), path, operation]);
    }
  }
  const lines = [
    `# ${document.info.title} API reference`,
    '',
    '<!-- Generated by `npm run docs:api` from the OpenAPI document of GET /api/openapi.json; do not edit. -->',
    '',
    `Every route of the service (API version ${document.info.version}), generated from the OpenAPI 3.1 document it serves at`,
    '`GET /api/openapi.json`; a running service renders the same document at `GET /api/docs`, with every schema in full.',
    'How clients authenticate, the active org, errors, lists and who may call what are in [Using the HTTP API](http-api.md).',
    '',
    'Authenticated routes take the `svc_session` cookie, or a token as `Authorization: Bearer <token>` or `X-Api-Key: <token>`.',
    'Every route may answer an error `{message}` with the status that says which.',
    '',
    '## Routes',
    '',
  ];
  for (const [group, operations] of groups) {
    lines.push(`- **${group}**: ${operations.map(([method, path]) => `[${method} ${path}](#${anchorOf(`${method} ${path}`)})`).join(', ')}`);
  }
  for (const [group, operations] of groups) {
    lines.push('', `## ${group}`);
    for (const [method, path, operation] of operations) {
      lines.push('', `### ${method} ${path}`, '');
      if (operation.summary) lines.push(operation.summary, '');
      lines.push(`Access: ${operation.security ? 'authenticated (session cookie or token)' : 'public'}.`, '');
      if (operation.parameters.length > 0) {
        lines.push('| Parameter | In | Type | Required |', '|---|---|---|---|');
        for (const parameter of operation.parameters) {
          lines.push(`| ${code(parameter.name)} | ${parameter.in} | ${cell(describeSchema(parameter.schema))} | ${parameter.required ? 'yes' : ''} |`);
        }
        lines.push('');
      }
      if (operation.requestBody) lines.push('Request body (JSON):', '', ...fields(operation.requestBody.content['application/json'].schema));
      lines.push('Responses:', '', ...Object.entries(operation.responses).map(([status, response]) => responseLine(status, response)));
    }
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const markdown = renderApiReference(servedDocument());
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(API_DOC_PATH) ? fs.readFileSync(API_DOC_PATH, 'utf8') : '';
    if (current !== markdown) {
      console.error('docs/api.md is not what the OpenAPI document gives: run npm run docs:api');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(API_DOC_PATH, markdown);
    console.log(`wrote docs/api.md: ${Object.keys(servedDocument().paths).length} paths`);
  }
}
