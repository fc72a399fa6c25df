/**
 * Who may change setup (POST /api/setup/config, POST /api/setup/complete), as the policy decides
 * it: anyone while no user exists, afterwards a server admin; and a change racing the first
 * admin's creation lands before it or not at all.
 */
import { expect } from 'chai';
import type { AuthzInput } from '../src/authz/types.ts';
import { createFirstAdmin } from '../src/identity/setup.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, refusalEntries, buildUser, DENIED } from './helpers/factories.ts';

const SETTINGS = { notifications: { email: 'ops@example.test' } };
const CHANGES = [
  { path: '/api/setup/config', body: SETTINGS, audit: 'setup.config_saved' },
  { path: '/api/setup/complete', body: undefined, audit: 'setup.completed' },
] as const;

describe('setup changes, decided by the policy', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  const written = async () => ({
    settings: await app.count('settings', { key: 'platform' }),
    complete: await app.count('settings', { key: 'setup.complete' }),
  });

  for (const change of CHANGES) {
    describe(`POST ${change.path}`, () => {
      it('is open to anyone while no user exists', async () => {
        const res = await app.request('POST', change.path, { body: change.body });
        expect(res.status).to.equal(200);
        const [entry] = await auditEntries(app, { action: change.audit, outcome: 'success' });
        expect(entry).to.include({ actor_type: 'system', actor_id: null });
      });

      it('once a user exists: 401 without a session, 403 for an org admin, 200 for a server admin', async () => {
        const orgAdmin = await buildUser(app, { role: 'Admin' });
        const serverAdmin = await buildUser(app, { role: 'Admin', svcAdmin: true });

        const anonymous = await app.request('POST', change.path, { body: change.body });
        expect(anonymous.status).to.equal(401);
        expect(anonymous.body).to.deep.equal({ message: 'setup is done: sign in as a server admin to change it' });
        const refused = await app.request('POST', change.path, { body: change.body, cookie: orgAdmin.cookie });
        expect(refused.status).to.equal(403);
        expect(refused.body.message).to.match(DENIED);
        expect(await written()).to.deep.equal({ settings: 0, complete: 0 });
        const [failure] = await refusalEntries(app, 'settings:write');
        expect(failure).to.include({ actor_id: orgAdmin.id });

        const allowed = await app.request('POST', change.path, { body: change.body, cookie: serverAdmin.cookie });
        expect(allowed.status).to.equal(200);
        const [entry] = await auditEntries(app, { action: change.audit, outcome: 'success' });
        expect(entry).to.include({ actor_id: serverAdmin.id });
      });

      it('is refused (409, nothing written, audited) when the first admin is created after the policy allowed it', async () => {
        // The first admin is created right after the policy allowed the change on "setup is
        // open", before the change's transaction: the widest window a race could hit.
        const engine = app.services.engine;
        const authorize = engine.authorize.bind(engine);
        engine.authorize = async (input: AuthzInput) => {
          const decision = await authorize(input);
          if (input.setup?.open && decision.allow) {
            const admin = { login: 'first', email: 'first@example.test', name: 'First', password: 'a-long-enough-password' };
            expect(await createFirstAdmin(app.services, admin, { type: 'system', id: null, name: null, ip: null, userAgent: null })).to.not.equal(null);
          }
          return decision;
        };
        const res = await app.request('POST', change.path, { body: change.body });
        expect(res.status).to.equal(409);
        expect(res.body).to.deep.equal({ message: 'setup is done: the first admin was created meanwhile; sign in as a server admin to change it' });
        expect(await app.count('users')).to.equal(1);
        expect(await written()).to.deep.equal({ settings: 0, complete: 0 });
        expect(await auditEntries(app, { action: change.audit, outcome: 'success' })).to.have.length(0);
        const [failure] = await auditEntries(app, { action: change.audit, outcome: 'failure' });
        expect(failure?.metadata).to.deep.include({ reason: 'the first admin was created meanwhile' });
      });
    });
  }
});
