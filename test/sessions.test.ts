import { expect } from 'chai';
import { createUser } from './helpers/factories.ts';
import { createTestDatabase, startTestApp, type TestApp } from './helpers/app.ts';

const DAY = 86_400_000;

describe('session lifetime', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('expires after 7 days without a request (SESSION_IDLE_TIMEOUT_MS)', async () => {
    const user = await createUser(app);
    app.clock.advance(7 * DAY - 1000);
    expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(200);
    app.clock.advance(7 * DAY - 1000);
    expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status, 'active use keeps it alive').to.equal(200);
    app.clock.advance(7 * DAY);
    const res = await app.request('GET', '/api/user', { cookie: user.cookie });
    expect(res.status).to.equal(401);
    expect(res.body.message).to.equal('session expired or revoked');
  });

  it('expires 30 days after creation however active (SESSION_MAX_LIFETIME_MS)', async () => {
    const user = await createUser(app);
    for (let day = 0; day < 29; day++) {
      app.clock.advance(DAY);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(200);
    }
    app.clock.advance(DAY);
    expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
  });

  it('honours shorter limits from the environment', async () => {
    const short = await startTestApp({ env: { SESSION_IDLE_TIMEOUT_MS: '60000' } });
    try {
      const user = await createUser(short);
      short.clock.advance(61_000);
      expect((await short.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
    } finally {
      await short.close();
    }
  });

  it('is wiped at boot with INVALIDATE_ALL_SESSIONS_ON_BOOT=true, and the wipe is audited', async () => {
    const database = await createTestDatabase();
    try {
      const first = await startTestApp({ database });
      const user = await createUser(first);
      await first.close();
      const second = await startTestApp({ database, env: { INVALIDATE_ALL_SESSIONS_ON_BOOT: 'true' } });
      expect(await second.count('sessions')).to.equal(0);
      expect((await second.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      const wipe = await second.db('audit_log').where('action', 'session.revoked_all').first();
      expect(JSON.parse(wipe.metadata)).to.include({ count: 1 });
      await second.close();
    } finally {
      await database.drop();
    }
  });
});
