/**
 * Every environment variable of the service, declared once: the typed Config, the loader's
 * errors, the effective settings of GET /api/admin/settings and docs/configuration.md
 * (`npm run docs:config`) all come from here.
 */
import { access } from './sections/access.ts';
import { accounts } from './sections/accounts.ts';
import { auditStream } from './sections/audit.ts';
import { connectors } from './sections/connectors.ts';
import { ldap, saml } from './sections/directory.ts';
import { oauth } from './sections/oauth.ts';
import { service } from './sections/service.ts';
import { storage } from './sections/storage.ts';
import type { Infer, Members } from './variable.ts';

export interface Section {
  title: string;
  /** What the docs say before the section's table (Markdown). */
  intro?: string;
  members: Members;
}

/** The sections of docs/configuration.md, in order. */
export const SECTIONS: readonly Section[] = [
  { title: 'Service', members: service },
  { title: 'Database and data', members: storage },
  { title: 'Secrets, sessions and local accounts', members: accounts },
  { title: 'Access control and quotas', members: access },
  { title: 'Connectors and outbound requests', members: connectors },
  {
    title: 'Audit stream',
    intro: 'Off until `AUDIT_STREAM` is set; the other variables are read only then. See [the audit stream](operating.md#audit-stream).',
    members: { auditStream },
  },
  { title: 'LDAP', intro: 'See [LDAP](identity-providers.md#ldap) for the file `LDAP_CONFIG_FILE` names.', members: { ldap } },
  {
    title: 'SAML',
    intro: 'The variables after `SAML_ENABLED` are read only when it is `true`.',
    members: { saml },
  },
  {
    title: 'OAuth 2.0 logins',
    intro:
      'Three providers, each off until its `OAUTH_<P>_CLIENT_ID` is set (`<P>` is `CODEHOST`, `WORKSPACE` or `GENERIC`); the other variables of a provider are read only then. See [OAuth 2.0 logins](identity-providers.md#oauth-20-logins).',
    members: { oauth },
  },
];

export const schema = { ...service, ...storage, ...accounts, ...access, ...connectors, auditStream, ldap, saml, oauth };

export type Config = Infer<typeof schema>;
