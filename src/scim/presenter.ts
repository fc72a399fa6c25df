/**
 * SCIM resources as clients see them (RFC 7643): a user, a group, a list response, each with the
 * schemas it follows and `meta`; and the response schemas of the routes. `location` is the path
 * of the resource on this service.
 */
import { SCIM_PREFIX } from './errors.ts';
import type { ScimGroupRow, ScimUserRow } from './store.ts';

export const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_URN = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_URN = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_URN = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

const META_SCHEMA = {
  type: 'object',
  properties: {
    resourceType: { type: 'string' },
    created: { type: 'string' },
    lastModified: { type: 'string' },
    location: { type: 'string' },
  },
  required: ['resourceType', 'created', 'lastModified', 'location'],
} as const;

const REFERENCE_SCHEMA = {
  type: 'object',
  properties: { value: { type: 'string' }, display: { type: 'string' }, $ref: { type: 'string' } },
  required: ['value', 'display', '$ref'],
} as const;

export const SCIM_USER_SCHEMA = {
  type: 'object',
  properties: {
    schemas: { type: 'array', items: { type: 'string' } },
    id: { type: 'string' },
    externalId: { type: 'string' },
    userName: { type: 'string' },
    displayName: { type: 'string' },
    name: { type: 'object', properties: { formatted: { type: 'string' } }, required: ['formatted'] },
    emails: {
      type: 'array',
      items: {
        type: 'object',
        properties: { value: { type: 'string' }, type: { type: 'string' }, primary: { type: 'boolean' } },
        required: ['value', 'type', 'primary'],
      },
    },
    active: { type: 'boolean' },
    groups: { type: 'array', items: REFERENCE_SCHEMA },
    meta: META_SCHEMA,
  },
  required: ['schemas', 'id', 'userName', 'displayName', 'name', 'emails', 'active', 'groups', 'meta'],
} as const;

export const SCIM_GROUP_SCHEMA = {
  type: 'object',
  properties: {
    schemas: { type: 'array', items: { type: 'string' } },
    id: { type: 'string' },
    externalId: { type: 'string' },
    displayName: { type: 'string' },
    members: { type: 'array', items: REFERENCE_SCHEMA },
    meta: META_SCHEMA,
  },
  required: ['schemas', 'id', 'displayName', 'members', 'meta'],
} as const;

export function listResponseSchema(item: object) {
  return {
    type: 'object',
    properties: {
      schemas: { type: 'array', items: { type: 'string' } },
      totalResults: { type: 'integer', minimum: 0 },
      startIndex: { type: 'integer', minimum: 1 },
      itemsPerPage: { type: 'integer', minimum: 0 },
      Resources: { type: 'array', items: item },
    },
    required: ['schemas', 'totalResults', 'startIndex', 'itemsPerPage', 'Resources'],
  } as const;
}

const userLocation = (id: string) => `${SCIM_PREFIX}/Users/${id}`;
const groupLocation = (id: string) => `${SCIM_PREFIX}/Groups/${id}`;

export function presentScimUser(row: ScimUserRow, groups: Array<{ id: string; name: string }>) {
  return {
    schemas: [USER_URN],
    id: row.id,
    ...(row.external_id !== null && { externalId: row.external_id }),
    userName: row.login,
    displayName: row.name,
    name: { formatted: row.name },
    emails: row.email ? [{ value: row.email, type: 'work', primary: true }] : [],
    active: !row.is_disabled,
    groups: groups.map((group) => ({ value: group.id, display: group.name, $ref: groupLocation(group.id) })),
    meta: { resourceType: 'User', created: iso(row.created_at), lastModified: iso(row.updated_at), location: userLocation(row.id) },
  };
}

export function presentScimGroup(row: ScimGroupRow, members: Array<{ id: string; login: string }>) {
  return {
    schemas: [GROUP_URN],
    id: row.id,
    ...(row.external_id !== null && { externalId: row.external_id }),
    displayName: row.name,
    members: members.map((member) => ({ value: member.id, display: member.login, $ref: userLocation(member.id) })),
    meta: { resourceType: 'Group', created: iso(row.created_at), lastModified: iso(row.updated_at), location: groupLocation(row.id) },
  };
}

export function listResponse<T>(resources: T[], totalResults: number, startIndex: number) {
  return { schemas: [LIST_URN], totalResults, startIndex, itemsPerPage: resources.length, Resources: resources };
}
