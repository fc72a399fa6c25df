/**
 * The XML ground rules of every SAML message the service reads, before any field is trusted:
 * no DOCTYPE or entity declarations (entity expansion, external entities), no comments (a
 * comment splits a NameID's text so that what was signed and what is read differ, CVE-2017-11428),
 * no two elements with one ID (a signature reference must name exactly one element), and a
 * signature counts only when it sits directly in the element it signs and its one reference
 * covers that element: the fields are then read from the XML the signature verified, never from
 * the document around it (signature wrapping).
 */
import { constants as cryptoConstants, createPublicKey, verify as verifySignatureValue } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { C14nCanonicalization, ExclusiveCanonicalization, findAncestorNs, SignedXml } from 'xml-crypto';

export const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
export const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
const COMMENT_NODE = 8;
const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

/** Why a message is refused: `message` is safe to show, `reason` goes to the audit log. */
export class SamlRefusal extends Error {
  constructor(
    readonly reason: string,
    message = 'SAML login failed: the identity provider’s answer was refused',
  ) {
    super(message);
  }
}

/**
 * Bounds of a message's markup, checked on its text before it is parsed. xmldom's parse time
 * grows faster than the markup (60,000 empty elements in 240 KB: 0.25–0.45 s of the event loop;
 * 20,000 attributes on one element: 0.06–0.11 s; 5,000 nested elements each declaring a
 * namespace: 0.3–0.4 s), and the checks below walk the tree recursively. Within these bounds a
 * message parses in at most about 20 ms. A login response with its two signatures holds about 50
 * elements nested at most 8 deep; each group value adds an element and up to three attributes
 * (a type and the two namespaces some identity providers declare on every value), so 1,000
 * groups fit.
 */
const MAX_ELEMENTS = 4000;
const MAX_DEPTH = 32;
const MAX_ATTRIBUTES = 4000;
const MAX_ELEMENT_ATTRIBUTES = 64;

const GREATER_THAN = 0x3e;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
const ELEMENT_NAME_START = /^[\p{L}_:]$/u;

/** Refuses markup past the bounds above. A `<` in a CDATA section counts as a tag: it only over-counts. */
function checkMarkupBounds(xml: string): void {
  let elements = 0;
  let depth = 0;
  let attributes = 0;
  for (let i = xml.indexOf('<'); i !== -1 && i < xml.length; i = xml.indexOf('<', i + 1)) {
    const next = xml.charCodeAt(i + 1);
    if (next === SLASH) {
      depth -= 1;
      continue;
    }
    // a processing instruction, comment or CDATA section: no element
    if (!ELEMENT_NAME_START.test(xml.charAt(i + 1))) continue;
    elements += 1;
    depth += 1;
    if (elements > MAX_ELEMENTS) throw new SamlRefusal(`more than ${MAX_ELEMENTS} XML elements`);
    if (depth > MAX_DEPTH) throw new SamlRefusal(`XML nested deeper than ${MAX_DEPTH} elements`);
    const attributesBefore = attributes;
    let quote = 0;
    let j = i + 1;
    for (; j < xml.length; j++) {
      const code = xml.charCodeAt(j);
      if (quote) {
        if (code === quote) quote = 0;
      } else if (code === DOUBLE_QUOTE || code === SINGLE_QUOTE) quote = code;
      else if (code === EQUALS) {
        attributes += 1;
        if (attributes - attributesBefore > MAX_ELEMENT_ATTRIBUTES) throw new SamlRefusal(`an XML element with more than ${MAX_ELEMENT_ATTRIBUTES} attributes`);
        if (attributes > MAX_ATTRIBUTES) throw new SamlRefusal(`more than ${MAX_ATTRIBUTES} XML attributes`);
      } else if (code === GREATER_THAN) break;
    }
    if (xml.charCodeAt(j - 1) === SLASH) depth -= 1;
    i = j;
  }
}

export function parseXml(xml: string): Document {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlRefusal('DOCTYPE or entity declaration');
  checkMarkupBounds(xml);
  const fail = (why: string) => {
    throw new SamlRefusal(`malformed XML: ${why}`.slice(0, 300));
  };
  const doc = new DOMParser({ errorHandler: { warning: () => {}, error: fail, fatalError: fail } }).parseFromString(xml, 'text/xml');
  if (!doc.documentElement) throw new SamlRefusal('malformed XML: no root element');
  const ids = new Set<string>();
  const visit = (node: Node) => {
    if (node.nodeType === COMMENT_NODE) throw new SamlRefusal('XML comment in the message');
    if (node.nodeType === ELEMENT_NODE) {
      const id = (node as Element).getAttribute('ID');
      if (id) {
        if (ids.has(id)) throw new SamlRefusal(`two elements with the ID ${id.slice(0, 80)}`);
        ids.add(id);
      }
    }
    for (let child = node.firstChild; child; child = child.nextSibling) visit(child);
  };
  visit(doc);
  return doc;
}

/** The element children of `parent` with this namespace and local name. */
export function childElements(parent: Element, ns: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === ELEMENT_NODE && (child as Element).namespaceURI === ns && (child as Element).localName === localName) found.push(child as Element);
  }
  return found;
}

export function childElement(parent: Element, ns: string, localName: string): Element | undefined {
  return childElements(parent, ns, localName)[0];
}

/** Every element below `root` with this local name, in any namespace. */
export function descendantsNamed(root: Document | Element, localName: string): Element[] {
  return Array.from(root.getElementsByTagNameNS('*', localName));
}

export function textOf(element: Element | undefined): string | null {
  if (!element) return null;
  return (element.textContent ?? '').trim();
}

/**
 * The signed form of `element` when a signature that is its direct child verifies with
 * `certificate` and references `element` itself (and nothing else); null when it has no
 * signature. A signature that is present but does not verify is a refusal, not "unsigned".
 */
export function verifiedElement(xml: string, element: Element, certificate: string): Element | null {
  const signatures = childElements(element, DSIG_NS, 'Signature');
  if (signatures.length === 0) return null;
  if (signatures.length > 1) throw new SamlRefusal(`more than one signature on ${element.localName}`);
  const id = element.getAttribute('ID');
  if (!id) throw new SamlRefusal(`signed ${element.localName} without an ID`);
  const references = descendantsNamed(signatures[0]!, 'Reference');
  if (references.length !== 1 || references[0]!.getAttribute('URI') !== `#${id}`) {
    throw new SamlRefusal(`the signature of ${element.localName} does not reference it alone`);
  }
  if (!signatureValueVerifies(signatures[0]!, certificate))
    throw new SamlRefusal(`the signature of ${element.localName} does not verify with the identity provider's certificate`);
  const signed = new SignedXml({ publicCert: certificate });
  const verifies = () => {
    try {
      signed.loadSignature(signatures[0]!.toString());
      return signed.checkSignature(xml);
    } catch {
      return false;
    }
  };
  if (!verifies()) throw new SamlRefusal(`the signature of ${element.localName} does not verify with the identity provider's certificate`);
  const [reference] = signed.getSignedReferences();
  const root = reference ? parseXml(reference).documentElement : null;
  if (!root || root.localName !== element.localName || root.namespaceURI !== element.namespaceURI || root.getAttribute('ID') !== id) {
    throw new SamlRefusal(`the signature of ${element.localName} covers another element`);
  }
  return root;
}

/**
 * The canonicalizations xml-crypto applies to a SignedInfo. The "with comments" variants are left
 * out: parseXml refuses every comment, so they would canonicalize alike, and refusing them only
 * refuses more.
 */
const SIGNED_INFO_CANONICALIZATIONS: Record<string, new () => C14nCanonicalization | ExclusiveCanonicalization> = {
  'http://www.w3.org/2001/10/xml-exc-c14n#': ExclusiveCanonicalization,
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315': C14nCanonicalization,
};

/** xml-crypto's signature algorithms (HMAC stays off there and here), as node:crypto verifies them. */
const SIGNATURE_ALGORITHMS: Record<string, { digest: string; pss: boolean }> = {
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1': { digest: 'sha1', pss: false },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': { digest: 'sha256', pss: false },
  'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1': { digest: 'sha256', pss: true },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': { digest: 'sha512', pss: false },
};

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The one element named `localName` (in any namespace) within `signature`, when it is in the
 * signature namespace and a child of `parent`. xml-crypto takes the first such element it finds
 * anywhere in the signature, so with exactly one there is no second it could take instead.
 */
function soleSignaturePart(signature: Element, parent: Element, localName: string): Element | undefined {
  const found = descendantsNamed(signature, localName);
  const [part] = found;
  if (found.length !== 1 || !part || part.parentNode !== parent || part.namespaceURI !== DSIG_NS) return undefined;
  return part;
}

/**
 * Whether the SignatureValue of `signature` verifies over its canonical SignedInfo with
 * `certificate`. SignedInfo is a few hundred bytes, so this costs the same whatever the size of
 * the message, while xml-crypto's checkSignature re-parses the whole message and canonicalizes
 * what the references name before it compares the signature value: a forged message is refused
 * here first. Only a gate in front of checkSignature, which still checks everything: whatever is
 * unusual here (a second SignedInfo or SignatureValue, an algorithm xml-crypto would not take, a
 * value that is not base64) is refused, never settled differently from xml-crypto.
 */
function signatureValueVerifies(signature: Element, certificate: string): boolean {
  const signedInfo = soleSignaturePart(signature, signature, 'SignedInfo');
  if (!signedInfo) return false;
  const canonicalizationMethod = soleSignaturePart(signature, signedInfo, 'CanonicalizationMethod');
  const signatureMethod = soleSignaturePart(signature, signedInfo, 'SignatureMethod');
  const signatureValue = soleSignaturePart(signature, signature, 'SignatureValue');
  if (!canonicalizationMethod || !signatureMethod || !signatureValue) return false;
  const Canonicalization = SIGNED_INFO_CANONICALIZATIONS[canonicalizationMethod.getAttribute('Algorithm') ?? ''];
  const algorithm = SIGNATURE_ALGORITHMS[signatureMethod.getAttribute('Algorithm') ?? ''];
  if (!Canonicalization || !algorithm) return false;
  const valueText = signatureValue.firstChild;
  if (!valueText || valueText.nodeType !== TEXT_NODE || valueText.nextSibling) return false;
  const value = (valueText as Text).data.replace(/[ \t\r\n]/g, '');
  if (!value || !BASE64.test(value)) return false;
  try {
    // On a copy: exclusive canonicalization writes the namespaces an InclusiveNamespaces list
    // names onto the element it is given, and the document is read again after this check.
    const canonical = new Canonicalization().process(signedInfo.cloneNode(true) as Element, {
      // the XPath is evaluated from the node given: '.' is SignedInfo itself, no walk of the document
      ancestorNamespaces: findAncestorNs(signedInfo as unknown as Document, '.'),
      defaultNsForPrefix: SignedXml.defaultNsForPrefix,
    });
    const publicKey = createPublicKey(certificate);
    const key = algorithm.pss
      ? { key: publicKey, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: cryptoConstants.RSA_PSS_SALTLEN_DIGEST }
      : publicKey;
    return verifySignatureValue(algorithm.digest, Buffer.from(canonical.toString(), 'utf8'), key, Buffer.from(value, 'base64'));
  } catch {
    return false;
  }
}
