/**
 * TOTP as a second factor: enrolment, the login challenge and POST /api/login/mfa, single-use
 * codes and recovery codes, the lockout, removal, the admin reset, MFA_REQUIRED_FOR, and the ways
 * an attacker who knows the password might try to get past the second factor.
 */
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { loadConfig } from '../src/config.ts';
import { SecretBox } from '../src/crypto/secretbox.ts';
import { api, auditEntries, createUser, DENIED, expectAuditEntry, passwordLogin, type TestUser } from './helpers/factories.ts';
import { CookieJar, startTestApp, type TestApp } from './helpers/app.ts';

const INVALID_CHALLENGE = 'the sign-in challenge is not valid or has expired: sign in with your password again';
const WRONG_CODE = 'the code is not correct, or was used already';

function codeAt(secret: string, timestamp: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp });
}

/** A user with TOTP enabled: its secret and recovery codes. */
async function enrolledUser(app: TestApp, overrides: Parameters<typeof createUser>[1] = {}) {
  const user = await createUser(app, overrides);
  const started = await api(app, user).post('/api/user/mfa/totp', { password: user.password });
  expect(started.status, JSON.stringify(started.body)).to.equal(201);
  const secret: string = started.body.secret;
  const verified = await api(app, user).post('/api/user/mfa/totp/verify', { code: codeAt(secret, app.clock.now()) });
  expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
  // the enrolment took this step's code: later logins use a later step
  app.clock.advance(30_000);
  return { ...user, secret, recoveryCodes: verified.body.recoveryCodes as string[] };
}

async function challengeOf(app: TestApp, user: Pick<TestUser, 'login' | 'password'>): Promise<string> {
  const res = await passwordLogin(app, user.login, user.password);
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.body.mfaRequired).to.equal(true);
  return res.body.challenge;
}

const completeMfa = (app: TestApp, body: Record<string, unknown>) => app.request('POST', '/api/login/mfa', { body });

describe('TOTP second factor', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app?.close();
  });

  describe('enrolment', () => {
    it('shows the secret once, keeps it sealed, confirms with a code and hands out ten hashed recovery codes, audited', async () => {
      const user = await createUser(app);
      const started = await api(app, user).post('/api/user/mfa/totp', { password: user.password });
      expect(started.status).to.equal(201);
      expect(started.body.secret).to.match(/^[A-Z2-7]{32}$/);
      expect(started.body.uri)
        .to.match(/^otpauth:\/\/totp\/Gatehouse:/)
        .and.include(`secret=${started.body.secret}`);
      const row = await app.db('user_totp').where('user_id', user.id).first();
      expect(row.secret_sealed).to.match(/^v1:/).and.not.include(started.body.secret);
      expect((await api(app, user).get('/api/user/mfa')).body.totp).to.deep.equal({ enabled: false, pending: true });

      expect((await api(app, user).post('/api/user/mfa/totp/verify', { code: '000000' })).status).to.equal(400);
      const verified = await api(app, user).post('/api/user/mfa/totp/verify', { code: codeAt(started.body.secret, app.clock.now()) });
      expect(verified.status).to.equal(200);
      expect(verified.body.recoveryCodes).to.have.length(10);
      expect(new Set(verified.body.recoveryCodes).size).to.equal(10);
      const stored = await app.db('user_recovery_codes').where('user_id', user.id).select('code_hash');
      expect(stored).to.have.length(10);
      expect(JSON.stringify(stored)).not.to.include(verified.body.recoveryCodes[0]);

      const state = await api(app, user).get('/api/user/mfa');
      expect(state.body).to.deep.include({ totp: { enabled: true, pending: false }, recoveryCodesLeft: 10, enrolmentRequired: false });
      // a second enrolment is refused while one is enabled
      expect((await api(app, user).post('/api/user/mfa/totp', { password: user.password })).status).to.equal(409);
      await expectAuditEntry(app, { action: 'user.mfa_totp_started', target_id: user.id }, { actor_id: user.id });
      const enabled = await expectAuditEntry(app, { action: 'user.mfa_totp_enabled', target_id: user.id }, { actor_id: user.id }, 1);
      expect(JSON.stringify(enabled)).not.to.include(started.body.secret);
      app.clock.advance(30_000);
    });

    it('needs the password to start (a wrong one counts in the lockout), and a pending enrolment to verify', async () => {
      const user = await createUser(app);
      const wrong = await api(app, user).post('/api/user/mfa/totp', { password: 'not it' });
      expect(wrong).to.deep.include({ status: 400 });
      expect(wrong.body.message).to.equal('the password is not correct');
      expect(await app.count('login_attempts', { user_id: user.id })).to.equal(1);
      expect(await app.count('user_totp', { user_id: user.id })).to.equal(0);
      const verify = await api(app, user).post('/api/user/mfa/totp/verify', { code: '123456' });
      expect(verify.status).to.equal(400);
      expect(verify.body.message).to.match(/no TOTP enrolment is pending/);
    });

    it('refuses an account that signs in through an external provider', async () => {
      const user = await createUser(app, { passwordless: true });
      const res = await api(app, user).post('/api/user/mfa/totp', { password: 'anything' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/external identity provider/);
    });

    it('answers 401 without a session and 400 for bad input on every endpoint', async () => {
      const user = await createUser(app);
      const endpoints: Array<[string, string]> = [
        ['GET', '/api/user/mfa'],
        ['POST', '/api/user/mfa/totp'],
        ['POST', '/api/user/mfa/totp/verify'],
        ['DELETE', '/api/user/mfa/totp'],
        ['POST', '/api/user/mfa/recovery-codes'],
        ['POST', '/api/user/mfa/webauthn/registration/options'],
        ['POST', '/api/user/mfa/webauthn/registration'],
        ['DELETE', '/api/user/mfa/webauthn/pk_0000'],
        ['DELETE', `/api/admin/users/${user.id}/mfa`],
      ];
      for (const [method, path] of endpoints) {
        const res = await app.request(method, path, method === 'GET' ? {} : { body: {} });
        expect(res.status, `${method} ${path}`).to.equal(401);
      }
      const bad: Array<[string, string, unknown]> = [
        ['POST', '/api/user/mfa/totp', {}],
        ['POST', '/api/user/mfa/totp', { password: 'x', extra: 1 }],
        ['POST', '/api/user/mfa/totp/verify', { code: 123456 }],
        ['POST', '/api/user/mfa/totp/verify', { code: 'x'.repeat(65) }],
        ['DELETE', '/api/user/mfa/totp', { password: 'x' }],
        ['POST', '/api/user/mfa/recovery-codes', {}],
        ['POST', '/api/user/mfa/webauthn/registration', { credential: { id: 'x' } }],
        ['POST', '/api/login/mfa', { challenge: 'x' }],
        ['POST', '/api/login/mfa', { challenge: 'x', code: '123456', credential: { id: 'a', rawId: 'a', type: 'public-key', response: {} } }],
        ['POST', '/api/login/mfa', { code: '123456' }],
        ['POST', '/api/login/mfa', { challenge: 'x'.repeat(301), code: '123456' }],
        ['POST', '/api/login/mfa/webauthn/options', {}],
      ];
      for (const [method, path, body] of bad) {
        const res = await app.request(method, path, { cookie: user.cookie, body });
        expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
    });
  });

  describe('login', () => {
    it('answers 401 {mfaRequired, challenge} and no session to the password, then signs in with a code, audited', async () => {
      const user = await enrolledUser(app);
      const first = await passwordLogin(app, user.login, user.password);
      expect(first.status).to.equal(401);
      expect(first.body).to.include({ mfaRequired: true });
      expect(first.body.methods).to.deep.equal(['totp', 'recovery_code']);
      expect(first.setCookie.filter((c) => c.startsWith('svc_session='))).to.deep.equal([]);
      expect(await app.count('sessions', { user_id: user.id })).to.equal(1); // the factory's own

      const done = await completeMfa(app, { challenge: first.body.challenge, code: codeAt(user.secret, app.clock.now()) });
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
      expect(done.body).to.deep.equal({ message: 'logged in', redirectUrl: '/' });
      const jar = new CookieJar();
      jar.absorb(done.setCookie);
      expect((await app.request('GET', '/api/user', { jar })).body.id).to.equal(user.id);
      const login = await expectAuditEntry(app, { action: 'user.login', actor_id: user.id }, { outcome: 'success' }, 1);
      expect(login.metadata).to.deep.equal({ method: 'password', secondFactor: 'totp' });
      await expectAuditEntry(app, { action: 'user.login_mfa_challenged', actor_id: user.id }, { metadata: { method: 'password' } }, 1);
      // the login lockout is cleared by the completed login
      expect(await app.count('login_attempts', { user_id: user.id })).to.equal(0);
    });

    it('refuses a wrong code (401, audited) and a code replayed within its window, even with a new challenge', async () => {
      const user = await enrolledUser(app);
      const challenge = await challengeOf(app, user);
      const wrong = await completeMfa(app, { challenge, code: codeAt(user.secret, app.clock.now() + 10 * 60_000) });
      expect(wrong.status).to.equal(401);
      expect(wrong.body.message).to.equal(WRONG_CODE);
      await expectAuditEntry(
        app,
        { action: 'user.login_failed', target_id: user.id },
        { outcome: 'failure', metadata: { method: 'password', reason: 'second factor: wrong code' } },
      );

      const code = codeAt(user.secret, app.clock.now());
      expect((await completeMfa(app, { challenge, code })).status).to.equal(200);
      // the same code on a fresh login, still inside its window (and one step later, by drift)
      const again = await challengeOf(app, user);
      expect((await completeMfa(app, { challenge: again, code })).status).to.equal(401);
      app.clock.advance(30_000);
      expect((await completeMfa(app, { challenge: again, code })).status).to.equal(401);
      // a code of the next step is good
      app.clock.advance(30_000);
      expect((await completeMfa(app, { challenge: again, code: codeAt(user.secret, app.clock.now()) })).status).to.equal(200);
    });

    it('takes each recovery code once', async () => {
      const user = await enrolledUser(app);
      const [code] = user.recoveryCodes;
      const first = await completeMfa(app, { challenge: await challengeOf(app, user), code: code!.toUpperCase() });
      expect(first.status).to.equal(200);
      const login = await expectAuditEntry(app, { action: 'user.login', actor_id: user.id }, { outcome: 'success' }, 1);
      expect(login.metadata).to.deep.equal({ method: 'password', secondFactor: 'recovery_code' });
      const again = await completeMfa(app, { challenge: await challengeOf(app, user), code });
      expect(again.status).to.equal(401);
      expect((await api(app, user).get('/api/user/mfa')).body.recoveryCodesLeft).to.equal(9);
    });

    it('counts wrong codes in the account lockout: the password and four wrong codes, then 429 even for the right code', async () => {
      const user = await enrolledUser(app);
      const challenge = await challengeOf(app, user);
      for (let i = 0; i < 4; i += 1) expect((await completeMfa(app, { challenge, code: '000000' })).status).to.equal(401);
      const locked = await completeMfa(app, { challenge, code: codeAt(user.secret, app.clock.now()) });
      expect(locked.status).to.equal(429);
      expect(locked.headers.get('retry-after')).to.match(/^\d+$/);
      // and the password form is locked for the account too
      expect((await passwordLogin(app, user.login, user.password)).status).to.equal(429);
      app.clock.advance(5 * 60_000 + 1000);
      expect((await completeMfa(app, { challenge: await challengeOf(app, user), code: codeAt(user.secret, app.clock.now()) })).status).to.equal(200);
    });

    it('does not let a right password reset the code guesses: the pending login keeps its lockout slot', async () => {
      const user = await enrolledUser(app);
      for (let i = 0; i < 2; i += 1) {
        const challenge = await challengeOf(app, user);
        expect((await completeMfa(app, { challenge, code: '000000' })).status).to.equal(401);
      }
      // two passwords and two wrong codes: one more attempt, then the lockout
      const challenge = await challengeOf(app, user);
      expect((await completeMfa(app, { challenge, code: '000000' })).status).to.equal(429);
      app.clock.advance(5 * 60_000 + 1000);
    });
  });

  describe('challenge', () => {
    it('refuses a forged, altered, expired, spent or unknown challenge', async () => {
      const user = await enrolledUser(app);
      const challenge = await challengeOf(app, user);
      const [id, userId, expiry, signature] = challenge.split('.') as [string, string, string, string];
      const code = codeAt(user.secret, app.clock.now());
      const forgeries = [
        `${id}.${userId}.${expiry}.${'A'.repeat(signature.length)}`,
        `${id}.${userId}.${Number(expiry) + 3_600_000}.${signature}`,
        `mfa_0000000000000000.${userId}.${expiry}.${signature}`,
        `${id}.${userId}.${expiry}`,
        'not-a-challenge',
      ];
      for (const forged of forgeries) {
        const res = await completeMfa(app, { challenge: forged, code });
        expect(res.status, forged).to.equal(401);
        expect(res.body.message).to.equal(INVALID_CHALLENGE);
      }
      // none of those cost a lockout slot beyond the password's
      expect((await app.db('login_attempts').where('user_id', user.id).first()).failures).to.equal(1);

      expect((await completeMfa(app, { challenge, code })).status).to.equal(200);
      // spent: not even a fresh code opens a second session with it
      app.clock.advance(30_000);
      const reused = await completeMfa(app, { challenge, code: codeAt(user.secret, app.clock.now()) });
      expect(reused.status).to.equal(401);
      expect(reused.body.message).to.equal(INVALID_CHALLENGE);

      const late = await challengeOf(app, user);
      app.clock.advance(5 * 60_000 + 1);
      expect((await completeMfa(app, { challenge: late, code: codeAt(user.secret, app.clock.now()) })).body.message).to.equal(INVALID_CHALLENGE);
    });

    it("refuses another user's challenge with one's own code, and a challenge renamed to another user", async () => {
      const victim = await enrolledUser(app);
      const attacker = await enrolledUser(app);
      const victimChallenge = await challengeOf(app, victim);
      const attackerChallenge = await challengeOf(app, attacker);
      // the attacker's own code does not open the victim's login
      const crossed = await completeMfa(app, { challenge: victimChallenge, code: codeAt(attacker.secret, app.clock.now()) });
      expect(crossed.status).to.equal(401);
      // nor does the attacker's challenge relabelled with the victim's id
      const [id, , expiry, signature] = attackerChallenge.split('.');
      const relabelled = await completeMfa(app, { challenge: `${id}.${victim.id}.${expiry}.${signature}`, code: codeAt(victim.secret, app.clock.now()) });
      expect(relabelled.status).to.equal(401);
      expect(relabelled.body.message).to.equal(INVALID_CHALLENGE);
      // an attacker's recovery code is not the victim's
      expect((await completeMfa(app, { challenge: victimChallenge, code: attacker.recoveryCodes[0] })).status).to.equal(401);
      expect(await auditEntries(app, { action: 'user.login', actor_id: victim.id })).to.have.length(0);
    });

    it('is void after five wrong second factors, from any address', async () => {
      const user = await enrolledUser(app);
      const challenge = await challengeOf(app, user);
      // the attempts come from five addresses, so no single lockout counter fills
      await app.db('mfa_login_challenges').update({ failures: 5 });
      const res = await completeMfa(app, { challenge, code: codeAt(user.secret, app.clock.now()) });
      expect(res.status).to.equal(401);
      expect(res.body.message).to.equal(INVALID_CHALLENGE);
    });

    it('is no session: the challenge as a cookie or token opens nothing, and the password alone never does', async () => {
      const user = await enrolledUser(app);
      const challenge = await challengeOf(app, user);
      expect((await app.request('GET', '/api/user', { token: challenge })).status).to.equal(401);
      expect((await app.request('GET', '/api/user', { cookie: `svc_session=${challenge}` })).status).to.equal(401);
      // the other doors of a password login: the form again, by email, and the LDAP/local starts only redirect
      const byEmail = await passwordLogin(app, user.email.toUpperCase(), user.password);
      expect(byEmail.status).to.equal(401);
      expect(byEmail.body.mfaRequired).to.equal(true);
      expect((await app.request('GET', '/api/login/local')).status).to.equal(302);
      // the passkey step of an account without a passkey issues nothing
      expect((await app.request('POST', '/api/login/mfa/webauthn/options', { body: { challenge } })).status).to.equal(404);
      // a made-up passkey assertion is not a second factor
      const fake = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' } };
      expect((await completeMfa(app, { challenge, credential: fake })).status).to.be.oneOf([401, 404]);
      expect(await auditEntries(app, { action: 'user.login', actor_id: user.id })).to.have.length(0);
    });
  });

  it('answers a TOTP secret sealed under another SECRET_KEY as a wrong code, and a recovery code still signs in', async () => {
    const user = await enrolledUser(app);
    await app
      .db('user_totp')
      .where('user_id', user.id)
      .update({ secret_sealed: new SecretBox('another-secret-key-0123456789abcdef').seal(user.secret) });
    const challenge = await challengeOf(app, user);
    const res = await completeMfa(app, { challenge, code: codeAt(user.secret, app.clock.now()) });
    expect(res.status).to.equal(401);
    expect(res.body.message).to.equal(WRONG_CODE);
    expect((await completeMfa(app, { challenge, code: user.recoveryCodes[0] })).status).to.equal(200);
  });

  describe('removal and reset', () => {
    it('removes TOTP with the password and a code; the next login needs no code', async () => {
      const user = await enrolledUser(app);
      const noCode = await app.request('DELETE', '/api/user/mfa/totp', { cookie: user.cookie, body: { password: user.password, code: '000000' } });
      expect(noCode.status).to.equal(400);
      const noPassword = await app.request('DELETE', '/api/user/mfa/totp', {
        cookie: user.cookie,
        body: { password: 'wrong', code: codeAt(user.secret, app.clock.now()) },
      });
      expect(noPassword.status).to.equal(400);
      const removed = await app.request('DELETE', '/api/user/mfa/totp', {
        cookie: user.cookie,
        body: { password: user.password, code: codeAt(user.secret, app.clock.now()) },
      });
      expect(removed.status).to.equal(200);
      expect(await app.count('user_recovery_codes', { user_id: user.id })).to.equal(0);
      await expectAuditEntry(app, { action: 'user.mfa_totp_removed', target_id: user.id }, { actor_id: user.id }, 1);
      expect((await passwordLogin(app, user.login, user.password)).status).to.equal(200);
      const again = await app.request('DELETE', '/api/user/mfa/totp', { cookie: user.cookie, body: { password: user.password, code: '123456' } });
      expect(again.status).to.equal(404);
    });

    it('replaces the recovery codes with the password', async () => {
      const user = await enrolledUser(app);
      const res = await api(app, user).post('/api/user/mfa/recovery-codes', { password: user.password });
      expect(res.status).to.equal(200);
      expect(res.body.recoveryCodes).to.have.length(10);
      expect((await completeMfa(app, { challenge: await challengeOf(app, user), code: user.recoveryCodes[1] })).status).to.equal(401);
      expect((await completeMfa(app, { challenge: await challengeOf(app, user), code: res.body.recoveryCodes[1] })).status).to.equal(200);
      const none = await createUser(app);
      expect((await api(app, none).post('/api/user/mfa/recovery-codes', { password: none.password })).status).to.equal(400);
    });

    it('lets a server admin reset a user, audited; anyone else is refused', async () => {
      const user = await enrolledUser(app);
      const other = await createUser(app, { role: 'Admin' });
      const refused = await api(app, other).delete(`/api/admin/users/${user.id}/mfa`);
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(DENIED);
      expect((await api(app, user).delete(`/api/admin/users/${user.id}/mfa`)).status).to.equal(403);
      const admin = await createUser(app, { svcAdmin: true });
      expect((await api(app, admin).delete('/api/admin/users/usr_missing/mfa')).status).to.equal(404);
      const reset = await api(app, admin).delete(`/api/admin/users/${user.id}/mfa`);
      expect(reset.status).to.equal(200);
      expect(reset.body).to.deep.equal({ message: 'second factors removed', totp: true, passkeys: 0 });
      await expectAuditEntry(app, { action: 'user.mfa_reset', target_id: user.id }, { actor_id: admin.id, metadata: { totp: true, passkeys: 0 } }, 1);
      expect(await app.count('user_recovery_codes', { user_id: user.id })).to.equal(0);
      expect((await passwordLogin(app, user.login, user.password)).status).to.equal(200);
    });
  });
});

describe('MFA_REQUIRED_FOR', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { MFA_REQUIRED_FOR: 'server-admins' } });
  });
  after(async () => {
    await app?.close();
  });

  it('is server-admins, all or empty', () => {
    const base = { NODE_ENV: 'test', SECRET_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
    expect(loadConfig({ ...base, MFA_REQUIRED_FOR: 'All' }).mfaRequiredFor).to.equal('all');
    expect(loadConfig(base).mfaRequiredFor).to.equal(null);
    expect(() => loadConfig({ ...base, MFA_REQUIRED_FOR: 'admins' })).to.throw(/MFA_REQUIRED_FOR must be server-admins, all or empty/);
  });

  it('server-admins: an admin without a factor gets a session that can only enrol, until it does', async () => {
    const admin = await createUser(app, { svcAdmin: true });
    const login = await passwordLogin(app, admin.login, admin.password);
    expect(login.status).to.equal(200);
    expect(login.body).to.deep.equal({ message: 'logged in', redirectUrl: '/', mfaEnrolmentRequired: true });
    const jar = new CookieJar();
    jar.absorb(login.setCookie);
    const session = (path: string, method = 'GET', body?: unknown) => app.request(method, path, { jar, body });

    expect((await session('/api/user')).status).to.equal(200);
    expect((await session('/api/user/mfa')).body.enrolmentRequired).to.equal(true);
    for (const [method, path] of [
      ['GET', '/api/orgs'],
      ['GET', '/api/admin/users'],
      ['POST', '/api/user/access-tokens'],
      ['PUT', '/api/user/password'],
      ['GET', '/api/setup/config'],
    ] as const) {
      const res = await session(path, method, method === 'GET' ? undefined : {});
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body).to.deep.equal({ message: res.body.message, mfaEnrolmentRequired: true });
      expect(res.body.message).to.match(/enrol a second factor/);
    }
    // the factory's session predates the requirement: it is not held back
    expect((await api(app, admin).get('/api/orgs')).status).to.equal(200);

    const started = await session('/api/user/mfa/totp', 'POST', { password: admin.password });
    expect(started.status).to.equal(201);
    const verified = await session('/api/user/mfa/totp/verify', 'POST', { code: codeAt(started.body.secret, app.clock.now()) });
    expect(verified.status).to.equal(200);
    expect((await session('/api/orgs')).status).to.equal(200);
    expect((await session('/api/user/mfa')).body.enrolmentRequired).to.equal(false);

    // and from now on the admin's password alone opens nothing
    app.clock.advance(30_000);
    expect((await passwordLogin(app, admin.login, admin.password)).body.mfaRequired).to.equal(true);
    expect((await session('/api/logout', 'POST')).status).to.equal(200);
  });

  it('server-admins: other users sign in as before', async () => {
    const user = await createUser(app);
    const login = await passwordLogin(app, user.login, user.password);
    expect(login.body).to.deep.equal({ message: 'logged in', redirectUrl: '/' });
    const jar = new CookieJar();
    jar.absorb(login.setCookie);
    expect((await app.request('GET', '/api/user/preferences', { jar })).status).to.equal(200);
  });

  it('a held-back session may log out', async () => {
    const admin = await createUser(app, { svcAdmin: true });
    const jar = new CookieJar();
    jar.absorb((await passwordLogin(app, admin.login, admin.password)).setCookie);
    expect((await app.request('POST', '/api/logout', { jar })).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { jar })).status).to.equal(401);
  });
});
