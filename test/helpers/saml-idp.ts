/**
 * samlify acting as the SAML identity provider of the tests, with the fixture keys of
 * test/fixtures/saml (README there). It reads the service's metadata, parses the AuthnRequests
 * the service sends (checking their signature), and writes login responses from a template whose
 * every field a test may change, signed by samlify's signer (the response, the assertion, both or
 * neither; with the IdP's key or another), so each refusal can be provoked on purpose.
 */
import fs from 'node:fs';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import saml from 'samlify';
import { expect } from 'chai';
import type { Response, TestApp } from './app.ts';
import { auditEntries } from './factories.ts';

const FIXTURES = path.resolve('test/fixtures/saml');
export const fixture = (name: string) => path.join(FIXTURES, name);
const pem = (name: string) => fs.readFileSync(fixture(name), 'utf8');

export const IDP_ENTITY_ID = 'https://idp.example.test/metadata';
export const SP_ENTITY_ID = 'https://gatehouse.example.test/saml';
export const ACS_URL = 'https://gatehouse.example.test/api/saml/acs';
export const SLO_CALLBACK_URL = 'https://gatehouse.example.test/api/saml/slo/callback';
export const ENTRY_POINT = 'https://idp.example.test/sso';
export const LOGOUT_URL = 'https://idp.example.test/slo';

/** The service's SAML settings, as an operator would write them. */
export function samlEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    SAML_ENABLED: 'true',
    SAML_ENTRY_POINT: ENTRY_POINT,
    SAML_LOGOUT_URL: LOGOUT_URL,
    SAML_ISSUER: SP_ENTITY_ID,
    SAML_CALLBACK_URL: ACS_URL,
    SAML_IDP_CERT: fixture('idp-cert.pem'),
    SAML_IDP_ISSUER: IDP_ENTITY_ID,
    SAML_PRIVATE_KEY: fixture('sp-key.pem'),
    SAML_CERTIFICATE: fixture('sp-cert.pem'),
    SAML_WANT_ASSERTIONS_SIGNED: 'true',
    SAML_ATTRIBUTE_MAPPING_LOGIN: 'uid',
    SAML_ATTRIBUTE_MAPPING_EMAIL: 'mail',
    SAML_ATTRIBUTE_MAPPING_NAME: 'displayName',
    SAML_ATTRIBUTE_MAPPING_GROUPS: 'groups',
    ...overrides,
  };
}

export interface ResponseOptions {
  inResponseTo?: string;
  nameId?: string;
  attributes?: Record<string, string[]>;
  /** Offsets from the app's clock, in ms. */
  notBefore?: number;
  notOnOrAfter?: number;
  audience?: string;
  recipient?: string;
  destination?: string;
  issuer?: string;
  assertionId?: string;
  sessionIndex?: string;
  signAssertion?: boolean;
  signResponse?: boolean;
  /** Sign with the other fixture key, which the service does not trust. */
  foreignKey?: boolean;
}

let counter = 0;
const nextId = (kind: string) => `_${kind}${Date.now().toString(36)}${(counter += 1)}`;
const escape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const ASSERTION_PATH = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']";

export class TestIdp {
  readonly idp = saml.IdentityProvider({
    entityID: IDP_ENTITY_ID,
    privateKey: pem('idp-key.pem'),
    signingCert: pem('idp-cert.pem'),
    wantAuthnRequestsSigned: true,
    singleSignOnService: [{ Binding: saml.Constants.namespace.binding.redirect, Location: ENTRY_POINT }],
    singleLogoutService: [{ Binding: saml.Constants.namespace.binding.redirect, Location: LOGOUT_URL }],
  });
  /** The service as the IdP knows it: from its own metadata. */
  sp!: ReturnType<typeof saml.ServiceProvider>;

  constructor(readonly app: TestApp) {}

  async loadMetadata(): Promise<void> {
    const metadata = await this.app.request('GET', '/api/saml/metadata');
    this.sp = saml.ServiceProvider({ metadata: metadata.body as string });
  }

  /** Starts a login at the service and returns the id of the AuthnRequest the IdP received (signature checked). */
  async startLogin(redirect?: string): Promise<string> {
    const response = await this.app.request('GET', `/api/saml/login${redirect ? `?redirect=${encodeURIComponent(redirect)}` : ''}`);
    if (response.status !== 302) throw new Error(`login start answered ${response.status}`);
    return this.readLoginRequest(new URL(response.headers.get('location')!));
  }

  /** The id of the AuthnRequest the service sent the browser with to `location` (signature checked). */
  async readLoginRequest(location: URL): Promise<string> {
    const query = Object.fromEntries(location.searchParams);
    // The signed octet string is the query as sent, without the signature.
    const octetString = location.search
      .slice(1)
      .split('&')
      .filter((pair) => !pair.startsWith('Signature='))
      .join('&');
    const parsed = await this.idp.parseLoginRequest(this.sp, 'redirect', { query, octetString });
    return (parsed.extract as { request: { id: string } }).request.id;
  }

  /** The XML of a login response; everything not given is what a good IdP sends for `inResponseTo`. */
  responseXml(options: ResponseOptions = {}): string {
    const now = this.app.clock.now();
    const at = (offset: number) => new Date(now + offset).toISOString();
    const assertionId = options.assertionId ?? nextId('a');
    const attributes = Object.entries(options.attributes ?? {})
      .map(
        ([name, values]) =>
          `<saml:Attribute Name="${escape(name)}">${values.map((value) => `<saml:AttributeValue xsi:type="xs:string">${escape(value)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
      )
      .join('');
    const issuer = escape(options.issuer ?? IDP_ENTITY_ID);
    const inResponseTo = options.inResponseTo ? ` InResponseTo="${escape(options.inResponseTo)}"` : '';
    const assertion =
      `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${assertionId}" Version="2.0" IssueInstant="${at(0)}">` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">${options.nameId ?? 'ada'}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${at(options.notOnOrAfter ?? 300_000)}" Recipient="${escape(options.recipient ?? ACS_URL)}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${at(options.notBefore ?? -5_000)}" NotOnOrAfter="${at(options.notOnOrAfter ?? 300_000)}"><saml:AudienceRestriction><saml:Audience>${escape(options.audience ?? SP_ENTITY_ID)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="${escape(options.sessionIndex ?? 'idp-session-1')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
      (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
      `</saml:Assertion>`;
    let xml =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${nextId('r')}" Version="2.0" IssueInstant="${at(0)}" Destination="${escape(options.destination ?? ACS_URL)}"${inResponseTo}>` +
      `<saml:Issuer>${issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${assertion}</samlp:Response>`;
    if (options.signAssertion ?? true) xml = this.sign(xml, ASSERTION_PATH, options.foreignKey);
    if (options.signResponse ?? true) xml = this.sign(xml, "/*[local-name(.)='Response']", options.foreignKey);
    return xml;
  }

  /** Signs the element at `elementPath` (its signature placed after its Issuer, as the schema wants). */
  sign(xml: string, elementPath: string, foreignKey = false): string {
    const key = foreignKey ? 'other' : 'idp';
    return saml.SamlLib.constructSAMLSignature({
      rawSamlMessage: xml,
      referenceTagXPath: elementPath,
      privateKey: pem(`${key}-key.pem`),
      // samlify's signer takes the certificate's base64 body, without the PEM armour.
      signingCert: pem(`${key}-cert.pem`).replace(/-----[^-]+-----|\s/g, ''),
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      isBase64Output: false,
      signatureConfig: { prefix: 'ds', location: { reference: `${elementPath}/*[local-name(.)='Issuer']`, action: 'after' } },
    } as Parameters<typeof saml.SamlLib.constructSAMLSignature>[0]) as string;
  }

  /** Posts a response to the service's assertion consumer URL, as the IdP's page makes the browser do. */
  postResponse(xml: string, field = 'SAMLResponse', path = '/api/saml/acs') {
    return this.app.request('POST', path, {
      rawBody: new URLSearchParams({ [field]: Buffer.from(xml).toString('base64') }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    });
  }
  /** A response to a fresh request of the service, changed by `edit` after signing. */
  async answer(options: ResponseOptions = {}, edit: (xml: string) => string = (xml) => xml) {
    const inResponseTo = await this.startLogin();
    return this.postResponse(edit(this.responseXml({ inResponseTo, ...options })));
  }

  /** A whole login: request, response (with `options`), post. */
  async login(options: ResponseOptions = {}, redirect?: string) {
    const inResponseTo = await this.startLogin(redirect);
    const xml = this.responseXml({ inResponseTo, ...options });
    return { xml, inResponseTo, response: await this.postResponse(xml) };
  }
}

/** The AuthnRequest or LogoutRequest XML inside a redirect URL. */
export function redirectMessage(url: string): string {
  const encoded = new URL(url).searchParams.get('SAMLRequest') ?? new URL(url).searchParams.get('SAMLResponse')!;
  return inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
}

export const SAML_REFUSED = 'SAML login failed: the identity provider’s answer was refused';

/** What a refused SAML answer gives: a 401 with the one message, no session, and an audit entry naming why. */
export async function expectSamlRefused(app: TestApp, response: Response, reason: RegExp): Promise<void> {
  expect(response.status, JSON.stringify(response.body)).to.equal(401);
  expect(response.body).to.deep.equal({ message: SAML_REFUSED });
  expect(response.setCookie.some((cookie) => /^svc_session=[^;]/.test(cookie))).to.equal(false);
  const failures = await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' });
  expect(failures.at(-1)!.metadata!.method).to.equal('saml');
  expect(failures.at(-1)!.metadata!.reason).to.match(reason);
}
