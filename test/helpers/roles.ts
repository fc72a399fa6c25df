/** What the role test files share: reading a role and its permissions back, and creating one through the API. */
import { expect } from 'chai';
import type { TestApp } from './app.ts';
import { api, buildRole, type RoleBody, type TestUser } from './factories.ts';

/** Bound to getters: the app and the default author are made in the suite's before(). */
export function roleHelpers(app: () => TestApp, author: () => TestUser) {
  return {
    /** The stored role of the org (null: the global one). */
    roleRow: (uid: string, orgId: string | null = 'org_main') =>
      (orgId ? app().db('roles').where({ uid, org_id: orgId }) : app().db('roles').where('uid', uid).whereNull('org_id')).first(),
    /** The role's stored permissions as `<action> <scope>`, sorted. */
    permissionRows: async (roleId: number): Promise<string[]> =>
      (await app().db('role_permissions').where('role_id', roleId).orderBy(['action', 'scope']).select('action', 'scope')).map(
        (p: { action: string; scope: string }) => `${p.action} ${p.scope}`,
      ),
    /** POST /api/access-control/roles, expected to answer 201. */
    async createRole(overrides: Partial<RoleBody> = {}, as: TestUser = author()) {
      const res = await api(app(), as).post('/api/access-control/roles', buildRole(overrides));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body as RoleBody & { version: number };
    },
  };
}
