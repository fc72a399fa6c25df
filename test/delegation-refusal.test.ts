import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, refusalEntries, buildRole, createUser, type TestUser } from './helpers/factories.ts';

describe('delegation refusals worded by the policy', () => {
  let app: TestApp;
  /** A Viewer given fixed:roles:writer: may write roles, but holds no teams:write. */
  let rolesWriter: TestUser;
  let viewer: TestUser;

  before(async () => {
    app = await startTestApp();
    rolesWriter = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesWriter.id, 'fixed:roles:writer');
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app.close();
  });

  it('a role granting what the caller does not hold is 403 naming the role, with one decision, and nothing is written', async () => {
    const body = buildRole({ permissions: [{ action: 'teams:write', scope: 'teams:*' }] });
    const engine = app.services.engine;
    const original = engine.authorize.bind(engine);
    let calls = 0;
    engine.authorize = async (input) => {
      calls++;
      return original(input);
    };
    try {
      const res = await api(app, rolesWriter).post('/api/access-control/roles', body);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal(`permission denied: role ${body.uid} grants permissions you do not hold, and you can only grant what you hold`);
      expect(calls).to.equal(1);
    } finally {
      engine.authorize = original;
    }
    expect(await app.count('roles', { uid: body.uid })).to.equal(0);
    expect(await refusalEntries(app, 'roles:write', { actor_id: rolesWriter.id })).to.have.length(1);
  });

  it('a caller without the action itself learns only which action was refused', async () => {
    const res = await api(app, viewer).post('/api/access-control/roles', buildRole({ permissions: [{ action: 'teams:write', scope: 'teams:*' }] }));
    expect(res.status).to.equal(403);
    expect(res.body.message).to.equal('permission denied: you need roles:write to do this');
  });
});
