import { expect } from 'chai';
import { FIXED_ROLES } from '../src/accesscontrol/builtin-roles.ts';
import { auditEntries, createOrg, createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const NAMED_FIXED_ROLES = [
  'fixed:dashboards:reader',
  'fixed:dashboards:writer',
  'fixed:folders:creator',
  'fixed:connectors:reader',
  'fixed:connectors:explorer',
  'fixed:alert.rules:reader',
  'fixed:alert.rules:writer',
  'fixed:alert.silences:creator',
  'fixed:users:reader',
  'fixed:users:writer',
  'fixed:teams:writer',
  'fixed:roles:reader',
  'fixed:roles:writer',
];

describe('access control: status and seeding', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  it('GET /api/access-control/status is public', async () => {
    const res = await app.request('GET', '/api/access-control/status');
    expect(res).to.deep.include({ status: 200, body: { enabled: true, rbacEnabled: true } });
  });

  it('seeds org_main with the four basic roles and exactly 57 fixed roles, each described', async () => {
    const roles: Array<{ uid: string; description: string }> = await app.db('roles').where('org_id', 'org_main').select('uid', 'description');
    const uids = roles.map((r) => r.uid);
    expect(uids.filter((u) => u.startsWith('basic:'))).to.have.members(['basic:viewer', 'basic:editor', 'basic:admin', 'basic:server_admin']);
    const fixed = roles.filter((r) => r.uid.startsWith('fixed:'));
    expect(fixed).to.have.length(57);
    for (const role of fixed) {
      expect(role.uid).to.match(/^fixed:[a-z.]+:[a-z]+$/);
      expect(role.description, role.uid).to.have.length.greaterThan(5);
    }
    expect(uids).to.include.members(NAMED_FIXED_ROLES);
    expect(await app.db('roles').whereNull('org_id').pluck('uid')).to.deep.equal(['basic:server_admin']);
  });

  it('gives fixed:dashboards:writer read, write, create, delete and permissions', async () => {
    const writer = FIXED_ROLES.find((r) => r.uid === 'fixed:dashboards:writer')!;
    expect(writer.permissions.map((p) => p.action)).to.include.members([
      'dashboards:read',
      'dashboards:write',
      'dashboards:create',
      'dashboards:delete',
      'dashboards.permissions:write',
    ]);
  });

  it('seeds a new org the same way', async () => {
    const orgId = await createOrg(app);
    expect(await app.count('roles', { org_id: orgId })).to.equal(61);
  });

  describe('POST /api/access-control/seed', () => {
    it('is 401 without a session', async () => {
      expect((await app.request('POST', '/api/access-control/seed')).status).to.equal(401);
    });

    it('is 403 for an org admin who is not a server admin', async () => {
      const orgAdmin = await createUser(app, { role: 'Admin' });
      expect((await app.request('POST', '/api/access-control/seed', { cookie: orgAdmin.cookie })).status).to.equal(403);
    });

    it('is idempotent, and restores a deleted or drifted role', async () => {
      const first = await app.request('POST', '/api/access-control/seed', { cookie: serverAdmin.cookie });
      expect(first.status).to.equal(200);
      expect(first.body).to.include({ orgId: 'org_main', created: 0, updated: 0, unchanged: 61 });
      const before = await app.count('role_permissions');

      // Drift no endpoint can cause (an operator's hand, an older release): what seeding exists to repair.
      await app.db('roles').where({ org_id: 'org_main', uid: 'fixed:teams:writer' }).delete();
      const viewer = await app.db('roles').where({ org_id: 'org_main', uid: 'basic:viewer' }).first('id');
      const dropped = await app.db('role_permissions').where('role_id', viewer.id).first('id');
      await app.db('role_permissions').where('id', dropped.id).delete();

      const again = await app.request('POST', '/api/access-control/seed', { cookie: serverAdmin.cookie });
      expect(again.body).to.include({ created: 1, updated: 1, unchanged: 59 });
      expect(await app.count('role_permissions')).to.equal(before);
      const audit = await auditEntries(app, { action: 'role.seeded', actor_id: serverAdmin.id });
      expect(audit).to.have.length(2);
    });
  });
});
