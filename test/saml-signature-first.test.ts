/**
 * The signature value of a SAML message is checked over its SignedInfo before xml-crypto reads
 * the rest of the message: a forged message is refused at a cost that does not grow with its size,
 * with the same answer and audit entry as every other signature refusal, while a genuine message
 * is accepted whichever of the algorithms xml-crypto takes it is signed with.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import { SignedXml } from 'xml-crypto';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { fixture, samlEnv, expectSamlRefused, TestIdp } from './helpers/saml-idp.ts';

const RESPONSE_PATH = "/*[local-name(.)='Response']";
const ASSERTION_PATH = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']";
const EXCLUSIVE_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const INCLUSIVE_C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

/** Signs with xml-crypto directly, for the algorithms samlify's signer does not choose. */
function signWith(xml: string, elementPath: string, canonicalizationAlgorithm: string, signatureAlgorithm: string): string {
  const signer = new SignedXml({ privateKey: fs.readFileSync(fixture('idp-key.pem')), canonicalizationAlgorithm, signatureAlgorithm });
  signer.addReference({
    xpath: elementPath,
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', EXCLUSIVE_C14N],
  });
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `${elementPath}/*[local-name(.)='Issuer']`, action: 'after' } });
  return signer.getSignedXml();
}

/** `xml` with the text of its first SignatureValue (the response's) changed by `edit`. */
function editFirstSignatureValue(xml: string, edit: (value: string) => string): string {
  return xml.replace(/(<ds:SignatureValue>)([^<]*)(<\/ds:SignatureValue>)/, (_, open: string, value: string, close: string) => open + edit(value) + close);
}

/** Flips one base64 character in the middle of a signature value: still base64, no longer the signature. */
const flipCharacter = (value: string) => {
  const at = Math.floor(value.length / 2);
  return value.slice(0, at) + (value[at] === 'A' ? 'B' : 'A') + value.slice(at + 1);
};

describe('SAML signature value checked first', function () {
  // Each SAML message is schema-checked by libxml2 (WebAssembly) in a worker thread of its own.
  this.timeout(60_000);
  let app: TestApp;
  let idp: TestIdp;

  before(async () => {
    app = await startTestApp({ env: samlEnv() });
    idp = new TestIdp(app);
    await idp.loadMetadata();
  });
  after(() => app?.close());

  /** A response to a fresh request, its assertion (and, unless told not to, then the response) signed with these algorithms. */
  async function answerSignedWith(canonicalization: string, signatureAlgorithm: string, signResponse: boolean) {
    const inResponseTo = await idp.startLogin();
    const unsigned = idp.responseXml({ inResponseTo, signAssertion: false, signResponse: false });
    const signedAssertion = signWith(unsigned, ASSERTION_PATH, canonicalization, signatureAlgorithm);
    return idp.postResponse(signResponse ? signWith(signedAssertion, RESPONSE_PATH, canonicalization, signatureAlgorithm) : signedAssertion);
  }

  it('accepts a genuine signed response', async () => {
    const response = await idp.answer({ nameId: 'signature-first' });
    expect(response.status, JSON.stringify(response.body)).to.equal(302);
    expect(response.setCookie.some((cookie) => /^svc_session=[^;]/.test(cookie))).to.equal(true);
  });

  // xml-crypto takes the ancestor namespaces of the first SignedInfo in the message for every
  // signature it checks with inclusive c14n, so a response signed twice that way is refused
  // whatever is checked first; signed once, it is accepted.
  for (const [name, canonicalization, signatureAlgorithm, signResponse] of [
    ['inclusive c14n and rsa-sha256 (the assertion alone)', INCLUSIVE_C14N, RSA_SHA256, false],
    ['exclusive c14n and rsa-sha512', EXCLUSIVE_C14N, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512', true],
    ['exclusive c14n and RSA-PSS with SHA-256', EXCLUSIVE_C14N, 'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1', true],
  ] as const) {
    it(`accepts a genuine response whose SignedInfo is signed with ${name}`, async () => {
      const response = await answerSignedWith(canonicalization, signatureAlgorithm, signResponse);
      expect(response.status, JSON.stringify(response.body)).to.equal(302);
    });
  }

  it('refuses a response whose signature value is altered', async () => {
    await expectSamlRefused(app, await idp.answer({}, (xml) => editFirstSignatureValue(xml, flipCharacter)), /signature of Response does not verify/);
  });

  it('refuses a response whose SignedInfo is altered (a digest value, or whitespace inside it)', async () => {
    const alteredDigest = (xml: string) => xml.replace(/(<ds:DigestValue>)(.)/, (_, open: string, first: string) => open + (first === 'A' ? 'B' : 'A'));
    await expectSamlRefused(app, await idp.answer({}, alteredDigest), /signature of Response does not verify/);
    await expectSamlRefused(app, await idp.answer({}, (xml) => xml.replace('<ds:SignedInfo>', '<ds:SignedInfo> ')), /signature of Response does not verify/);
  });

  it('refuses a response signed with a key the service does not trust', async () => {
    await expectSamlRefused(app, await idp.answer({ foreignKey: true }), /does not verify with the identity provider's certificate/);
  });

  it('refuses a forged response of about 200 KB', async () => {
    const forged = (xml: string) => {
      expect(xml.length).to.be.greaterThan(200_000);
      return editFirstSignatureValue(xml, flipCharacter);
    };
    await expectSamlRefused(
      app,
      await idp.answer({ attributes: { groups: Array.from({ length: 800 }, (_, i) => `group-${i}-${'x'.repeat(240)}`) } }, forged),
      /signature of Response does not verify/,
    );
  });

  it('refuses a signature value that is missing, empty or not base64', async () => {
    await expectSamlRefused(
      app,
      await idp.answer({}, (xml) => xml.replace(/<ds:SignatureValue>[^<]*<\/ds:SignatureValue>/, '')),
      /signature of Response does not verify/,
    );
    await expectSamlRefused(app, await idp.answer({}, (xml) => editFirstSignatureValue(xml, () => '')), /signature of Response does not verify/);
    await expectSamlRefused(
      app,
      await idp.answer({}, (xml) => editFirstSignatureValue(xml, (value) => `${value.slice(0, 10)}*${value.slice(10)}`)),
      /signature of Response does not verify/,
    );
  });

  it('refuses a second SignatureValue or SignedInfo inside a signature, whichever comes first', async () => {
    const bogusValue = '<ds:SignatureValue>AAAA</ds:SignatureValue>';
    await expectSamlRefused(
      app,
      await idp.answer({}, (xml) => xml.replace('<ds:SignatureValue>', `${bogusValue}<ds:SignatureValue>`)),
      /signature of Response does not verify/,
    );
    await expectSamlRefused(
      app,
      await idp.answer({}, (xml) => xml.replace('</ds:SignatureValue>', `</ds:SignatureValue>${bogusValue}`)),
      /signature of Response does not verify/,
    );
    // the assertion's genuine signature value, or its SignedInfo and value, hidden in an Object of the response's signature
    const hideInObject = (from: string) => (xml: string) => {
      const hidden = xml.slice(xml.lastIndexOf(from), xml.lastIndexOf('</ds:SignatureValue>') + '</ds:SignatureValue>'.length);
      return xml.replace('</ds:Signature>', `<ds:Object>${hidden}</ds:Object></ds:Signature>`);
    };
    await expectSamlRefused(app, await idp.answer({}, hideInObject('<ds:SignatureValue>')), /signature of Response does not verify/);
    // a second Reference in the signature: refused before its signature value is read
    await expectSamlRefused(app, await idp.answer({}, hideInObject('<ds:SignedInfo>')), /signature of Response does not reference it alone/);
  });

  it('refuses a SignatureMethod or CanonicalizationMethod changed after signing, or one xml-crypto does not take', async () => {
    const withSignatureMethod = (algorithm: string) => (xml: string) => xml.replace(RSA_SHA256, algorithm);
    await expectSamlRefused(
      app,
      await idp.answer({}, withSignatureMethod('http://www.w3.org/2000/09/xmldsig#rsa-sha1')),
      /signature of Response does not verify/,
    );
    await expectSamlRefused(
      app,
      await idp.answer({}, withSignatureMethod('http://www.w3.org/2000/09/xmldsig#hmac-sha1')),
      /signature of Response does not verify/,
    );
    await expectSamlRefused(app, await idp.answer({}, withSignatureMethod('none')), /signature of Response does not verify/);
    await expectSamlRefused(
      app,
      await idp.answer({}, (xml) =>
        xml.replace(`<ds:CanonicalizationMethod Algorithm="${EXCLUSIVE_C14N}"`, `<ds:CanonicalizationMethod Algorithm="${INCLUSIVE_C14N}"`),
      ),
      /signature of Response does not verify/,
    );
    await expectSamlRefused(
      app,
      await idp.answer({}, (xml) =>
        xml.replace(`<ds:CanonicalizationMethod Algorithm="${EXCLUSIVE_C14N}"`, '<ds:CanonicalizationMethod Algorithm="urn:example:none"'),
      ),
      /signature of Response does not verify/,
    );
  });
});
