/**
 * Reads the single-logout messages the identity provider posts to /api/saml/slo/callback: the
 * LogoutResponse to a LogoutRequest of ours, or its own LogoutRequest. Both must be signed,
 * with the signature in the message's root referencing the root itself, and every field is read
 * from the XML that signature verified. samlify's own logout parsing is not used: it accepts a
 * signature found anywhere in the message and reads the fields around it (samlify #634), so a
 * captured signed element could carry a NameID of the attacker's choosing. Even then, a
 * LogoutRequest only ends sessions that this service opened for that NameID (and SessionIndex).
 */
import type { SamlConfig } from '../../../config.ts';
import { CLOCK_SKEW_MS, decodeMessage } from './response.ts';
import { assertSchemaValid, logoutCallbackUrl } from './service-provider.ts';
import { ASSERTION_NS, childElement, parseXml, PROTOCOL_NS, SamlRefusal, textOf, verifiedElement } from './xml.ts';

const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

export type LogoutMessage =
  | { kind: 'response'; inResponseTo: string; success: boolean }
  | { kind: 'request'; id: string; nameId: string; sessionIndex: string | null; expiresAt: number };

export async function readLogoutMessage(settings: SamlConfig, encoded: string, now: number): Promise<LogoutMessage> {
  const xml = decodeMessage(encoded);
  const doc = parseXml(xml);
  const root = doc.documentElement!;
  if (root.namespaceURI !== PROTOCOL_NS || (root.localName !== 'LogoutResponse' && root.localName !== 'LogoutRequest')) {
    throw new SamlRefusal(`a ${root.localName} is not a logout message`, 'single logout failed: the identity provider’s message was refused');
  }
  const signed = verifiedElement(xml, root, settings.idpCert);
  if (!signed) throw new SamlRefusal(`unsigned ${root.localName}`, 'single logout failed: the identity provider’s message was refused');
  await assertSchemaValid(xml);
  const issuer = textOf(childElement(signed, ASSERTION_NS, 'Issuer'));
  if (settings.idpIssuer && issuer !== settings.idpIssuer) throw new SamlRefusal(`issuer ${String(issuer).slice(0, 200)} is not ${settings.idpIssuer}`);
  const destination = signed.getAttribute('Destination');
  if (destination && destination !== logoutCallbackUrl(settings))
    throw new SamlRefusal(`destination ${destination.slice(0, 200)} is not ${logoutCallbackUrl(settings)}`);

  if (signed.localName === 'LogoutResponse') {
    const inResponseTo = signed.getAttribute('InResponseTo');
    if (!inResponseTo) throw new SamlRefusal('LogoutResponse without InResponseTo');
    const status = childElement(signed, PROTOCOL_NS, 'Status');
    const code = status && childElement(status, PROTOCOL_NS, 'StatusCode')?.getAttribute('Value');
    return { kind: 'response', inResponseTo, success: code === SUCCESS };
  }
  const notOnOrAfter = Date.parse(signed.getAttribute('NotOnOrAfter') || '');
  if (!Number.isNaN(notOnOrAfter) && now - CLOCK_SKEW_MS >= notOnOrAfter) throw new SamlRefusal('LogoutRequest expired');
  const issued = Date.parse(signed.getAttribute('IssueInstant') ?? '');
  if (Number.isNaN(issued) || Math.abs(now - issued) > 10 * CLOCK_SKEW_MS) throw new SamlRefusal('LogoutRequest issued too far from now');
  const nameId = textOf(childElement(signed, ASSERTION_NS, 'NameID'));
  const id = signed.getAttribute('ID');
  if (!nameId || !id) throw new SamlRefusal('LogoutRequest without an ID or a NameID');
  return {
    kind: 'request',
    id,
    nameId,
    sessionIndex: textOf(childElement(signed, PROTOCOL_NS, 'SessionIndex')) || null,
    expiresAt: (Number.isNaN(notOnOrAfter) ? issued + 10 * CLOCK_SKEW_MS : notOnOrAfter) + CLOCK_SKEW_MS,
  };
}
