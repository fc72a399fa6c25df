import { expect } from 'chai';
import pino from 'pino';
import { addAssignment, createRole } from '../src/accesscontrol/policy-writer.ts';
import { AuthzEngine } from '../src/authz/engine.ts';
import { readPolicyHeads } from '../src/db/policy-changes.ts';
import type { AuthzInput, Subject } from '../src/authz/types.ts';
import type { PolicyModule } from '../src/authz/wasm.ts';
import { DASHBOARDS, insertFoldered } from '../src/folders/foldered.store.ts';
import { insertFolder } from '../src/folders/store.ts';
import { removeOrgMembership, setMemberRole } from '../src/orgs/store.ts';
import { createOrg, createUser, grantManagedPermissions, type TestUser } from './helpers/factories.ts';
import { createTestDatabase, startTestApp, type TestApp } from './helpers/app.ts';

const silent = pino({ level: 'silent' });

describe('the authz engine', () => {
  let app: TestApp;
  let viewer: TestUser;
  let subject: Subject;
  before(async () => {
    app = await startTestApp();
    viewer = await createUser(app, { role: 'Viewer' });
    subject = { id: viewer.id, kind: 'user', server_admin: false, disabled: false };
  });
  after(async () => {
    await app.close();
  });

  const writeDashboard = (uid: string): AuthzInput => ({ subject, org_id: 'org_main', action: 'dashboards:write', resource: { kind: 'dashboards', uid } });

  it('sees a committed grant at the next authorize(), inherited through the folder chain', async () => {
    const now = app.clock.now();
    await app.services.transact(async (tx) => {
      await insertFolder(tx, { orgId: 'org_main', uid: 'top', title: 'Top', description: '', parentUid: null, createdBy: viewer.id }, now);
      await insertFolder(tx, { orgId: 'org_main', uid: 'mid', title: 'Mid', description: '', parentUid: 'top', createdBy: viewer.id }, now);
      await insertFoldered(tx, DASHBOARDS, 'org_main', 'dash1', { title: 'D', folderUid: 'mid', content: {} }, viewer.id, now);
    });
    const denied = await app.services.engine.authorize(writeDashboard('dash1'));
    expect(denied.allow).to.equal(false);
    expect(denied.reasons).to.have.length(1);
    expect(denied.reasons[0]).to.include({ kind: 'missing', action: 'dashboards:write' });

    await grantManagedPermissions(app, 'org_main', { kind: 'user', userId: viewer.id }, [{ action: 'dashboards:write', scope: 'folders:uid:top' }]);
    const allowed = await app.services.engine.authorize(writeDashboard('dash1'));
    expect(allowed.allow).to.equal(true);
    // authorize() works out no reasons for an allow; explain() names the grant that matched
    const explained = await app.services.engine.explain(writeDashboard('dash1'));
    expect(explained).to.deep.equal({
      allow: true,
      reasons: [{ kind: 'grant', role: `managed:users:${viewer.id}:permissions`, action: 'dashboards:write', scope: 'folders:uid:top' }],
    });
  });

  it('patches a commit of a thousand changes, each place once, and the next authorize() sees every one', async () => {
    const member = await createUser(app, { role: 'Viewer' });
    const leaving = await createUser(app, { role: 'Viewer' });
    const ask = (user: TestUser, action: string) =>
      app.services.engine.authorize({
        subject: { id: user.id, kind: 'user', server_admin: false, disabled: false },
        org_id: 'org_main',
        action,
        resource: { kind: 'dashboards', uid: 'dash1' },
      });
    expect((await ask(member, 'dashboards:bulk-599')).allow).to.equal(false);
    expect((await ask(leaving, 'dashboards:read')).allow).to.equal(true);
    const before = app.services.engine.stats();
    // 600 roles assigned to one member: 1,200 fragments named (a role and the member each time), 601 places
    await app.services.transact(async (tx) => {
      for (let i = 0; i < 600; i++) {
        const uid = `custom:bulk-${i}`;
        const permissions = [{ action: `dashboards:bulk-${i}`, scope: 'dashboards:uid:dash1' }];
        const roleId = await createRole(tx, 'org_main', { uid, name: uid, displayName: uid, description: '', groupName: '', permissions }, app.clock.now());
        await addAssignment(tx, { kind: 'user', userId: member.id, orgId: 'org_main' }, roleId, app.clock.now());
      }
      await removeOrgMembership(tx, 'org_main', leaving.id);
    });
    expect((await ask(member, 'dashboards:bulk-599')).allow).to.equal(true);
    expect((await ask(member, 'dashboards:bulk-0')).allow).to.equal(true);
    expect((await ask(leaving, 'dashboards:read')).allow, 'a member removed in the same commit').to.equal(false);
    const after = app.services.engine.stats();
    expect(after.rebuilds, 'patched, not rebuilt').to.equal(before.rebuilds);
    expect(after.patches - before.patches).to.equal(602);
  });

  it('makes callers that arrive during a refresh wait for it', async () => {
    const input: AuthzInput = { subject, org_id: 'org_main', action: 'dashboards:read' };
    expect((await app.services.engine.authorize(input)).allow).to.equal(true);
    for (const [role, expected] of [
      ['None', false],
      ['Viewer', true],
    ] as const) {
      await app.services.transact(async (tx) => {
        await setMemberRole(tx, 'org_main', viewer.id, role);
      });
      const decisions = await Promise.all(Array.from({ length: 5 }, () => app.services.engine.authorize(input)));
      expect(
        decisions.map((d) => d.allow),
        `after the change to ${role}`,
      ).to.deep.equal(Array(5).fill(expected));
    }
  });

  it('keeps at most maxLoadedOrgs documents, dropping the least recently used and reloading it when asked', async () => {
    const engine = new AuthzEngine(
      app.db,
      (app.services.engine as unknown as { policy: PolicyModule }).policy,
      { legacyAclEnabled: true, maxLoadedOrgs: 2 },
      silent,
    );
    const ask = (orgId: string) => engine.authorize({ subject, org_id: orgId, action: 'dashboards:read' });
    const other = await createOrg(app);
    await ask('org_main');
    await ask(other);
    await ask('org_main');
    await engine.authorize({ subject, org_id: null, action: 'audit:read' });
    expect(engine.stats().orgs).to.equal(2);
    expect(engine.stats().rebuilds).to.equal(3);
    expect((await ask('org_main')).allow, 'the recently used org stayed loaded').to.equal(true);
    expect(engine.stats().rebuilds).to.equal(3);
    expect((await ask(other)).allow, 'a non-member, after a reload').to.equal(false);
    expect(engine.stats().rebuilds).to.equal(4);
  });

  it('keeps the most recently asked authorize() answers up to its bound, and none given before a change', async () => {
    const engine = new AuthzEngine(
      app.db,
      (app.services.engine as unknown as { policy: PolicyModule }).policy,
      { legacyAclEnabled: true, maxLoadedOrgs: 4, maxKeptDecisions: 2 },
      silent,
    );
    const ask = (action: string) => engine.authorize({ subject, org_id: 'org_main', action });
    const hits = () => engine.stats().keptDecisionHits;
    await ask('dashboards:read');
    await ask('folders:read');
    expect((await ask('dashboards:read')).allow).to.equal(true);
    expect(hits(), 'asked again').to.equal(1);
    await ask('teams:create');
    expect(engine.stats().keptDecisions, 'at the bound').to.equal(2);
    await ask('dashboards:read');
    expect(hits(), 'the most recently asked stays').to.equal(2);
    await ask('folders:read');
    expect(hits(), 'the least recently asked went first').to.equal(2);

    expect((await ask('teams:create')).allow).to.equal(false);
    await app.services.transact(async (tx) => {
      await setMemberRole(tx, 'org_main', viewer.id, 'Admin');
    });
    // this engine is not the app's: it learns of the change as another instance does
    await engine.pollChanges();
    const before = hits();
    expect((await ask('teams:create')).allow, 'after the change').to.equal(true);
    expect(hits(), 'an answer given before the change is not reused').to.equal(before);
    await app.services.transact(async (tx) => {
      await setMemberRole(tx, 'org_main', viewer.id, 'Viewer');
    });
    await engine.pollChanges();
    expect((await ask('teams:create')).allow, 'and back').to.equal(false);
  });

  it('keeps filter() answers for the same list, and gives none kept before a change', async () => {
    const member = await createUser(app, { role: 'Viewer' });
    const asker: Subject = { id: member.id, kind: 'user', server_admin: false, disabled: false };
    await app.services.transact(async (tx) => {
      await insertFoldered(tx, DASHBOARDS, 'org_main', 'kept-a', { title: 'A', folderUid: 'mid', content: {} }, viewer.id, app.clock.now());
      await insertFoldered(tx, DASHBOARDS, 'org_main', 'kept-b', { title: 'B', folderUid: null, content: {} }, viewer.id, app.clock.now());
    });
    const engine = app.services.engine;
    const writable = (uids: string[], subjectOfList = asker) =>
      engine.filter({ subject: subjectOfList, org_id: 'org_main', action: 'dashboards:write', resources: uids.map((uid) => ({ kind: 'dashboards', uid })) });
    const hits = () => engine.stats().keptFilterHits;

    expect(await writable(['kept-a', 'kept-b'])).to.deep.equal([]);
    const before = hits();
    expect(await writable(['kept-a', 'kept-b'])).to.deep.equal([]);
    expect(hits(), 'the same list again').to.equal(before + 1);

    await grantManagedPermissions(app, 'org_main', { kind: 'user', userId: member.id }, [{ action: 'dashboards:write', scope: 'folders:uid:top' }]);
    expect(await writable(['kept-a', 'kept-b']), 'after the grant').to.deep.equal([0]);
    expect(hits(), 'an answer given before the grant is not reused').to.equal(before + 1);
    // another list, another subject: other questions
    expect(await writable(['kept-b', 'kept-a'])).to.deep.equal([1]);
    expect(await writable(['kept-a', 'kept-b'], { ...asker, disabled: true })).to.deep.equal([]);
    const answer = await writable(['kept-a', 'kept-b']);
    expect(hits()).to.equal(before + 2);
    answer.push(1);
    expect(await writable(['kept-a', 'kept-b']), "a caller's change to its answer is its own").to.deep.equal([0]);

    await app.services.transact(async (tx) => {
      await setMemberRole(tx, 'org_main', member.id, 'Editor');
    });
    expect(await writable(['kept-a', 'kept-b']), 'after the role change').to.deep.equal([0, 1]);
  });

  it('does not see a rolled-back change, and logs no change for it', async () => {
    const head = async () => (await readPolicyHeads(app.db, ['org_main'])).get('org_main');
    const before = await head();
    await app.services
      .transact(async (tx) => {
        await setMemberRole(tx, 'org_main', viewer.id, 'Admin');
        throw new Error('abort');
      })
      .catch(() => undefined);
    expect((await app.services.engine.authorize({ subject, org_id: 'org_main', action: 'teams:create' })).allow).to.equal(false);
    expect(await head()).to.equal(before);
  });

  it('lets another instance see a change after its change poll', async () => {
    const other = new AuthzEngine(
      app.db,
      (app.services.engine as unknown as { policy: PolicyModule }).policy,
      { legacyAclEnabled: true, maxLoadedOrgs: 10 },
      silent,
    );
    const input: AuthzInput = { subject, org_id: 'org_main', action: 'teams:create' };
    expect((await other.authorize(input)).allow).to.equal(false);
    await app.services.transact(async (tx) => {
      await setMemberRole(tx, 'org_main', viewer.id, 'Admin');
    });
    expect((await app.services.engine.authorize(input)).allow, 'this instance: at once').to.equal(true);
    await other.pollChanges();
    expect((await other.authorize(input)).allow, 'the other instance: after its poll').to.equal(true);
    await app.services.transact(async (tx) => {
      await setMemberRole(tx, 'org_main', viewer.id, 'Viewer');
    });
  });

  it('denies a disabled subject and a non-member server admin', async () => {
    expect((await app.services.engine.authorize({ subject: { ...subject, disabled: true }, org_id: 'org_main', action: 'dashboards:read' })).allow).to.equal(
      false,
    );
    const outsider = { id: 'usr_outsider', kind: 'user' as const, server_admin: true, disabled: false };
    const decision = await app.services.engine.authorize({ subject: outsider, org_id: 'org_main', action: 'dashboards:read' });
    expect(decision.allow).to.equal(false);
    expect(decision.reasons).to.deep.equal([{ kind: 'org', problem: 'not-member', org: 'org_main' }]);
  });

  describe('fails closed', () => {
    it('when evaluation throws', async () => {
      const broken = {
        async instantiate() {
          return {
            setData() {},
            evaluate() {
              throw new Error('wasm trap');
            },
            memoryBytes: 0,
          };
        },
      } as unknown as PolicyModule;
      const engine = new AuthzEngine(app.db, broken, { legacyAclEnabled: true, maxLoadedOrgs: 10 }, silent);
      expect(await engine.authorize({ subject, org_id: 'org_main', action: 'dashboards:read' })).to.deep.equal({
        allow: false,
        reasons: [{ kind: 'error' }],
      });
      expect(await engine.permissions(subject, 'org_main')).to.deep.equal({});
      expect(await engine.filter({ subject, org_id: 'org_main', action: 'dashboards:read', resources: [{ kind: 'dashboards', uid: 'x' }] })).to.deep.equal([]);
    });

    it('when the policy data cannot be loaded', async () => {
      const database = await createTestDatabase();
      const lonely = await startTestApp({ database });
      const engine = new AuthzEngine(
        lonely.db,
        (lonely.services.engine as unknown as { policy: PolicyModule }).policy,
        { legacyAclEnabled: true, maxLoadedOrgs: 10 },
        silent,
      );
      await lonely.close();
      await database.drop();
      const decision = await engine.authorize({ subject, org_id: 'org_main', action: 'dashboards:read' });
      expect(decision).to.deep.equal({ allow: false, reasons: [{ kind: 'error' }] });
    });

    it('when the policy returns something that is not a decision', async () => {
      const odd = {
        async instantiate() {
          return { setData() {}, evaluate: () => ({ allow: 'yes' }), memoryBytes: 0 };
        },
      } as unknown as PolicyModule;
      const engine = new AuthzEngine(app.db, odd, { legacyAclEnabled: true, maxLoadedOrgs: 10 }, silent);
      expect((await engine.authorize({ subject, org_id: 'org_main', action: 'dashboards:read' })).allow).to.equal(false);
    });
  });
});
