/**
 * Second factors of LDAP accounts (against slapd): the directory's password confirms enrolment,
 * MFA_REQUIRED_FOR holds back a directory admin's first session until it enrols, and the next
 * LDAP login asks for the code. Without slapd the test is skipped, except in CI.
 */
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { startTestApp, CookieJar, type TestApp } from './helpers/app.ts';
import { createOrg, expectAuditEntry } from './helpers/factories.ts';
import { defaultMappings, PEOPLE, startDirectory, writeLdapConfig, type Slapd } from './helpers/ldap.ts';
import { requirePeer } from './helpers/peers.ts';

const codeAt = (secret: string, timestamp: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp });

describe('second factors of LDAP accounts', function () {
  this.timeout(60_000);
  let slapd: Slapd;
  let app: TestApp;

  before(async function () {
    requirePeer(this, 'slapd');
    slapd = await startDirectory();
    const ldap = writeLdapConfig([{ port: slapd.port, mappings: defaultMappings('org_ops') }]).env;
    app = await startTestApp({ env: { ...ldap, MFA_REQUIRED_FOR: 'server-admins' } });
    await createOrg(app, { id: 'org_ops', name: 'Ops' });
  });
  after(async () => {
    await app?.close();
    await slapd?.stop();
  });

  const login = (user: string, password: string) => app.request('POST', '/api/login', { body: { user, password } });

  it('enrols with the directory password, and the next LDAP login needs the code', async () => {
    const first = await login('alice', PEOPLE.alice.password);
    expect(first.status).to.equal(200);
    expect(first.body.mfaEnrolmentRequired).to.equal(true);
    const jar = new CookieJar();
    jar.absorb(first.setCookie);
    expect((await app.request('GET', '/api/orgs', { jar })).body.mfaEnrolmentRequired).to.equal(true);

    const wrong = await app.request('POST', '/api/user/mfa/totp', { jar, body: { password: 'not her password' } });
    expect(wrong.status).to.equal(400);
    const started = await app.request('POST', '/api/user/mfa/totp', { jar, body: { password: PEOPLE.alice.password } });
    expect(started.status, JSON.stringify(started.body)).to.equal(201);
    const verified = await app.request('POST', '/api/user/mfa/totp/verify', { jar, body: { code: codeAt(started.body.secret, app.clock.now()) } });
    expect(verified.status).to.equal(200);
    expect((await app.request('GET', '/api/orgs', { jar })).status).to.equal(200);
    app.clock.advance(30_000);

    const second = await login('alice', PEOPLE.alice.password);
    expect(second.status).to.equal(401);
    expect(second.body.mfaRequired).to.equal(true);
    const done = await app.request('POST', '/api/login/mfa', {
      body: { challenge: second.body.challenge, code: codeAt(started.body.secret, app.clock.now()) },
    });
    expect(done.status).to.equal(200);
    const alice = await app.db('users').where('login', 'alice').first();
    await expectAuditEntry(app, { action: 'user.login', actor_id: alice.id }, { metadata: { method: 'ldap', secondFactor: 'totp' } });
  });
});
