import { expect } from 'chai';
import { recordAudit, SYSTEM_ACTOR } from '../src/audit/writer.ts';
import { pruneAuditLog } from '../src/audit/retention.ts';
import { createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('audit log', () => {
  let app: TestApp;
  let admin: TestUser;
  const T0 = Date.parse('2026-11-01T00:00:00Z');

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    // An empty log (as retention leaves an old one) so the listings hold exactly the entries written here.
    await app.db('audit_log').delete();
    const actor = { type: 'user' as const, id: 'usr_a', name: 'alice', ip: '10.0.0.1', userAgent: 'test' };
    for (let i = 0; i < 5; i++) {
      await recordAudit(app.db, actor, { action: 'user.login', orgId: 'org_main', target: { type: 'session', id: `ses_${i}` } }, T0 + i * 1000);
    }
    await recordAudit(
      app.db,
      { ...actor, id: 'usr_b', name: 'bob' },
      { action: 'user.login_failed', outcome: 'failure', metadata: { reason: 'bad password' } },
      T0 + 10_000,
    );
    await recordAudit(app.db, SYSTEM_ACTOR, { action: 'role.seeded' }, T0 + 20_000);
  });
  after(async () => {
    await app.close();
  });

  it('is 401 without a session and 403 for an org admin', async () => {
    expect((await app.request('GET', '/api/admin/audit-log')).status).to.equal(401);
    const orgAdmin = await createUser(app, { role: 'Admin' });
    expect((await app.request('GET', '/api/admin/audit-log', { cookie: orgAdmin.cookie })).status).to.equal(403);
  });

  it('lists entries newest first in the spec shape', async () => {
    const res = await app.request('GET', '/api/admin/audit-log', { cookie: admin.cookie });
    expect(res.status).to.equal(200);
    expect(res.body.totalCount).to.equal(7);
    const [newest] = res.body.items;
    expect(newest).to.have.all.keys(
      'id',
      'timestamp',
      'action',
      'actorType',
      'actorId',
      'actorName',
      'orgId',
      'targetType',
      'targetId',
      'targetName',
      'outcome',
      'metadata',
      'ip',
      'userAgent',
    );
    expect(newest).to.include({
      action: 'role.seeded',
      actorType: 'system',
      actorId: null,
      outcome: 'success',
      timestamp: new Date(T0 + 20_000).toISOString(),
    });
  });

  it('filters by action, actorId, targetType, targetId, outcome, from and to', async () => {
    const get = async (query: string) => (await app.request('GET', `/api/admin/audit-log?${query}`, { cookie: admin.cookie })).body;
    expect((await get('action=user.login')).totalCount).to.equal(5);
    expect((await get('actorId=usr_b')).items.map((e: { action: string }) => e.action)).to.deep.equal(['user.login_failed']);
    expect((await get('targetType=session')).totalCount).to.equal(5);
    expect((await get('targetType=session&targetId=ses_3')).items.map((e: { targetId: string }) => e.targetId)).to.deep.equal(['ses_3']);
    expect((await get('targetId=ses_9')).totalCount).to.equal(0);
    expect((await get('outcome=failure')).items[0].metadata).to.deep.equal({ reason: 'bad password' });
    expect((await get(`from=${new Date(T0 + 2000).toISOString()}&to=${new Date(T0 + 10_000).toISOString()}`)).totalCount).to.equal(4);
    expect((await get(`from=${T0 + 4000}`)).totalCount).to.equal(3);
  });

  it('pages with perpage and page', async () => {
    const page2 = await app.request('GET', '/api/admin/audit-log?perpage=3&page=2', { cookie: admin.cookie });
    expect(page2.body).to.include({ totalCount: 7, page: 2, perPage: 3 });
    expect(page2.body.items).to.have.length(3);
    const page3 = await app.request('GET', '/api/admin/audit-log?perpage=3&page=3', { cookie: admin.cookie });
    expect(page3.body.items).to.have.length(1);
  });

  it('rejects bad filters with 400', async () => {
    for (const query of ['outcome=maybe', 'from=yesterday', 'page=0', 'perpage=100000', 'colour=red']) {
      const res = await app.request('GET', `/api/admin/audit-log?${query}`, { cookie: admin.cookie });
      expect(res.status, query).to.equal(400);
    }
  });

  it('prunes entries older than AUDIT_RETENTION_DAYS', async () => {
    app.clock.current = T0 + 90 * 86_400_000 + 15_000;
    const pruned = await pruneAuditLog(app.services);
    expect(pruned).to.equal(6);
    expect(await app.count('audit_log', { action: 'role.seeded' })).to.equal(1);
  });
});

describe('audit entry ids', () => {
  it('sort in the order the entries were written, also within one millisecond', async () => {
    const app = await startTestApp();
    try {
      // Only the entries written here, so their ids alone decide the order.
      await app.db('audit_log').delete();
      for (let i = 0; i < 20; i++) await recordAudit(app.db, SYSTEM_ACTOR, { action: 'test.ordered', metadata: { i } }, 1_000);
      const rows = await app.db('audit_log').orderBy('id').select('metadata');
      expect(rows.map((row: { metadata: string }) => JSON.parse(row.metadata).i)).to.deep.equal([...Array(20).keys()]);
    } finally {
      await app.close();
    }
  });
});
