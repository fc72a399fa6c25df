/** A SCIM client for tests: a service account of an org holding fixed:scim:provisioner, and requests with its token. */
import type { Response, TestApp } from './app.ts';
import { assignRole, buildServiceAccount, buildToken } from './factories.ts';

export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

export interface ScimClient {
  accountId: string;
  token: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body: unknown): Promise<Response>;
  put(path: string, body: unknown): Promise<Response>;
  patch(path: string, body: unknown): Promise<Response>;
  delete(path: string): Promise<Response>;
}

export function scimAs(app: TestApp, token: string, accountId = ''): ScimClient {
  const send = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    app.request(method, `/scim/v2${path}`, { token, body, contentType: 'application/scim+json', headers });
  return {
    accountId,
    token,
    get: (path, headers) => send('GET', path, undefined, headers),
    post: (path, body) => send('POST', path, body),
    put: (path, body) => send('PUT', path, body),
    patch: (path, body) => send('PATCH', path, body),
    delete: (path) => send('DELETE', path),
  };
}

/** A provisioning client of `orgId`: a Viewer service account with fixed:scim:provisioner and a token. */
export async function buildScimClient(app: TestApp, orgId = 'org_main'): Promise<ScimClient> {
  const account = await buildServiceAccount(app, { orgId, role: 'Viewer' });
  await assignRole(app, orgId, account.id, 'fixed:scim:provisioner');
  const { key } = await buildToken(app, account);
  return scimAs(app, key, account.id);
}

export const patchOf = (...Operations: Array<{ op: string; path?: string; value?: unknown }>) => ({ schemas: [PATCH_OP], Operations });

let sequence = 0;

/** A SCIM user body with a fresh userName and email; `overrides` replace attributes. */
export function scimUserBody(overrides: Record<string, unknown> = {}) {
  sequence += 1;
  const userName = `scim${sequence}-${Math.random().toString(36).slice(2, 8)}@corp.example`;
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: 'Barbara', familyName: `Jensen ${sequence}` },
    emails: [{ value: userName, type: 'work', primary: true }],
    active: true,
    ...overrides,
  };
}
