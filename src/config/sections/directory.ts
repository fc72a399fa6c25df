/** The variables of LDAP and SAML logins. */
import { filePath, flag, REQUIRED, text, url } from '../kinds.ts';
import { pem, requiredPem } from '../special.ts';
import { ConfigError, Optional } from '../variable.ts';

const linking = (name: string, who: string, what: string) =>
  flag(name, {
    default: false,
    meaning: `\`true\` lets ${who} without a link join the existing account holding ${what}, when nothing else guards that account (see [external accounts](identity-providers.md#external-accounts-and-linking))`,
  });

/** SVC_AUTH_LDAP_ENABLED and the TOML file of the LDAP servers; read by identity/providers/ldap. */
export const ldap = {
  enabled: flag('SVC_AUTH_LDAP_ENABLED', {
    default: false,
    meaning:
      '`true` checks logins against the LDAP servers of `LDAP_CONFIG_FILE` (see [LDAP](identity-providers.md#ldap)); a missing or bad file stops startup (exit 2)',
  }),
  configFile: filePath('LDAP_CONFIG_FILE', {
    default: 'config/ldap.toml',
    meaning: 'the LDAP configuration (TOML), read at startup and by `POST /api/admin/ldap/reload`',
  }),
  allowEmailLinking: linking('LDAP_ALLOW_EMAIL_LINKING', 'a directory entry', 'its email'),
};

const samlEnabled = flag('SAML_ENABLED', {
  default: false,
  meaning: '`true` turns SAML login on (see [SAML login](identity-providers.md#saml-login)); the variables below are then read',
});

const attribute = (name: string, fallback: string, meaning: string) => text(name, { default: fallback, meaning });

/** SAML login (SAML_ENABLED=true), null when off. */
export const saml = new Optional(
  {
    isOn: (ctx) => samlEnabled.read(ctx),
    switch: samlEnabled,
    requiredWhen: 'SAML_ENABLED=true',
    check(saml) {
      if (saml.certificate && !saml.privateKey) throw new ConfigError('SAML_CERTIFICATE needs SAML_PRIVATE_KEY, the key it certifies');
    },
  },
  {
    /** AuthnRequests go there. */
    entryPoint: url('SAML_ENTRY_POINT', {
      defaultText: REQUIRED,
      meaning: "the identity provider's sign-on URL: AuthnRequests go there (HTTP-Redirect binding)",
    }),
    /** Where single logout sends LogoutRequests. */
    logoutUrl: url('SAML_LOGOUT_URL', {
      default: ({ env }) => env.SAML_ENTRY_POINT?.trim() ?? '',
      defaultText: '`SAML_ENTRY_POINT`',
      meaning: "the identity provider's single-logout URL: LogoutRequests and LogoutResponses go there",
    }),
    /** This service provider's entity id: the audience assertions must name. */
    issuer: text('SAML_ISSUER', { defaultText: REQUIRED, meaning: "this service provider's entity id; assertions must name it as their audience" }),
    /** The assertion consumer URL as the browser reaches it. */
    callbackUrl: url('SAML_CALLBACK_URL', {
      defaultText: REQUIRED,
      meaning:
        'the assertion consumer URL as browsers reach it, e.g. `https://gatehouse.example.com/api/saml/acs`; assertions must name it as recipient. The single-logout callback is the sibling `…/slo/callback`',
    }),
    idpCert: requiredPem('SAML_IDP_CERT', 'certificate', {
      meaning: "the identity provider's signing certificate: a file path, or the PEM itself (line breaks real or written `\\n`)",
    }),
    /** When set, the Issuer every response and assertion must carry. */
    idpIssuer: text<null>('SAML_IDP_ISSUER', { default: null, meaning: 'when set, the Issuer every response, assertion and logout message must carry' }),
    /** Signs AuthnRequests and LogoutRequests when set. */
    privateKey: pem('SAML_PRIVATE_KEY', 'private key', {
      secret: true,
      meaning: "this service's private key (path or inline PEM); when set, AuthnRequests, LogoutRequests and LogoutResponses are signed",
    }),
    /** The certificate of that key, published in the metadata. */
    certificate: pem('SAML_CERTIFICATE', 'certificate', { meaning: 'the certificate of `SAML_PRIVATE_KEY` (path or inline PEM), published in the metadata' }),
    /** The assertion itself must be signed, a signed response is not enough. */
    wantAssertionsSigned: flag('SAML_WANT_ASSERTIONS_SIGNED', {
      default: true,
      meaning:
        'the assertion itself must be signed; `false` also accepts a signed response around an unsigned assertion (an unsigned response with an unsigned assertion is always refused)',
    }),
    allowEmailLinking: linking('SAML_ALLOW_EMAIL_LINKING', 'a NameID', 'the asserted email'),
    /** Which assertion attribute carries each user field; `NameID` names the subject's NameID. */
    attributeMapping: {
      login: attribute(
        'SAML_ATTRIBUTE_MAPPING_LOGIN',
        'NameID',
        "the attribute holding the login of a new user (`NameID`: the subject's NameID); kept to letters, digits and `._@+-`, made unique with a suffix",
      ),
      email: attribute('SAML_ATTRIBUTE_MAPPING_EMAIL', 'email', 'the attribute holding the email'),
      name: attribute('SAML_ATTRIBUTE_MAPPING_NAME', 'displayName', 'the attribute holding the display name'),
      /** Group names for team sync into the default org; null = no sync. */
      groups: text<null>('SAML_ATTRIBUTE_MAPPING_GROUPS', {
        default: null,
        meaning: 'the attribute holding group names: when set, team sync into the default org at each login',
      }),
    },
  },
);
