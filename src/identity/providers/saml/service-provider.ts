/**
 * The service as a SAML service provider, through samlify: its metadata, and the AuthnRequests
 * and LogoutRequests it sends (HTTP-Redirect binding, signed when SAML_PRIVATE_KEY is set).
 * Answers from the identity provider are read by response.ts and logout.ts, which apply stricter
 * rules than samlify's own parsers (audience, recipient, InResponseTo, one assertion, signed
 * assertions); the SAML schemas are checked first (schema.ts), for samlify too.
 */
import saml from 'samlify';
import type { SamlConfig } from '../../../config.ts';
import { isValidSamlXml } from './schema.ts';
import { SamlRefusal } from './xml.ts';

saml.setSchemaValidator({
  validate: async (xml: string) => {
    if (!(await isValidSamlXml(xml))) throw new Error('ERR_INVALID_XML');
    return 'SUCCESS_VALIDATE_XML';
  },
});

const { binding, format } = saml.Constants.namespace;
const SIGNATURE_ALGORITHM = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

/** The single-logout endpoint beside the assertion consumer URL (`…/api/saml/acs` → `…/api/saml/slo/callback`). */
export function logoutCallbackUrl(settings: SamlConfig): string {
  return new URL('slo/callback', settings.callbackUrl).toString();
}

export interface ServiceProvider {
  settings: SamlConfig;
  metadata(): string;
  /**
   * The URL that sends the browser to the identity provider with a new AuthnRequest, and its id.
   * No RelayState: where the browser goes afterwards is kept with the request id.
   */
  loginRequest(): { id: string; url: string };
  /** The URL of a LogoutRequest for the subject of a SAML session, and its id. */
  logoutRequest(subject: { nameId: string; sessionIndex: string | null }): { id: string; url: string };
  /** The URL that answers an identity provider's LogoutRequest. */
  logoutResponse(inResponseTo: string): string;
}

export function buildServiceProvider(settings: SamlConfig): ServiceProvider {
  const sp = saml.ServiceProvider({
    entityID: settings.issuer,
    assertionConsumerService: [{ Binding: binding.post, Location: settings.callbackUrl }],
    singleLogoutService: [{ Binding: binding.post, Location: logoutCallbackUrl(settings) }],
    nameIDFormat: [format.emailAddress, format.persistent, format.unspecified],
    wantAssertionsSigned: settings.wantAssertionsSigned,
    authnRequestsSigned: !!settings.privateKey,
    requestSignatureAlgorithm: SIGNATURE_ALGORITHM,
    ...(settings.privateKey && { privateKey: settings.privateKey }),
    ...(settings.certificate && { signingCert: settings.certificate }),
  });
  const idp = saml.IdentityProvider({
    // samlify needs a name; the identity provider is recognised by its certificate (and SAML_IDP_ISSUER when set).
    entityID: settings.idpIssuer ?? settings.entryPoint,
    signingCert: settings.idpCert,
    wantAuthnRequestsSigned: !!settings.privateKey,
    wantLogoutRequestSigned: !!settings.privateKey,
    wantLogoutResponseSigned: !!settings.privateKey,
    singleSignOnService: [{ Binding: binding.redirect, Location: settings.entryPoint }],
    singleLogoutService: [{ Binding: binding.redirect, Location: settings.logoutUrl }],
  });
  return {
    settings,
    metadata: () => sp.getMetadata(),
    loginRequest() {
      const { id, context } = sp.createLoginRequest(idp, 'redirect');
      return { id, url: context };
    },
    logoutRequest(subject) {
      const { id, context } = sp.createLogoutRequest(idp, 'redirect', { logoutNameID: subject.nameId, sessionIndex: subject.sessionIndex ?? undefined });
      return { id, url: context };
    },
    logoutResponse(inResponseTo) {
      return sp.createLogoutResponse(idp, { extract: { request: { id: inResponseTo } } }, 'redirect').context;
    },
  };
}

/** The schema check of an incoming message: valid SAML 2.0 protocol XML, or a refusal. */
export async function assertSchemaValid(xml: string): Promise<void> {
  if (!(await isValidSamlXml(xml))) throw new SamlRefusal('not valid SAML 2.0 XML (schema)');
}
