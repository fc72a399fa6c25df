/**
 * Reads a SAML login response (HTTP-POST binding) into an identity, or refuses it. In order:
 * size and base64, the XML ground rules (xml.ts), one Response holding exactly one plain
 * Assertion, status Success, signatures (the response's or the assertion's; the assertion's when
 * SAML_WANT_ASSERTIONS_SIGNED), the SAML schema, and then, from the signed XML only: issuer,
 * bearer subject confirmation for our callback URL and one of our requests, conditions in their
 * time window (with a small skew), our audience. The caller checks that the request is still
 * open and that the assertion id was not used before (store.ts).
 */
import type { SamlConfig } from '../../../config.ts';
import { assertSchemaValid } from './service-provider.ts';
import { ASSERTION_NS, childElement, childElements, descendantsNamed, parseXml, PROTOCOL_NS, SamlRefusal, textOf, verifiedElement } from './xml.ts';

/** The clocks of the identity provider and of the service may differ by this much. */
export const CLOCK_SKEW_MS = 60_000;
export const MAX_MESSAGE_BYTES = 256 * 1024;
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

export interface SamlAssertion {
  assertionId: string;
  /** The request this answers (ours, still to be checked as open). */
  inResponseTo: string;
  /** When the assertion stops being usable: its id is remembered until then. */
  expiresAt: number;
  nameId: string;
  sessionIndex: string | null;
  /** Attribute name -> its values. */
  attributes: Map<string, string[]>;
}

/** A base64 message of at most MAX_MESSAGE_BYTES, as text. */
export function decodeMessage(encoded: string): string {
  const compact = encoded.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length === 0) throw new SamlRefusal('the message is not base64');
  const bytes = Buffer.from(compact, 'base64');
  if (bytes.length > MAX_MESSAGE_BYTES) throw new SamlRefusal('the message is too large');
  return bytes.toString('utf8');
}

function instant(value: string | null, what: string): number | null {
  if (value === null || value === '') return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new SamlRefusal(`${what} is not a time`);
  return time;
}

function attributesOf(assertion: Element): Map<string, string[]> {
  const attributes = new Map<string, string[]>();
  for (const statement of childElements(assertion, ASSERTION_NS, 'AttributeStatement')) {
    for (const attribute of childElements(statement, ASSERTION_NS, 'Attribute')) {
      const name = attribute.getAttribute('Name');
      if (!name) continue;
      const values = childElements(attribute, ASSERTION_NS, 'AttributeValue').map((value) => textOf(value) ?? '');
      attributes.set(name, [...(attributes.get(name) ?? []), ...values]);
    }
  }
  return attributes;
}

/** The bearer confirmation meant for us: our callback URL, in time, answering a request. */
function confirmation(subject: Element, settings: SamlConfig, now: number): { inResponseTo: string; notOnOrAfter: number } {
  const bearers = childElements(subject, ASSERTION_NS, 'SubjectConfirmation').filter((item) => item.getAttribute('Method') === BEARER);
  if (bearers.length === 0) throw new SamlRefusal('no bearer subject confirmation');
  const refusals: string[] = [];
  for (const bearer of bearers) {
    const data = childElement(bearer, ASSERTION_NS, 'SubjectConfirmationData');
    if (!data) {
      refusals.push('subject confirmation without data');
      continue;
    }
    const recipient = data.getAttribute('Recipient');
    const notOnOrAfter = instant(data.getAttribute('NotOnOrAfter'), 'SubjectConfirmationData NotOnOrAfter');
    const inResponseTo = data.getAttribute('InResponseTo');
    if (recipient !== settings.callbackUrl) refusals.push(`recipient ${String(recipient).slice(0, 200)} is not ${settings.callbackUrl}`);
    else if (notOnOrAfter === null) refusals.push('subject confirmation without NotOnOrAfter');
    else if (now - CLOCK_SKEW_MS >= notOnOrAfter) refusals.push('subject confirmation expired');
    else if (!inResponseTo) refusals.push('unsolicited response (no InResponseTo)');
    else return { inResponseTo, notOnOrAfter };
  }
  throw new SamlRefusal(refusals.join('; '));
}

function checkConditions(assertion: Element, settings: SamlConfig, now: number): number | null {
  const conditions = childElement(assertion, ASSERTION_NS, 'Conditions');
  if (!conditions) throw new SamlRefusal('assertion without conditions');
  const notBefore = instant(conditions.getAttribute('NotBefore'), 'Conditions NotBefore');
  const notOnOrAfter = instant(conditions.getAttribute('NotOnOrAfter'), 'Conditions NotOnOrAfter');
  if (notBefore !== null && now + CLOCK_SKEW_MS < notBefore) throw new SamlRefusal('assertion not yet valid');
  if (notOnOrAfter !== null && now - CLOCK_SKEW_MS >= notOnOrAfter) throw new SamlRefusal('assertion expired');
  const restrictions = childElements(conditions, ASSERTION_NS, 'AudienceRestriction');
  if (restrictions.length === 0) throw new SamlRefusal('assertion without audience restriction');
  // Each restriction must be met on its own (SAML core 2.5.1.4).
  for (const restriction of restrictions) {
    const audiences = childElements(restriction, ASSERTION_NS, 'Audience').map((audience) => textOf(audience));
    if (!audiences.includes(settings.issuer)) throw new SamlRefusal(`audience ${audiences.join(', ').slice(0, 200)} is not ${settings.issuer}`);
  }
  return notOnOrAfter;
}

function checkIssuer(element: Element, settings: SamlConfig, what: string): void {
  const issuer = textOf(childElement(element, ASSERTION_NS, 'Issuer'));
  if (settings.idpIssuer && issuer !== null && issuer !== settings.idpIssuer)
    throw new SamlRefusal(`${what} issuer ${issuer.slice(0, 200)} is not ${settings.idpIssuer}`);
  if (settings.idpIssuer && issuer === null && what === 'assertion') throw new SamlRefusal('assertion without issuer');
}

export async function readLoginResponse(settings: SamlConfig, encoded: string, now: number): Promise<SamlAssertion> {
  const xml = decodeMessage(encoded);
  const doc = parseXml(xml);
  const response = doc.documentElement!;
  if (response.namespaceURI !== PROTOCOL_NS || response.localName !== 'Response') throw new SamlRefusal(`a ${response.localName} is not a login response`);
  if (descendantsNamed(doc, 'EncryptedAssertion').length > 0) throw new SamlRefusal('encrypted assertions are not supported');
  const assertions = descendantsNamed(doc, 'Assertion');
  const [assertion] = childElements(response, ASSERTION_NS, 'Assertion');
  if (assertions.length !== 1 || !assertion) throw new SamlRefusal(`${assertions.length} assertions in the response, not exactly one`);

  const status = childElement(response, PROTOCOL_NS, 'Status');
  const code = status && childElement(status, PROTOCOL_NS, 'StatusCode')?.getAttribute('Value');
  if (code !== SUCCESS) throw new SamlRefusal(`status ${code ?? 'missing'}`, 'SAML login failed: the identity provider did not sign you in');
  const destination = response.getAttribute('Destination');
  if (destination && destination !== settings.callbackUrl) throw new SamlRefusal(`destination ${destination.slice(0, 200)} is not ${settings.callbackUrl}`);

  const signedResponse = verifiedElement(xml, response, settings.idpCert);
  const signedAssertion = verifiedElement(xml, assertion, settings.idpCert);
  if (!signedResponse && !signedAssertion) throw new SamlRefusal('neither the response nor the assertion is signed');
  if (settings.wantAssertionsSigned && !signedAssertion) throw new SamlRefusal('the assertion is not signed (SAML_WANT_ASSERTIONS_SIGNED)');
  // After the signature: the schema check runs libxml2 in a worker thread, which only messages
  // the identity provider signed may cost.
  await assertSchemaValid(xml);
  const trusted = signedAssertion ?? childElement(signedResponse!, ASSERTION_NS, 'Assertion');
  if (!trusted) throw new SamlRefusal('the signed response holds no assertion');
  if (signedResponse) {
    checkIssuer(signedResponse, settings, 'response');
    const inResponseTo = signedResponse.getAttribute('InResponseTo');
    const signedDestination = signedResponse.getAttribute('Destination');
    if (signedDestination && signedDestination !== settings.callbackUrl)
      throw new SamlRefusal(`destination ${signedDestination.slice(0, 200)} is not ${settings.callbackUrl}`);
    if (!inResponseTo) throw new SamlRefusal('unsolicited response (no InResponseTo)');
  }
  checkIssuer(trusted, settings, 'assertion');

  const subject = childElement(trusted, ASSERTION_NS, 'Subject');
  const nameId = textOf(subject && childElement(subject, ASSERTION_NS, 'NameID'));
  if (!subject || !nameId) throw new SamlRefusal('assertion without a NameID');
  if (nameId.length > 190) throw new SamlRefusal('NameID longer than 190 characters');
  const confirmed = confirmation(subject, settings, now);
  const responseInResponseTo = response.getAttribute('InResponseTo');
  if (responseInResponseTo && responseInResponseTo !== confirmed.inResponseTo)
    throw new SamlRefusal('the response and its assertion answer different requests');
  const conditionsEnd = checkConditions(trusted, settings, now);

  const authn = childElement(trusted, ASSERTION_NS, 'AuthnStatement');
  const assertionId = trusted.getAttribute('ID');
  if (!assertionId) throw new SamlRefusal('assertion without an ID');
  return {
    assertionId,
    inResponseTo: confirmed.inResponseTo,
    expiresAt: Math.min(confirmed.notOnOrAfter, conditionsEnd ?? Infinity) + CLOCK_SKEW_MS,
    nameId,
    sessionIndex: authn?.getAttribute('SessionIndex')?.slice(0, 190) || null,
    attributes: attributesOf(trusted),
  };
}
