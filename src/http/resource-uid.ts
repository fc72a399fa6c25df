/**
 * The uid of a folder, dashboard or alert rule, given by the client or made for it. It sits
 * inside a policy scope (`folders:uid:<uid>`) and in URLs, so only letters, digits, `-` and `_`
 * are accepted: `*`, `:`, `/`, `%` and the like could widen a scope or a path. `general` is the
 * root folder's name in Grafana's API and is never a folder of its own.
 */
export const ROOT_FOLDER_UID = 'general';

export const resourceUidSchema = { type: 'string', pattern: '^(?!general$)[A-Za-z0-9_-]{1,40}$' } as const;

/** Path params naming a resource by uid: lookups only, so any short string (a wrong one is a 404). */
export const uidParams = {
  type: 'object',
  properties: { uid: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['uid'],
} as const;
