/**
 * SCIM 2.0 (RFC 7643, RFC 7644) at /scim/v2 for an identity provider provisioning one org: its
 * Users and Groups (users.routes.ts, groups.routes.ts) and the discovery endpoints that describe
 * what this server supports. Every route needs a service account's token holding scim:read or
 * scim:write (the fixed role fixed:scim:provisioner holds both); the org is the token's.
 */
import type { RouteModule } from '../http/route.ts';
import { MAX_FILTER_LENGTH } from './filter.ts';
import { scimGroupRoutes } from './groups.routes.ts';
import { MAX_RESULTS } from './list.ts';
import { GROUP_URN, LIST_URN, USER_URN } from './presenter.ts';
import { SCIM_PREFIX } from './errors.ts';
import { SCIM_ERRORS, scimUserRoutes } from './users.routes.ts';

const SERVICE_PROVIDER_CONFIG_URN = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_URN = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_URN = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

const supported = (value: boolean) => ({ supported: value });

const SERVICE_PROVIDER_CONFIG = {
  schemas: [SERVICE_PROVIDER_CONFIG_URN],
  patch: supported(true),
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MAX_RESULTS },
  changePassword: supported(false),
  sort: supported(false),
  etag: supported(false),
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'Service account token',
      description: `A token of a service account holding fixed:scim:provisioner, as "Authorization: Bearer svc_sa_…"; filters up to ${MAX_FILTER_LENGTH} characters.`,
      primary: true,
    },
  ],
  meta: { resourceType: 'ServiceProviderConfig', location: `${SCIM_PREFIX}/ServiceProviderConfig` },
};

const RESOURCE_TYPES = [
  {
    schemas: [RESOURCE_TYPE_URN],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'A user the org provisioned',
    schema: USER_URN,
    meta: { resourceType: 'ResourceType', location: `${SCIM_PREFIX}/ResourceTypes/User` },
  },
  {
    schemas: [RESOURCE_TYPE_URN],
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    description: 'A team the org provisioned',
    schema: GROUP_URN,
    meta: { resourceType: 'ResourceType', location: `${SCIM_PREFIX}/ResourceTypes/Group` },
  },
];

function attribute(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    type: 'string',
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...extra,
  };
}

const REFERENCE_ATTRIBUTES = [attribute('value', { mutability: 'immutable' }), attribute('display', { mutability: 'readOnly' })];

const SCHEMAS = [
  {
    schemas: [SCHEMA_URN],
    id: USER_URN,
    name: 'User',
    description: 'User account',
    attributes: [
      attribute('userName', { required: true, uniqueness: 'server', description: 'The login: letters, digits and . _ @ + -' }),
      attribute('externalId', { caseExact: true, description: "The provisioning client's id of the user, unique in the org" }),
      attribute('displayName'),
      attribute('name', { type: 'complex', subAttributes: [attribute('formatted'), attribute('givenName'), attribute('familyName')] }),
      attribute('emails', {
        type: 'complex',
        multiValued: true,
        description: 'One email is kept: the primary one, else the first',
        subAttributes: [attribute('value'), attribute('type'), attribute('primary', { type: 'boolean' })],
      }),
      attribute('active', { type: 'boolean', description: 'false disables the user and ends its sessions' }),
      attribute('groups', { type: 'complex', multiValued: true, mutability: 'readOnly', subAttributes: REFERENCE_ATTRIBUTES }),
    ],
    meta: { resourceType: 'Schema', location: `${SCIM_PREFIX}/Schemas/${USER_URN}` },
  },
  {
    schemas: [SCHEMA_URN],
    id: GROUP_URN,
    name: 'Group',
    description: 'A team of the org',
    attributes: [
      attribute('displayName', { required: true, uniqueness: 'server' }),
      attribute('externalId', { caseExact: true }),
      attribute('members', { type: 'complex', multiValued: true, subAttributes: REFERENCE_ATTRIBUTES }),
    ],
    meta: { resourceType: 'Schema', location: `${SCIM_PREFIX}/Schemas/${GROUP_URN}` },
  },
];

/** The discovery documents are fixed; their schema says only that they are objects with `schemas`. */
const DOCUMENT_SCHEMA = { type: 'object', properties: { schemas: { type: 'array', items: { type: 'string' } } }, additionalProperties: true } as const;
const LIST_SCHEMA = {
  type: 'object',
  properties: {
    schemas: { type: 'array', items: { type: 'string' } },
    totalResults: { type: 'integer', minimum: 0 },
    startIndex: { type: 'integer', minimum: 1 },
    itemsPerPage: { type: 'integer', minimum: 0 },
    Resources: { type: 'array', items: DOCUMENT_SCHEMA },
  },
  required: ['schemas', 'totalResults', 'Resources'],
} as const;

const list = (resources: object[]) => ({
  schemas: [LIST_URN],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources,
});

export const scimRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/ServiceProviderConfig`,
    access: 'authenticated',
    level: 'org',
    summary: 'SCIM: what this server supports (PATCH and filters; no bulk, sort, etag or password changes).',
    responses: { 200: DOCUMENT_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, authorize }) {
      await authorize('scim:read');
      ctx.body = SERVICE_PROVIDER_CONFIG;
    },
  });

  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/ResourceTypes`,
    access: 'authenticated',
    level: 'org',
    summary: 'SCIM: the resource types, User and Group.',
    responses: { 200: LIST_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, authorize }) {
      await authorize('scim:read');
      ctx.body = list(RESOURCE_TYPES);
    },
  });

  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/Schemas`,
    access: 'authenticated',
    level: 'org',
    summary: 'SCIM: the attributes of User and Group this server keeps.',
    responses: { 200: LIST_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, authorize }) {
      await authorize('scim:read');
      ctx.body = list(SCHEMAS);
    },
  });

  scimUserRoutes(routes);
  scimGroupRoutes(routes);
};
