/**
 * What the admin user endpoints (`/api/admin/users/<userId>/…`, and the quotas set there) share:
 * the user id parameter, the policy's name for the user, and finding the target user (people
 * only; a service account is managed through its own API).
 */
import type { Knex } from 'knex';
import { NotFoundError } from '../errors.ts';
import { findHumanUserById, type UserRow } from './users.store.ts';

export const userIdParams = {
  type: 'object',
  properties: { userId: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['userId'],
} as const;

/** The policy's name for any user at server level: only a server admin holds it. */
export const globalUser = (id: string) => ({ kind: 'global.users', id });

export async function findTargetUser(db: Knex, userId: string): Promise<UserRow> {
  const user = await findHumanUserById(db, userId);
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  return user;
}
