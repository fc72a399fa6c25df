import { expect } from 'chai';
import { auditEntries, createUser } from './helpers/factories.ts';
import { CookieJar, createTestDatabase, startTestApp, type TestApp } from './helpers/app.ts';

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
    const jar = new CookieJar((await createUser(app)).cookie);
    app.clock.advance(7 * DAY - 1000);
    expect((await app.request('GET', '/api/user', { jar })).status).to.equal(200);
    app.clock.advance(7 * DAY - 1000);
    expect((await app.request('GET', '/api/user', { jar })).status, 'active use keeps it alive').to.equal(200);
    app.clock.advance(7 * DAY);
    const res = await app.request('GET', '/api/user', { jar });
    expect(res.status).to.equal(401);
    expect(res.body.message).to.equal('session expired or revoked');
  });

  it('expires 30 days after creation however active (SESSION_MAX_LIFETIME_MS)', async () => {
    const jar = new CookieJar((await createUser(app)).cookie);
    for (let day = 0; day < 29; day++) {
      app.clock.advance(DAY);
      expect((await app.request('GET', '/api/user', { jar })).status).to.equal(200);
    }
    app.clock.advance(DAY);
    expect((await app.request('GET', '/api/user', { jar })).status).to.equal(401);
  });

  describe('rotation', () => {
    const MINUTE = 60_000;

    it('replaces the token after 10 minutes of use and keeps the old one valid for 30 seconds', async () => {
      const user = await createUser(app);
      const jar = new CookieJar(user.cookie);
      app.clock.advance(9 * MINUTE);
      const early = await app.request('GET', '/api/user', { jar });
      expect(early.setCookie, 'no rotation before 10 minutes').to.be.empty;

      app.clock.advance(MINUTE);
      const rotated = await app.request('GET', '/api/user', { jar });
      expect(rotated.status).to.equal(200);
      expect(rotated.setCookie[0]).to.match(/^svc_session=.+; path=\/;.*httponly/i);
      expect(jar.cookie).to.not.equal(user.cookie);
      const session = await app.db('sessions').where('user_id', user.id).first();
      expect(session.prev_token_hash).to.be.a('string');

      app.clock.advance(29_000);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status, 'old token within the grace period').to.equal(200);
      app.clock.advance(2_000);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status, 'old token after the grace period').to.equal(401);
      expect((await app.request('GET', '/api/user', { jar })).status, 'new token').to.equal(200);
    });

    it('rotates once when concurrent requests carry the same due token', async () => {
      const user = await createUser(app);
      app.clock.advance(11 * MINUTE);
      const results = await Promise.all(Array.from({ length: 8 }, () => app.request('GET', '/api/user', { cookie: user.cookie })));
      expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
      expect(results.filter((r) => r.setCookie.length > 0)).to.have.length(1);
    });
  });

  it('refuses a cookie whose signature is not ours, also after the genuine one was accepted', async () => {
    const user = await createUser(app);
    expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(200);
    const [token, signature] = user.cookie.slice('svc_session='.length).split('.') as [string, string];
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    expect((await app.request('GET', '/api/user', { cookie: `svc_session=${token}.${flipped}` })).status).to.equal(401);
    expect((await app.request('GET', '/api/user', { cookie: `svc_session=${token}.${signature}x` })).status).to.equal(401);
    expect((await app.request('GET', '/api/user', { cookie: `svc_session=${token}.forged` })).status).to.equal(401);
    expect((await app.request('GET', '/api/user', { cookie: `svc_session=${token}` })).status).to.equal(401);
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
      const [wipe] = await auditEntries(second, 'session.revoked_all');
      expect(wipe!.metadata).to.include({ count: 1 });
      await second.close();
    } finally {
      await database.drop();
    }
  });
});
