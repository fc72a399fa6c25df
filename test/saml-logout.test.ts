import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { auditEntries, buildUser, liveSessions } from './helpers/factories.ts';
import { IDP_ENTITY_ID, LOGOUT_URL, redirectMessage, samlEnv, SLO_CALLBACK_URL, TestIdp } from './helpers/saml-idp.ts';

const PROTOCOL = 'xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';

describe('SAML single logout', function () {
  // Each SAML message is schema-checked by libxml2 (WebAssembly) in a worker thread of its own:
  // a login costs a few hundred milliseconds, several seconds on a loaded machine.
  this.timeout(60_000);
  let app: TestApp;
  let idp: TestIdp;
  let sequence = 0;

  before(async () => {
    app = await startTestApp({ env: samlEnv() });
    idp = new TestIdp(app);
    await idp.loadMetadata();
  });
  after(() => app?.close());

  const at = (offset = 0) => new Date(app.clock.now() + offset).toISOString();
  const id = () => `_slo${(sequence += 1)}`;

  async function samlLogin(nameId: string, sessionIndex: string) {
    const { response } = await idp.login({ nameId, sessionIndex, attributes: { uid: [nameId] } });
    expect(response.status).to.equal(302);
    const cookie = response.setCookie.find((value) => value.startsWith('svc_session='))!.split(';')[0]!;
    const user = await app.db('users').where('login', nameId).first();
    return { cookie, userId: user.id as string };
  }

  function logoutResponse(inResponseTo: string, sign = true): string {
    const xml = `<samlp:LogoutResponse ${PROTOCOL} ID="${id()}" Version="2.0" IssueInstant="${at()}" Destination="${SLO_CALLBACK_URL}" InResponseTo="${inResponseTo}"><saml:Issuer>${IDP_ENTITY_ID}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`;
    return sign ? idp.sign(xml, "/*[local-name(.)='LogoutResponse']") : xml;
  }

  function logoutRequest(nameId: string, sessionIndex: string, extensions = ''): string {
    return `<samlp:LogoutRequest ${PROTOCOL} ID="${id()}" Version="2.0" IssueInstant="${at()}" Destination="${SLO_CALLBACK_URL}"><saml:Issuer>${IDP_ENTITY_ID}</saml:Issuer>${extensions}<saml:NameID>${nameId}</saml:NameID><samlp:SessionIndex>${sessionIndex}</samlp:SessionIndex></samlp:LogoutRequest>`;
  }
  const signRequest = (xml: string) => idp.sign(xml, "/*[local-name(.)='LogoutRequest']");

  it('ends the local session, sends a signed LogoutRequest for the SAML subject, and completes on the signed LogoutResponse', async () => {
    const { cookie, userId } = await samlLogin('slo-ada', 'idp-session-ada');
    const start = await app.request('GET', '/api/saml/slo', { cookie });
    expect(start.status).to.equal(302);
    const location = start.headers.get('location')!;
    expect(location.startsWith(`${LOGOUT_URL}?SAMLRequest=`)).to.equal(true);
    expect(new URL(location).searchParams.get('Signature')).to.be.a('string');
    const request = redirectMessage(location);
    expect(request).to.match(/<saml:NameID[^>]*>slo-ada<\/saml:NameID>/);
    expect(request).to.include('idp-session-ada');
    expect(await liveSessions(app, userId)).to.equal(0);
    expect((await app.request('GET', '/api/user', { cookie })).status).to.equal(401);
    expect(await auditEntries(app, { action: 'user.logout', actor_id: userId })).to.have.length(1);

    const requestId = /ID="([^"]+)"/.exec(request)![1]!;
    const done = await idp.postResponse(logoutResponse(requestId), 'SAMLResponse', '/api/saml/slo/callback');
    expect(done.status).to.equal(302);
    expect(done.headers.get('location')).to.equal('/login');
    // The request is closed: the same answer again is refused.
    const again = await idp.postResponse(logoutResponse(requestId), 'SAMLResponse', '/api/saml/slo/callback');
    expect(again.status).to.equal(401);
  });

  it('refuses an unsigned LogoutResponse', async () => {
    const { cookie } = await samlLogin('slo-bob', 'idp-session-bob');
    const start = await app.request('GET', '/api/saml/slo', { cookie });
    const requestId = /ID="([^"]+)"/.exec(redirectMessage(start.headers.get('location')!))![1]!;
    const response = await idp.postResponse(logoutResponse(requestId, false), 'SAMLResponse', '/api/saml/slo/callback');
    expect(response.status).to.equal(401);
    const [failure] = (await auditEntries(app, { action: 'saml.logout_failed' })).slice(-1);
    expect(failure!.metadata).to.deep.equal({ method: 'saml', reason: 'unsigned LogoutResponse' });
  });

  it('without a SAML session, only logs out locally', async () => {
    const local = await buildUser(app);
    const response = await app.request('GET', '/api/saml/slo', { cookie: local.cookie });
    expect(response.status).to.equal(302);
    expect(response.headers.get('location')).to.equal('/login');
    expect(await liveSessions(app, local.id)).to.equal(0);
  });

  it('on a signed LogoutRequest of the IdP, ends the sessions of that subject and answers with a LogoutResponse', async () => {
    const { userId } = await samlLogin('slo-cleo', 'idp-session-cleo');
    const response = await idp.postResponse(signRequest(logoutRequest('slo-cleo', 'idp-session-cleo')), 'SAMLRequest', '/api/saml/slo/callback');
    expect(response.status).to.equal(302);
    const location = response.headers.get('location')!;
    expect(location.startsWith(`${LOGOUT_URL}?SAMLResponse=`)).to.equal(true);
    expect(new URL(location).searchParams.get('Signature')).to.be.a('string');
    expect(redirectMessage(location)).to.include('urn:oasis:names:tc:SAML:2.0:status:Success');
    expect(await liveSessions(app, userId)).to.equal(0);
    const [revoked] = (await auditEntries(app, { action: 'session.revoked' })).slice(-1);
    expect(revoked!.metadata).to.deep.equal({ reason: 'SAML single logout', userId });
  });

  it('does not trust the identity fields of a LogoutRequest whose signature covers something else (samlify #634)', async () => {
    const victim = await samlLogin('slo-victim', 'idp-session-victim');
    // A captured, validly signed assertion wrapped in a LogoutRequest the attacker wrote.
    const captured = idp.responseXml({ inResponseTo: '_captured', signResponse: false, nameId: 'slo-attacker' });
    const assertion = captured.slice(captured.indexOf('<saml:Assertion '), captured.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length);
    const wrapped = logoutRequest('slo-victim', 'idp-session-victim', `<samlp:Extensions>${assertion}</samlp:Extensions>`);
    const response = await idp.postResponse(wrapped, 'SAMLRequest', '/api/saml/slo/callback');
    expect(response.status).to.equal(401);
    expect(await liveSessions(app, victim.userId)).to.equal(1);
  });

  it('ends only sessions this service opened for that SAML subject, never a local account of the same name', async () => {
    const local = await buildUser(app, { login: 'slo-dora' });
    const response = await idp.postResponse(signRequest(logoutRequest('slo-dora', 'idp-session-dora')), 'SAMLRequest', '/api/saml/slo/callback');
    expect(response.status).to.equal(302);
    expect(await liveSessions(app, local.id)).to.equal(1);
  });
});
