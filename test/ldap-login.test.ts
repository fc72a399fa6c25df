import { expect } from 'chai';
import { startTestApp, CookieJar, type TestApp } from './helpers/app.ts';
import { api, auditEntries, createOrg, createUser, liveSessions } from './helpers/factories.ts';
import { defaultMappings, GROUPS, PEOPLE, startDirectory, userDn, writeLdapConfig, type Slapd } from './helpers/ldap.ts';
import { requirePeer } from './helpers/peers.ts';

const INVALID = 'invalid username or password';
const OPS = 'org_ops';

describe('LDAP login (POST /api/login against slapd)', () => {
  let slapd: Slapd;
  let app: TestApp;

  before(async function () {
    requirePeer(this, 'slapd');
    slapd = await startDirectory();
  });
  after(async () => {
    await slapd?.stop();
  });
  beforeEach(async () => {
    app = await startTestApp({ env: writeLdapConfig([{ port: slapd.port, mappings: defaultMappings(OPS) }]).env });
    await createOrg(app, { id: OPS, name: 'Ops' });
  });
  afterEach(async () => {
    await app.close();
  });

  const login = (user: string, password: string) => app.request('POST', '/api/login', { body: { user, password } });
  const userRow = (login: string) => app.db('users').where('login', login).first();
  const memberships = async (userId: string) =>
    Object.fromEntries(
      (await app.db('org_members').where('user_id', userId).select('org_id', 'role')).map((row: { org_id: string; role: string }) => [row.org_id, row.role]),
    );
  const setMembers = (group: string, uids: string[]) =>
    slapd.modify([`dn: ${group}\nchangetype: modify\nreplace: member\n${uids.map((uid) => `member: ${userDn(uid)}`).join('\n')}`]);

  it('binds, creates the user with its link, maps groups to org roles and the server-admin flag, and issues a session', async () => {
    const res = await login('alice', PEOPLE.alice.password);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ message: 'logged in', redirectUrl: '/' });
    const jar = new CookieJar();
    jar.absorb(res.setCookie);
    const me = await app.request('GET', '/api/user', { jar });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ login: 'alice', email: 'alice@example.test', name: 'Alice Admin' });

    const alice = await userRow('alice');
    expect(alice.password_hash).to.equal(null);
    expect(!!alice.is_svc_admin).to.equal(true);
    expect(alice.default_org_id).to.equal('org_main');
    expect(await memberships(alice.id)).to.deep.equal({ org_main: 'Admin' });
    const links = await app.db('user_auth_links').where('user_id', alice.id).select('auth_module', 'auth_id', 'tokens_sealed');
    expect(links).to.deep.equal([{ auth_module: 'ldap', auth_id: userDn('alice'), tokens_sealed: null }]);

    expect(await auditEntries(app, { action: 'user.created', target_id: alice.id })).to.have.length(1);
    // once the directory vouched for her, the sync is alice's own doing
    expect((await auditEntries(app, { action: 'org.member_added', target_id: alice.id })).map((entry) => entry.actor_id)).to.deep.equal([alice.id]);
    const [entry] = await auditEntries(app, { action: 'user.login', actor_id: alice.id });
    expect(entry!.metadata).to.deep.equal({ method: 'ldap' });
    const permissions = await api(app, { cookie: jar.cookie }, 'org_main').get('/api/user/permissions');
    expect(permissions.status).to.equal(200);
    expect(permissions.body['org.users:write']).to.be.an('array');
  });

  it('maps the highest role per org and gives a user in one group only that role', async () => {
    expect((await login('bob', PEOPLE.bob.password)).status).to.equal(200);
    const bob = await userRow('bob');
    expect(await memberships(bob.id)).to.deep.equal({ org_main: 'Viewer' });
    expect(!!bob.is_svc_admin).to.equal(false);
    expect((await login('dave', PEOPLE.dave.password)).status).to.equal(200);
    expect(await memberships((await userRow('dave')).id)).to.deep.equal({ [OPS]: 'Editor' });
  });

  it('re-applies the mappings at each login: a group change moves memberships and ends the older sessions', async () => {
    const first = await login('bob', PEOPLE.bob.password);
    expect(first.status).to.equal(200);
    const bob = await userRow('bob');
    setMembers(GROUPS.editors, ['dave', 'bob']);
    setMembers(GROUPS.staff, ['alice']);
    try {
      const second = await login('bob', PEOPLE.bob.password);
      expect(second.status).to.equal(200);
      expect(await memberships(bob.id)).to.deep.equal({ [OPS]: 'Editor' });
      expect((await app.db('users').where('id', bob.id).first()).default_org_id).to.equal(OPS);
      // the session of the first login was revoked by the change; the new one lives
      expect(await liveSessions(app, bob.id)).to.equal(1);
      expect(first.cookies.svc_session).to.not.equal(second.cookies.svc_session);
      expect((await app.request('GET', '/api/user', { cookie: `svc_session=${first.cookies.svc_session}` })).status).to.equal(401);
      const removed = await auditEntries(app, { action: 'org.member_removed', target_id: bob.id });
      expect(removed.map((entry) => entry.metadata)).to.deep.equal([{ org: 'Main Org.', role: 'Viewer', via: 'ldap' }]);
    } finally {
      setMembers(GROUPS.editors, ['dave']);
      setMembers(GROUPS.staff, ['alice', 'bob']);
    }
  });

  it('refuses a user in no mapped group, a wrong password, an unknown login and an empty password with the same 401', async () => {
    const answers = [
      await login('carol', PEOPLE.carol.password),
      await login('alice', 'not her password'),
      await login('nobody', 'whatever it is'),
      await login('alice', ''),
    ];
    for (const answer of answers) {
      expect(answer.status).to.equal(401);
      expect(answer.body).to.deep.equal({ message: INVALID });
      expect(answer.setCookie.filter((c) => c.startsWith('svc_session=') && !c.startsWith('svc_session=;'))).to.deep.equal([]);
    }
    expect(await userRow('carol')).to.equal(undefined);
    const reasons = (await auditEntries(app, 'user.login_failed')).map((entry) => entry.metadata);
    expect(reasons).to.deep.equal([
      { method: 'ldap', reason: 'ldap: in no mapped group' },
      { method: 'ldap', reason: 'ldap: wrong password' },
      { method: 'ldap', reason: 'ldap: unknown user' },
      { method: 'ldap', reason: 'ldap: empty password' },
    ]);
  });

  it('escapes the login in the search filter: wildcards, filter injection and NUL find nobody', async () => {
    for (const attempt of ['*', 'al*', 'admin)(|(uid=*)', 'alice)(uid=*', '*)(uid=alice', 'alice\u0000', '\\2a']) {
      const res = await login(attempt, PEOPLE.alice.password);
      expect(res.status, JSON.stringify(attempt)).to.equal(401);
      expect(res.body).to.deep.equal({ message: INVALID });
    }
    expect(await app.count('users')).to.equal(0);
  });

  it('checks an account with a local password locally only, and never hands it to the directory', async () => {
    const local = await createUser(app, { login: 'alice', email: 'someone-else@example.test', password: 'the local password of alice' });
    const byDirectory = await login('alice', PEOPLE.alice.password);
    expect(byDirectory.status).to.equal(401);
    const byLocal = await login('alice', 'the local password of alice');
    expect(byLocal.status).to.equal(200);
    expect((await auditEntries(app, { action: 'user.login', actor_id: local.id }))[0]!.metadata).to.deep.equal({ method: 'password' });
    expect(await app.count('user_auth_links')).to.equal(0);
  });

  it('locks out after 5 failures like a local login, even for the right password', async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) expect((await login('bob', 'wrong guess')).status).to.equal(401);
    const locked = await login('bob', PEOPLE.bob.password);
    expect(locked.status).to.equal(429);
    expect(locked.headers.get('retry-after')).to.match(/^\d+$/);
    app.clock.advance(5 * 60_000 + 1);
    expect((await login('bob', PEOPLE.bob.password)).status).to.equal(200);
  });

  it('refuses a local password change to an LDAP user (400) and lists ldap as an enabled provider', async () => {
    const res = await login('bob', PEOPLE.bob.password);
    const cookie = `svc_session=${res.cookies.svc_session}`;
    const change = await app.request('PUT', '/api/user/password', {
      cookie,
      body: { oldPassword: PEOPLE.bob.password, newPassword: 'a brand new long password 1' },
    });
    expect(change.status).to.equal(400);
    expect(change.body.message).to.equal('this account signs in through LDAP: change your password in the directory');
    const providers = await app.request('GET', '/api/login/providers');
    expect(providers.body.find((provider: { id: string }) => provider.id === 'ldap')).to.deep.equal({
      id: 'ldap',
      name: 'LDAP',
      enabled: true,
      url: '/api/login/ldap',
    });
  });

  it('signs in by email when the search filter matches the mail attribute, as the same user each time', async () => {
    const byMail = await startTestApp({
      env: writeLdapConfig([{ port: slapd.port, mappings: defaultMappings(OPS), searchFilter: '(|(uid=%s)(mail=%s))' }]).env,
    });
    try {
      for (const name of ['bob@example.test', 'BOB@example.test', 'bob']) {
        expect((await byMail.request('POST', '/api/login', { body: { user: name, password: PEOPLE.bob.password } })).status, name).to.equal(200);
      }
      expect(await byMail.count('users', { login: 'bob' })).to.equal(1);
      expect(await byMail.count('user_auth_links', { auth_module: 'ldap' })).to.equal(1);
    } finally {
      await byMail.close();
    }
  });

  it('lets a user in no mapped group in when allow_unmapped_users = true, with no membership from the directory', async () => {
    const open = await startTestApp({
      env: writeLdapConfig([{ port: slapd.port, mappings: defaultMappings(OPS), extra: ['allow_unmapped_users = true'] }]).env,
    });
    try {
      expect((await open.request('POST', '/api/login', { body: { user: 'carol', password: PEOPLE.carol.password } })).status).to.equal(200);
      const carol = await open.db('users').where('login', 'carol').first();
      expect(await open.count('org_members', { user_id: carol.id })).to.equal(0);
      expect(await open.count('user_auth_links', { user_id: carol.id, auth_module: 'ldap' })).to.equal(1);
    } finally {
      await open.close();
    }
  });

  it('never takes the last server admin flag or the last Admin of an org away; takes them once another holds them', async () => {
    expect((await login('alice', PEOPLE.alice.password)).status).to.equal(200);
    const alice = await userRow('alice');
    setMembers(GROUPS.admins, ['dave']);
    try {
      expect((await login('alice', PEOPLE.alice.password)).status).to.equal(200);
      expect(!!(await userRow('alice')).is_svc_admin).to.equal(true);
      expect(await memberships(alice.id)).to.deep.equal({ org_main: 'Admin' });
      const kept = await auditEntries(app, { target_id: alice.id, outcome: 'failure' });
      expect(kept.map((entry) => [entry.action, entry.metadata?.reason])).to.deep.equal([
        ['org.member_role_changed', 'last admin'],
        ['user.role_changed', 'last server admin'],
      ]);

      await createUser(app, { login: 'root', svcAdmin: true, role: 'Admin' });
      expect((await login('alice', PEOPLE.alice.password)).status).to.equal(200);
      expect(!!(await userRow('alice')).is_svc_admin).to.equal(false);
      expect(await memberships(alice.id)).to.deep.equal({ org_main: 'Viewer' });
    } finally {
      setMembers(GROUPS.admins, ['alice']);
    }
  });
});
