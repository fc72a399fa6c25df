/**
 * Every SAML login response the service must refuse, each made by the test identity provider
 * (samlify, fixture keys) and then, where the attack needs it, changed by hand after signing.
 * A refusal is a 401 without a session, and a `user.login_failed` audit entry with the reason.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { samlEnv, expectSamlRefused, TestIdp } from './helpers/saml-idp.ts';

describe('SAML login refusals', function () {
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

  it('accepts the untouched response (the baseline every refusal below departs from)', async () => {
    const response = await idp.answer({ nameId: 'baseline' });
    expect(response.status).to.equal(302);
  });

  it('refuses an unsigned response', async () => {
    await expectSamlRefused(app, await idp.answer({ signAssertion: false, signResponse: false }), /neither the response nor the assertion is signed/);
  });

  it('refuses a signed response whose assertion is unsigned, while assertions must be signed', async () => {
    await expectSamlRefused(app, await idp.answer({ signAssertion: false, signResponse: true }), /the assertion is not signed/);
  });

  it('refuses a response signed with a key the service does not trust', async () => {
    await expectSamlRefused(app, await idp.answer({ foreignKey: true }), /does not verify/);
  });

  it('refuses a NameID changed after signing', async () => {
    await expectSamlRefused(app, await idp.answer({ nameId: 'ada' }, (xml) => xml.replace('>ada</saml:NameID>', '>admin</saml:NameID>')), /does not verify/);
  });

  describe('signature wrapping', () => {
    const evilAssertion = (id: string) =>
      `<saml:Assertion ID="${id}" Version="2.0" IssueInstant="2026-11-21T12:00:00Z"><saml:Issuer>https://idp.example.test/metadata</saml:Issuer><saml:Subject><saml:NameID>admin</saml:NameID></saml:Subject></saml:Assertion>`;

    it('refuses an unsigned assertion placed before the signed one', async () => {
      const response = await idp.answer({}, (xml) => xml.replace('<saml:Assertion ', `${evilAssertion('_evil1')}<saml:Assertion `));
      await expectSamlRefused(app, response, /2 assertions in the response/);
    });

    it('refuses an unsigned assertion placed after the signed one', async () => {
      const response = await idp.answer({}, (xml) => xml.replace('</samlp:Response>', `${evilAssertion('_evil2')}</samlp:Response>`));
      await expectSamlRefused(app, response, /2 assertions in the response/);
    });

    it('refuses a signed assertion hidden inside an unsigned one (in its Advice)', async () => {
      const response = await idp.answer({ signResponse: false }, (xml) => {
        const start = xml.indexOf('<saml:Assertion ');
        const end = xml.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length;
        const signed = xml.slice(start, end);
        const wrapper = evilAssertion('_evil3').replace('</saml:Subject>', `</saml:Subject><saml:Advice>${signed}</saml:Advice>`);
        return xml.slice(0, start) + wrapper + xml.slice(end);
      });
      await expectSamlRefused(app, response, /2 assertions in the response/);
    });

    it('refuses a signed response moved into the Extensions of an unsigned one', async () => {
      // Extensions take elements of other namespaces, so the schema lets the wrapper through.
      const response = await idp.answer({}, (xml) => {
        const evil = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_evilresponse" Version="2.0" IssueInstant="2026-11-21T12:00:00Z"><saml:Issuer>https://idp.example.test/metadata</saml:Issuer><samlp:Extensions><x:Wrapper xmlns:x="urn:example:evil">${xml}</x:Wrapper></samlp:Extensions><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${evilAssertion('_evil4')}</samlp:Response>`;
        return evil;
      });
      await expectSamlRefused(app, response, /2 assertions in the response/);
    });

    it('refuses an assertion carrying a signature copied from another assertion', async () => {
      const other = idp.responseXml({ inResponseTo: '_other', signResponse: false });
      const copiedSignature = other.slice(other.indexOf('<ds:Signature'), other.indexOf('</ds:Signature>') + '</ds:Signature>'.length);
      const response = await idp.answer({ signAssertion: false, signResponse: false }, (xml) =>
        xml.replace(/(<saml:Assertion [^>]*><saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${copiedSignature}`),
      );
      await expectSamlRefused(app, response, /does not reference it alone/);
    });

    it('refuses a response with two signed assertions', async () => {
      const other = idp.responseXml({ inResponseTo: '_other', signResponse: false });
      const secondAssertion = other.slice(other.indexOf('<saml:Assertion '), other.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length);
      const response = await idp.answer({ signResponse: false }, (xml) => xml.replace('</samlp:Response>', `${secondAssertion}</samlp:Response>`));
      await expectSamlRefused(app, response, /2 assertions in the response/);
    });
  });

  it('refuses a comment inside the NameID (the signature ignores comments, a reader might stop at one)', async () => {
    const response = await idp.answer({ nameId: 'ada@example.test.evil.example' }, (xml) =>
      xml.replace('ada@example.test.evil.example', 'ada@example.test<!---->.evil.example'),
    );
    await expectSamlRefused(app, response, /XML comment/);
  });

  it('refuses a message the SAML schema does not allow', async () => {
    // Signed after the change: only what the identity provider signed reaches the schema check.
    const inResponseTo = await idp.startLogin();
    const unsigned = idp.responseXml({ inResponseTo, signAssertion: false, signResponse: false }).replace('<samlp:Status>', '<samlp:Unknown/><samlp:Status>');
    const response = await idp.postResponse(
      idp.sign(idp.sign(unsigned, "/*[local-name(.)='Response']/*[local-name(.)='Assertion']"), "/*[local-name(.)='Response']"),
    );
    await expectSamlRefused(app, response, /not valid SAML 2.0 XML \(schema\)/);
  });

  it('refuses a DOCTYPE and entity declarations', async () => {
    const response = await idp.answer({}, (xml) => `<?xml version="1.0"?><!DOCTYPE samlp:Response [<!ENTITY who "admin">]>${xml}`);
    await expectSamlRefused(app, response, /DOCTYPE or entity declaration/);
  });

  // xmldom took up to 0.45 s of the event loop to parse each of these (240 KB at most); the
  // reason names the bound the text broke, found before the message is parsed or its signature read
  const markupPastBounds = [
    { name: '4,001 elements', extra: '<x/>'.repeat(4001), reason: /^more than 4000 XML elements$/ },
    { name: 'elements nested 33 deep', extra: '<x>'.repeat(33) + '</x>'.repeat(33), reason: /^XML nested deeper than 32 elements$/ },
    {
      name: 'an element of 65 attributes',
      extra: `<x ${Array.from({ length: 65 }, (_, i) => `a${i}="1"`).join(' ')}/>`,
      reason: /^an XML element with more than 64 attributes$/,
    },
    {
      name: '4,100 attributes',
      extra: `<x ${Array.from({ length: 41 }, (_, i) => `a${i}="1"`).join(' ')}/>`.repeat(100),
      reason: /^more than 4000 XML attributes$/,
    },
  ];
  for (const { name, extra, reason } of markupPastBounds) {
    it(`refuses a response holding ${name}`, async () => {
      const response = await idp.answer({}, (xml) => xml.replace('</samlp:Response>', `<samlp:Extensions>${extra}</samlp:Extensions></samlp:Response>`));
      await expectSamlRefused(app, response, reason);
    });
  }

  // the namespaces are added after signing: exclusive canonicalization leaves out what an ancestor declares alike
  it('accepts a response of 1,000 groups, each value declaring its two namespaces', async () => {
    const groups = Array.from({ length: 1000 }, (_, i) => `group-${i}`);
    const response = await idp.answer({ attributes: { groups } }, (xml) =>
      xml.replaceAll(
        '<saml:AttributeValue xsi:type',
        '<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type',
      ),
    );
    expect(response.status, JSON.stringify(response.body)).to.equal(302);
  });

  it('refuses expired and not-yet-valid assertions, and allows a small clock skew', async () => {
    await expectSamlRefused(app, await idp.answer({ notOnOrAfter: -120_000 }), /expired/);
    await expectSamlRefused(app, await idp.answer({ notBefore: 120_000 }), /not yet valid/);
    expect((await idp.answer({ notOnOrAfter: -30_000, nameId: 'skew-late' })).status).to.equal(302);
    expect((await idp.answer({ notBefore: 30_000, nameId: 'skew-early' })).status).to.equal(302);
  });

  it('refuses a wrong audience, recipient, destination or issuer', async () => {
    await expectSamlRefused(app, await idp.answer({ audience: 'https://other-sp.example.test' }), /audience https:\/\/other-sp.example.test is not/);
    await expectSamlRefused(app, await idp.answer({ recipient: 'https://other-sp.example.test/acs' }), /recipient https:\/\/other-sp.example.test\/acs is not/);
    await expectSamlRefused(
      app,
      await idp.answer({ destination: 'https://other-sp.example.test/acs' }),
      /destination https:\/\/other-sp.example.test\/acs is not/,
    );
    await expectSamlRefused(app, await idp.answer({ issuer: 'https://evil-idp.example.test' }), /issuer https:\/\/evil-idp.example.test is not/);
  });

  it('refuses an InResponseTo that is not an open request of ours, and an unsolicited response', async () => {
    await expectSamlRefused(app, await idp.postResponse(idp.responseXml({ inResponseTo: '_not_ours' })), /InResponseTo names no open login request/);
    await expectSamlRefused(app, await idp.postResponse(idp.responseXml({})), /unsolicited response/);
    // An answered request is closed: a second assertion for it is refused too.
    const inResponseTo = await idp.startLogin();
    expect((await idp.postResponse(idp.responseXml({ inResponseTo, nameId: 'first' }))).status).to.equal(302);
    await expectSamlRefused(app, await idp.postResponse(idp.responseXml({ inResponseTo, nameId: 'second' })), /InResponseTo names no open login request/);
  });

  it('refuses a replayed assertion, remembered in the database until it expires', async () => {
    const { xml, response } = await idp.login({ nameId: 'replayed' });
    expect(response.status).to.equal(302);
    const assertionId = /<saml:Assertion [^>]*ID="([^"]+)"/.exec(xml)![1]!;
    expect(await app.count('saml_assertion_ids', { id: assertionId })).to.equal(1);
    await expectSamlRefused(app, await idp.postResponse(xml), /replayed assertion/);
    // Once expired it cannot be accepted anyway, and is forgotten at the next login.
    app.clock.advance(60 * 60_000);
    expect((await idp.login({ nameId: 'after-expiry' })).response.status).to.equal(302);
    expect(await app.count('saml_assertion_ids', { id: assertionId })).to.equal(0);
  });

  it('answers 400 to a request without a SAML response, or not as a form', async () => {
    const empty = await app.request('POST', '/api/saml/acs', { rawBody: 'RelayState=x', contentType: 'application/x-www-form-urlencoded' });
    expect(empty.status).to.equal(400);
    const json = await app.request('POST', '/api/saml/acs', { body: { SAMLResponse: 'x' } });
    expect(json.status).to.equal(400);
    await expectSamlRefused(
      app,
      await app.request('POST', '/api/saml/acs', { rawBody: 'SAMLResponse=%%%', contentType: 'application/x-www-form-urlencoded' }),
      /not base64/,
    );
  });
});

describe('SAML login with SAML_WANT_ASSERTIONS_SIGNED=false', function () {
  // Each SAML message is schema-checked by libxml2 (WebAssembly) in a worker thread of its own:
  // a login costs a few hundred milliseconds, several seconds on a loaded machine.
  this.timeout(60_000);
  let app: TestApp;
  let idp: TestIdp;

  before(async () => {
    app = await startTestApp({ env: samlEnv({ SAML_WANT_ASSERTIONS_SIGNED: 'false' }) });
    idp = new TestIdp(app);
    await idp.loadMetadata();
  });
  after(() => app?.close());

  it('accepts a signed response around an unsigned assertion, and still refuses an unsigned one', async () => {
    const signed = await idp.login({ signAssertion: false, signResponse: true, nameId: 'response-signed' });
    expect(signed.response.status).to.equal(302);
    const unsigned = await idp.login({ signAssertion: false, signResponse: false, nameId: 'unsigned' });
    expect(unsigned.response.status).to.equal(401);
  });
});
