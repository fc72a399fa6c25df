/**
 * The engine keeps its answers per org document — `GET /api/user/permissions` by subject, a
 * decision by its input (src/authz/engine.ts): asked again, it is the same answer; after any
 * change of what the caller holds — its org role, a team it joins or leaves, a grant on a
 * resource, a role's permissions — the next request shows the change.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createOrg, createUser, permissionsOf, signInAgain } from './helpers/factories.ts';

describe('the kept answers of the policy engine', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('send a kept permission map as the same JSON each time, with the JSON content type', async () => {
    const orgId = await createOrg(app);
    const user = await createUser(app, { orgId, role: 'Editor' });
    const [first, second] = [await api(app, user, orgId).get('/api/user/permissions'), await api(app, user, orgId).get('/api/user/permissions')];
    for (const res of [first, second]) {
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(JSON.stringify(first.body))));
    }
    expect(second.body).to.deep.equal(first.body);
    expect(first.body['dashboards:create']).to.include('folders:*');
  });

  it('are the same when asked again, and show a role change, a team membership change, a grant change and a role edit at the next request', async () => {
    const orgId = await createOrg(app);
    const admin = await createUser(app, { orgId, role: 'Admin' });
    let user = await createUser(app, { orgId, role: 'Viewer' });
    const inOrg = api(app, admin, orgId);
    const held = () => permissionsOf(app, user, orgId);

    const first = await held();
    expect(await held()).to.deep.equal(first);
    expect(first['dashboards:create']).to.equal(undefined);

    // the org role (a change of it ends the user's sessions); a decision asked again is kept too
    const createFolder = (uid: string) => api(app, user, orgId).post('/api/folders', { uid, title: uid });
    expect((await createFolder(`a-${user.id}`.slice(0, 40))).status).to.equal(403);
    expect((await createFolder(`a-${user.id}`.slice(0, 40))).status).to.equal(403);
    expect((await inOrg.patch(`/api/org/users/${user.id}`, { role: 'Editor' })).status).to.equal(200);
    user = await signInAgain(app, user);
    expect((await held())['dashboards:create']).to.include('folders:*');
    expect((await createFolder(`a-${user.id}`.slice(0, 40))).status).to.equal(201);
    expect((await inOrg.patch(`/api/org/users/${user.id}`, { role: 'Viewer' })).status).to.equal(200);
    user = await signInAgain(app, user);
    // what is left is the folder it created, as its creator
    expect((await held())['dashboards:create']).to.deep.equal([`folders:uid:a-${user.id}`.slice(0, 'folders:uid:'.length + 40)]);
    expect((await createFolder(`b-${user.id}`.slice(0, 40))).status).to.equal(403);

    // a team's role, held through membership
    const roleUid = `custom:cached-${user.id}`;
    const role = await inOrg.post('/api/access-control/roles', {
      uid: roleUid,
      name: roleUid,
      displayName: 'Cached permissions',
      permissions: [{ action: 'dashboards:write', scope: 'dashboards:uid:cached-one' }],
    });
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    const team = await inOrg.post('/api/teams', { name: `cached ${user.id}` });
    expect(team.status).to.equal(201);
    const teamId = team.body.teamId as string;
    expect((await inOrg.post(`/api/access-control/teams/${teamId}/roles`, { roleUid })).status).to.equal(200);
    expect((await held())['dashboards:write'] ?? []).to.not.include('dashboards:uid:cached-one');
    expect((await inOrg.post(`/api/teams/${teamId}/members`, { userId: user.id })).status).to.equal(200);
    expect((await held())['dashboards:write']).to.include('dashboards:uid:cached-one');

    // the role's own permissions, edited
    const edited = await inOrg.put(`/api/access-control/roles/${roleUid}`, {
      name: roleUid,
      displayName: 'Cached permissions',
      version: role.body.version as number,
      permissions: [{ action: 'dashboards:write', scope: 'dashboards:uid:cached-two' }],
    });
    expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
    expect((await held())['dashboards:write'])
      .to.include('dashboards:uid:cached-two')
      .and.not.include('dashboards:uid:cached-one');

    expect((await inOrg.delete(`/api/teams/${teamId}/members/${user.id}`)).status).to.equal(200);
    expect((await held())['dashboards:write'] ?? []).to.not.include('dashboards:uid:cached-two');

    // a grant on a folder, given and taken back
    const folderUid = `cached-${user.id}`.slice(0, 40);
    expect((await inOrg.post('/api/folders', { uid: folderUid, title: `Cached ${user.id}` })).status).to.equal(201);
    const grant = await inOrg.post(`/api/folders/${folderUid}/permissions`, { items: [{ userId: user.id, permission: 2 }] });
    expect(grant.status, JSON.stringify(grant.body)).to.equal(200);
    expect((await held())['folders:write']).to.include(`folders:uid:${folderUid}`);
    expect((await inOrg.post(`/api/folders/${folderUid}/permissions`, { items: [] })).status).to.equal(200);
    expect((await held())['folders:write'] ?? []).to.not.include(`folders:uid:${folderUid}`);
  });
});
