import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, buildTeam, buildUser } from './helpers/factories.ts';
import { ACS_URL, ENTRY_POINT, redirectMessage, samlEnv, SP_ENTITY_ID, TestIdp } from './helpers/saml-idp.ts';

describe('SAML login', function () {
  // Each SAML message is schema-checked by libxml2 (WebAssembly) in a worker thread of its own:
  // a login costs a few hundred milliseconds, several seconds on a loaded machine.
  this.timeout(60_000);
  let app: TestApp;
  let idp: TestIdp;

  before(async () => {
    app = await startTestApp({ env: samlEnv() });
    idp = new TestIdp(app);
    await idp.loadMetadata();
  });
  after(() => app?.close());

  const sessionCookieOf = (response: { setCookie: string[] }) =>
    response.setCookie.find((cookie) => cookie.startsWith('svc_session=') && !cookie.startsWith('svc_session=;'));
  const asCookie = (setCookie: string) => setCookie.split(';')[0]!;

  it('publishes the service-provider metadata: entity id, assertion consumer URL, signing certificate', async () => {
    const response = await app.request('GET', '/api/saml/metadata');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/samlmetadata\+xml/);
    expect(response.body).to.include(`entityID="${SP_ENTITY_ID}"`);
    expect(response.body).to.include(`Location="${ACS_URL}"`);
    expect(response.body).to.include('WantAssertionsSigned="true"');
    expect(response.body).to.include('AuthnRequestsSigned="true"');
    expect(response.body).to.include('X509Certificate');
  });

  it('sends a signed AuthnRequest to SAML_ENTRY_POINT and lists SAML as enabled', async () => {
    const response = await app.request('GET', '/api/saml/login');
    expect(response.status).to.equal(302);
    const location = response.headers.get('location')!;
    expect(location.startsWith(`${ENTRY_POINT}?SAMLRequest=`)).to.equal(true);
    expect(new URL(location).searchParams.get('Signature')).to.be.a('string');
    const request = redirectMessage(location);
    expect(request).to.include(`AssertionConsumerServiceURL="${ACS_URL}"`);
    expect(await app.count('saml_requests', { kind: 'login' })).to.be.greaterThan(0);

    const providers = await app.request('GET', '/api/login/providers');
    expect(providers.body.find((provider: { id: string }) => provider.id === 'saml')).to.deep.equal({
      id: 'saml',
      name: 'SAML',
      enabled: true,
      url: '/api/login/saml',
    });
    const start = await app.request('GET', '/api/login/saml?redirect=/dashboards');
    expect(start.status).to.equal(302);
    expect(start.headers.get('location')).to.equal('/api/saml/login?redirect=%2Fdashboards');
  });

  it('creates the user on a first login, issues a session and redirects to the kept local path', async () => {
    const { response } = await idp.login(
      { nameId: 'grace-id', attributes: { uid: ['grace'], mail: ['Grace@Example.test'], displayName: ['Grace Hopper'] } },
      '/dashboards/d/abc',
    );
    expect(response.status).to.equal(302);
    expect(response.headers.get('location')).to.equal('/dashboards/d/abc');
    const cookie = sessionCookieOf(response);
    expect(cookie).to.be.a('string');

    const me = await app.request('GET', '/api/user', { cookie: asCookie(cookie!) });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ login: 'grace', email: 'grace@example.test', name: 'Grace Hopper' });
    const user = await app.db('users').where('login', 'grace').first();
    expect(await app.count('user_auth_links', { user_id: user.id, auth_module: 'saml', auth_id: 'grace-id' })).to.equal(1);
    expect(await app.count('org_members', { user_id: user.id, org_id: 'org_main', role: 'Viewer' })).to.equal(1);
    const links = await app.request('GET', '/api/user/auth-tokens', { cookie: asCookie(cookie!) });
    expect(links.body.authLinks.map((link: { authModule: string; label: string }) => [link.authModule, link.label])).to.deep.equal([['saml', 'SAML']]);
    const [login] = await auditEntries(app, { action: 'user.login', actor_id: user.id });
    expect(login!.metadata).to.deep.equal({ method: 'saml' });
    expect(await auditEntries(app, { action: 'user.created', target_id: user.id })).to.have.length(1);
  });

  it('signs in the linked user again, and joins no existing account by the asserted email', async () => {
    const again = await idp.login({ nameId: 'grace-id', attributes: { uid: ['someone-else'], mail: ['other@example.test'] } });
    expect(again.response.status).to.equal(302);
    const me = await app.request('GET', '/api/user', { cookie: asCookie(sessionCookieOf(again.response)!) });
    expect(me.body.login).to.equal('grace');

    // SAML_ALLOW_EMAIL_LINKING is off: an existing account is not joined by the asserted email.
    const local = await buildUser(app, { login: 'linus', email: 'linus@example.test' });
    const refused = await idp.login({ nameId: 'linus-at-idp', attributes: { mail: ['linus@example.test'] } });
    expect(refused.response.status).to.equal(401);
    expect(refused.response.body.message).to.equal('an account with this email already exists: sign in to it and link SAML from your profile');
    expect(await app.count('user_auth_links', { user_id: local.id })).to.equal(0);
    const [failure] = (await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' })).slice(-1);
    expect(failure!.metadata).to.deep.equal({ method: 'saml', reason: 'email linking is off for saml' });
  });

  it('refuses a disabled user', async () => {
    const first = await idp.login({ nameId: 'off-id', attributes: { uid: ['off'], mail: ['off@example.test'] } });
    const disabled = await app.db('users').where('email', 'off@example.test').first();
    expect(sessionCookieOf(first.response)).to.be.a('string');
    await app.db('users').where('id', disabled.id).update({ is_disabled: true });
    const sessionsBefore = await app.count('sessions', { user_id: disabled.id });
    const { response } = await idp.login({ nameId: 'off-id', attributes: { mail: ['off@example.test'] } });
    expect(response.status).to.equal(401);
    expect(response.body.message).to.equal('SAML login failed: this account cannot sign in');
    expect(sessionCookieOf(response)).to.equal(undefined);
    expect(await app.count('sessions', { user_id: disabled.id })).to.equal(sessionsBefore);
    const [failure] = (await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' })).slice(-1);
    expect(failure!.metadata).to.deep.equal({ method: 'saml', reason: 'disabled user' });
  });

  it('syncs groups into teams of the default org: joins the named teams, leaves the others', async () => {
    const ops = await buildTeam(app, { name: 'ops' });
    const dev = await buildTeam(app, { name: 'dev' });
    const { response } = await idp.login({ nameId: 'tess-id', attributes: { uid: ['tess'], groups: ['ops', 'dev', 'no-such-team'] } });
    expect(response.status).to.equal(302);
    const tess = await app.db('users').where('login', 'tess').first();
    expect(await app.count('team_members', { user_id: tess.id })).to.equal(2);

    const next = await idp.login({ nameId: 'tess-id', attributes: { uid: ['tess'], groups: ['dev'] } });
    expect(next.response.status).to.equal(302);
    expect(await app.count('team_members', { user_id: tess.id, team_id: dev.id })).to.equal(1);
    expect(await app.count('team_members', { user_id: tess.id, team_id: ops.id })).to.equal(0);
    expect(await auditEntries(app, { action: 'team.member_removed', target_id: ops.id })).to.have.length(1);
    expect(await auditEntries(app, { action: 'team.member_added', target_id: ops.id })).to.have.length(1);
  });
});

describe('SAML login when SAML_ENABLED is not set', function () {
  // Each SAML message is schema-checked by libxml2 (WebAssembly) in a worker thread of its own:
  // a login costs a few hundred milliseconds, several seconds on a loaded machine.
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app?.close());

  it('lists SAML as disabled and answers 404 on its routes', async () => {
    const providers = await app.request('GET', '/api/login/providers');
    expect(providers.body.find((provider: { id: string }) => provider.id === 'saml').enabled).to.equal(false);
    for (const path of ['/api/saml/metadata', '/api/saml/login', '/api/login/saml', '/api/saml/slo']) {
      const response = await app.request('GET', path);
      expect(response.status, path).to.equal(404);
      expect(response.body).to.deep.equal({ message: 'SAML login is not enabled on this server' });
    }
    const acs = await app.request('POST', '/api/saml/acs', { rawBody: 'SAMLResponse=eA%3D%3D', contentType: 'application/x-www-form-urlencoded' });
    expect(acs.status).to.equal(404);
  });
});
