import { expect } from 'chai';
import { buildOrgDocument, POLICY_TABLES } from '../src/authz/document.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser } from './helpers/factories.ts';

/**
 * The test-mode check (AUTHZ_VERIFY_DOCUMENTS, on for the whole suite): after every commit each
 * loaded policy document must equal a fresh build, so a write that reports the wrong fragment,
 * or none, fails where it happens instead of leaving a stale allow behind.
 */
describe('policy documents are checked against the database after every commit (test mode)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('fails a transaction that changes policy data without reporting it', async () => {
    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status, 'the org document is loaded').to.equal(200);
    // A store with a bug: it writes a member's role and names no fragment.
    const forgetful = app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' });
    });
    let failure: unknown;
    await forgetful.catch((err: unknown) => (failure = err));
    expect(String(failure)).to.match(new RegExp(`policy document drift in org org_main: members\\.${user.id}: loaded .*"role":"Viewer"`));
    // the next tests start from a sound document: a change that names no fragment rebuilds it
    await app.services.transact(async (tx) => tx.policyChanged('org_main'));
  });

  it('checks only after a transaction that wrote a table the documents are read from, and they are read from no other', async () => {
    const read = new Set<string>();
    const noteTables = (query: { sql?: string }) => {
      for (const [, table] of (query.sql ?? '').matchAll(/\b(?:from|join)\s+[`"](\w+)[`"]/gi)) read.add(table!);
    };
    app.db.on('query', noteTables);
    await buildOrgDocument(app.db, 'org_main', { legacyAclEnabled: true }).finally(() => app.db.removeListener('query', noteTables));
    expect([...read].sort()).to.deep.equal([...POLICY_TABLES].sort());

    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status).to.equal(200);
    // drift made outside any transaction: only a transaction that writes a policy table looks
    await app.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' });
    await app.services.transact(async (tx) => tx.db('users').where('id', user.id).update({ name: 'Renamed' }));
    const checked = app.services.transact(async (tx) => tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' }));
    expect(String(await checked.catch((err: unknown) => err))).to.match(/policy document drift in org org_main/);
    await app.services.transact(async (tx) => tx.policyChanged('org_main'));
  });

  it('passes a transaction that reports what it changed', async () => {
    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status).to.equal(200);
    await app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Editor' });
      tx.policyChanged('org_main', { kind: 'member', userId: user.id });
    });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).body).to.have.property('dashboards:create');
  });
});
