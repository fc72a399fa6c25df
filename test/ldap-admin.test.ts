import fs from 'node:fs';
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, createOrg, createUser, DENIED, liveSessions, type TestUser } from './helpers/factories.ts';
import { defaultMappings, GROUPS, ldapToml, PEOPLE, startDirectory, userDn, writeLdapConfig, type Slapd } from './helpers/ldap.ts';
import { freePort, SERVICE_PASSWORD } from './helpers/slapd.ts';
import { requirePeer } from './helpers/peers.ts';

const OPS = 'org_ops';

describe('LDAP administration (/api/admin/ldap…)', () => {
  let slapd: Slapd;
  let app: TestApp;
  let config: { file: string; env: Record<string, string> };
  let root: TestUser;
  let orgAdmin: TestUser;

  before(async function () {
    requirePeer(this, 'slapd');
    slapd = await startDirectory();
  });
  after(async () => {
    await slapd?.stop();
  });
  beforeEach(async () => {
    config = writeLdapConfig([{ port: slapd.port, mappings: defaultMappings(OPS) }]);
    app = await startTestApp({ env: config.env });
    await createOrg(app, { id: OPS, name: 'Ops' });
    root = await createUser(app, { login: 'root', svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { login: 'orgadmin', role: 'Admin' });
  });
  afterEach(async () => {
    await app.close();
  });

  const login = (user: string, password: string) => app.request('POST', '/api/login', { body: { user, password } });
  const memberships = async (userId: string) =>
    Object.fromEntries(
      (await app.db('org_members').where('user_id', userId).select('org_id', 'role')).map((row: { org_id: string; role: string }) => [row.org_id, row.role]),
    );

  it('answers 401 without a session and 403 to an org admin on every endpoint', async () => {
    const calls: Array<[string, string]> = [
      ['GET', '/api/admin/ldap/status'],
      ['POST', '/api/admin/ldap/reload'],
      ['POST', `/api/admin/ldap/sync/${orgAdmin.id}`],
      ['GET', '/api/admin/ldap/alice'],
    ];
    for (const [method, path] of calls) {
      expect((await app.request(method, path)).status, path).to.equal(401);
      const refused = await app.request(method, path, { cookie: orgAdmin.cookie });
      expect(refused.status, path).to.equal(403);
      expect(refused.body.message).to.match(DENIED);
    }
  });

  it('GET /status: per server whether it answers and takes the service bind, never the bind password', async () => {
    const down = await freePort();
    fs.writeFileSync(config.file, ldapToml([{ port: down }, { port: slapd.port }]));
    expect((await api(app, root).post('/api/admin/ldap/reload')).status).to.equal(200);
    const res = await api(app, root).get('/api/admin/ldap/status');
    expect(res.status).to.equal(200);
    expect(res.body).to.have.length(2);
    expect(res.body[0]).to.include({ host: '127.0.0.1', port: down, available: false });
    expect(res.body[0].error).to.be.a('string');
    expect(res.body[1]).to.deep.equal({ host: '127.0.0.1', port: slapd.port, url: `ldap://127.0.0.1:${slapd.port}`, available: true, error: null });
    expect(JSON.stringify(res.body)).not.to.include(SERVICE_PASSWORD);
  });

  it('POST /reload: takes a changed file, refuses a bad one with the key named and keeps the previous config', async () => {
    fs.writeFileSync(config.file, ldapToml([{ port: slapd.port, mappings: [{ groupDn: GROUPS.staff, orgId: OPS, orgRole: 'Editor' }] }]));
    const reloaded = await api(app, root).post('/api/admin/ldap/reload');
    expect(reloaded.status).to.equal(200);
    expect(reloaded.body).to.deep.equal({ message: 'LDAP config reloaded' });
    expect((await login('bob', PEOPLE.bob.password)).status).to.equal(200);
    const bob = await app.db('users').where('login', 'bob').first();
    expect(await memberships(bob.id)).to.deep.equal({ [OPS]: 'Editor' });

    fs.writeFileSync(config.file, ldapToml([{ port: slapd.port, extra: ['bind_pasword = "typo"'] }]));
    const refused = await api(app, root).post('/api/admin/ldap/reload');
    expect(refused.status).to.equal(400);
    expect(refused.body.message).to.include('unknown key servers[0].bind_pasword').and.include('the previous LDAP config stays in use');
    expect(refused.body.message).not.to.include(SERVICE_PASSWORD);
    expect((await login('bob', PEOPLE.bob.password)).status).to.equal(200);
    const outcomes = (await auditEntries(app, 'ldap.config_reloaded')).map((entry) => entry.outcome);
    expect(outcomes).to.deep.equal(['success', 'failure']);
  });

  it('POST /sync/:userId applies the directory now, and disables a user the directory no longer has', async () => {
    expect((await login('bob', PEOPLE.bob.password)).status).to.equal(200);
    const bob = await app.db('users').where('login', 'bob').first();
    slapd.modify([`dn: ${GROUPS.editors}\nchangetype: modify\nadd: member\nmember: ${userDn('bob')}`]);
    try {
      const synced = await api(app, root).post(`/api/admin/ldap/sync/${bob.id}`);
      expect(synced.status).to.equal(200);
      expect(synced.body).to.deep.equal({ message: 'user bob synced from LDAP' });
      expect(await memberships(bob.id)).to.deep.equal({ org_main: 'Viewer', [OPS]: 'Editor' });
      const added = await auditEntries(app, { action: 'org.member_added', target_id: bob.id, actor_id: root.id });
      expect(added.map((entry) => entry.org_id)).to.deep.equal([OPS]);
    } finally {
      slapd.modify([`dn: ${GROUPS.editors}\nchangetype: modify\ndelete: member\nmember: ${userDn('bob')}`]);
    }

    slapd.modify([`dn: ${GROUPS.staff}\nchangetype: modify\ndelete: member\nmember: ${userDn('bob')}`]);
    try {
      const gone = await api(app, root).post(`/api/admin/ldap/sync/${bob.id}`);
      expect(gone.status).to.equal(200);
      expect(gone.body.message).to.equal('user bob is no longer allowed by LDAP: disabled');
      expect(!!(await app.db('users').where('id', bob.id).first()).is_disabled).to.equal(true);
      expect(await liveSessions(app, bob.id)).to.equal(0);
      expect((await login('bob', PEOPLE.bob.password)).status).to.equal(401);
    } finally {
      slapd.modify([`dn: ${GROUPS.staff}\nchangetype: modify\nadd: member\nmember: ${userDn('bob')}`]);
    }
  });

  it('POST /sync/:userId: 404 for an unknown user, 400 for a user who does not sign in through LDAP', async () => {
    expect((await api(app, root).post('/api/admin/ldap/sync/usr_nobody')).status).to.equal(404);
    const local = await api(app, root).post(`/api/admin/ldap/sync/${orgAdmin.id}`);
    expect(local.status).to.equal(400);
    expect(local.body.message).to.equal('user orgadmin does not sign in through LDAP');
  });

  it('GET /:login shows what a login maps to; 404 for a login the directory does not have', async () => {
    const res = await api(app, root).get('/api/admin/ldap/alice');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      dn: userDn('alice'),
      server: `ldap://127.0.0.1:${slapd.port}`,
      login: 'alice',
      email: 'alice@example.test',
      name: 'Alice Admin',
      groups: [GROUPS.admins, GROUPS.staff],
      allowed: true,
      svcAdmin: true,
      orgRoles: [{ orgId: 'org_main', orgRole: 'Admin' }],
      matchedMappings: [
        { groupDn: GROUPS.admins, orgId: 'org_main', orgRole: 'Admin', svcAdmin: true },
        { groupDn: GROUPS.staff, orgId: 'org_main', orgRole: 'Viewer', svcAdmin: null },
      ],
    });
    const carol = await api(app, root).get('/api/admin/ldap/carol');
    expect(carol.body).to.include({ allowed: false, svcAdmin: false });
    expect((await api(app, root).get('/api/admin/ldap/al*')).status).to.equal(404);
    expect((await api(app, root).get('/api/admin/ldap/nobody')).status).to.equal(404);
  });

  it('says LDAP is not enabled (400) to a server admin of a server without it', async () => {
    const plain = await startTestApp();
    try {
      const admin = await createUser(plain, { svcAdmin: true, role: 'Admin' });
      const res = await api(plain, admin).get('/api/admin/ldap/status');
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal('LDAP is not enabled (SVC_AUTH_LDAP_ENABLED)');
    } finally {
      await plain.close();
    }
  });
});
