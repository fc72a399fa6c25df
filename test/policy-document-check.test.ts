import { expect } from 'chai';
import pino from 'pino';
import { buildOrgDocument, POLICY_TABLES } from '../src/authz/document.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser } from './helpers/factories.ts';

/**
 * A transaction that writes policy data and names no change is caught in every mode: test mode
 * (AUTHZ_VERIFY_DOCUMENTS, on for the whole suite) fails it, production logs it and rebuilds every
 * document. Test mode also checks each loaded document against a fresh build after every commit
 * that changed policy data, so a write that names the wrong fragment fails where it happens
 * instead of leaving a stale allow behind.
 */
describe('policy documents are checked against the database after every commit (test mode)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('fails a transaction that changes policy data without naming a change, and keeps nothing of it', async () => {
    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status, 'the org document is loaded').to.equal(200);
    // A store with a bug: it writes a member's role and names no fragment.
    const forgetful = app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' });
    });
    expect(String(await forgetful.catch((err: unknown) => err))).to.equal('Error: a transaction wrote org_members without naming a policy change');
    expect(await app.db('org_members').where({ org_id: 'org_main', user_id: user.id }).first('role')).to.deep.equal({ role: 'Viewer' });
    // an update of a column no document reads needs no change, nor does a delete that matched no row
    await app.services.transact(async (tx) =>
      tx
        .db('teams')
        .where('org_id', 'org_main')
        .update({ name: tx.db.raw('??', ['name']) }),
    );
    await app.services.transact(async (tx) => tx.db('legacy_acl').where('org_id', 'no-such-org').delete());
  });

  it('fails a transaction that names the wrong fragment', async () => {
    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status).to.equal(200);
    const mistaken = app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' });
      tx.policyChanged('org_main', { kind: 'team', teamId: 'no-such-team' });
    });
    expect(String(await mistaken.catch((err: unknown) => err))).to.match(
      new RegExp(`policy document drift in org org_main: members\\.${user.id}: loaded .*"role":"Viewer"`),
    );
    // the next tests start from a sound document: a change that names no fragment rebuilds it
    await app.services.transact(async (tx) => tx.policyChanged('org_main'));
  });

  it('checks only after a transaction that changed policy data, and documents are read from the policy tables only', async () => {
    const read = new Set<string>();
    const noteTables = (query: { sql?: string }) => {
      for (const [, table] of (query.sql ?? '').matchAll(/\b(?:from|join)\s+[`"](\w+)[`"]/gi)) read.add(table!);
    };
    app.db.on('query', noteTables);
    await buildOrgDocument(app.db, 'org_main', { legacyAclEnabled: true }).finally(() => app.db.removeListener('query', noteTables));
    expect([...read].sort()).to.deep.equal([...POLICY_TABLES].sort());

    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status).to.equal(200);
    // drift made outside any transaction: only a transaction that changed policy data looks
    await app.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' });
    await app.services.transact(async (tx) => tx.db('users').where('id', user.id).update({ name: 'Renamed' }));
    const checked = app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Admin' });
      tx.policyChanged('org_main', { kind: 'legacy_acl' });
    });
    expect(String(await checked.catch((err: unknown) => err))).to.match(/policy document drift in org org_main/);
    await app.services.transact(async (tx) => tx.policyChanged('org_main'));
  });

  it('passes a transaction that names what it changed', async () => {
    const user = await createUser(app, { role: 'Viewer' });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).status).to.equal(200);
    await app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Editor' });
      tx.policyChanged('org_main', { kind: 'member', userId: user.id });
    });
    expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).body).to.have.property('dashboards:create');
  });
});

describe('a write of policy data that names no change, in production', () => {
  let app: TestApp;
  const logged: Array<Record<string, unknown>> = [];
  before(async () => {
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    app = await startTestApp({ env: { AUTHZ_VERIFY_DOCUMENTS: 'false' }, logger });
  });
  after(async () => {
    await app.close();
  });

  it('is committed, logged as an error, and every loaded document is rebuilt before it answers again', async () => {
    const user = await createUser(app, { role: 'Viewer' });
    const create = () => app.request('POST', '/api/folders', { cookie: user.cookie, body: { title: `by ${user.id}` } });
    expect((await create()).status, 'a Viewer').to.equal(403);
    const rebuilds = app.services.engine.stats().rebuilds;
    await app.services.transact(async (tx) => {
      await tx.db('org_members').where({ org_id: 'org_main', user_id: user.id }).update({ role: 'Editor' });
    });
    expect(logged.map((line) => line.msg)).to.include('a transaction wrote org_members without naming a policy change; every policy document is rebuilt');
    expect((await create()).status, 'an Editor, at once').to.equal(201);
    expect(app.services.engine.stats().rebuilds).to.be.greaterThan(rebuilds);
  });
});
