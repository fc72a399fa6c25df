/** The variables of secrets, sessions, local logins and the first administrator. */
import { DEFAULT_HASH_CONCURRENCY, DEFAULT_HASH_QUEUE } from '../../crypto/password.ts';
import { flag, integer, list, text, url } from '../kinds.ts';
import { generatedSecret, legacyApiKeys } from '../special.ts';
import { ConfigError, Optional, Variable } from '../variable.ts';

const ROTATABLE_SECRETS = ['JWT_SECRET', 'SECRET_KEY'] as const;

export const MFA_REQUIRED_FOR = ['server-admins', 'all'] as const;
export type MfaRequiredFor = (typeof MFA_REQUIRED_FOR)[number];

const mfaRequiredFor = new Variable<MfaRequiredFor | null>({
  name: 'MFA_REQUIRED_FOR',
  form: '`server-admins`, `all` or empty',
  defaultText: "*(empty: a second factor is each user's choice)*",
  meaning:
    'whose password (local or LDAP) login must be followed by a second factor: a user it names who has none is signed in with a session that can only enrol one (`/api/user/mfa…`), read `GET /api/user` and log out; every other API call answers 403 `{message, mfaEnrolmentRequired: true}`. OAuth and SAML logins are left to their identity provider. See [Second factors](mfa.md)',
  read({ env }) {
    const raw = env.MFA_REQUIRED_FOR?.trim().toLowerCase();
    if (!raw) return null;
    const value = MFA_REQUIRED_FOR.find((candidate) => candidate === raw);
    if (!value) throw new ConfigError(`MFA_REQUIRED_FOR must be server-admins, all or empty, got "${env.MFA_REQUIRED_FOR}"`);
    return value;
  },
});

export const accounts = {
  secretKey: generatedSecret(
    'SECRET_KEY',
    "encrypts secrets at rest (AES-256-GCM): the LLM API key of the platform settings, the OAuth providers' tokens and TOTP secrets now, connector credentials later; also signs second-factor login challenges; required in production",
  ),
  jwtSecret: generatedSecret(
    'JWT_SECRET',
    'signs (HMAC-SHA256) the `svc_session` cookie value, so a forged or foreign cookie is refused before any database lookup and a new secret ends every session; also the short-lived OAuth state cookie; required in production',
  ),
  rotateSecrets: list<(typeof ROTATABLE_SECRETS)[number]>('ROTATE_SECRETS', {
    form: 'comma-separated `JWT_SECRET`, `SECRET_KEY`',
    meaning:
      "this boot adopts the instance's value of each as the one every instance on the database must share (see multi-instance in the README's Operating section); set it only for the rotation",
    entries: (names) =>
      names.map((name) => {
        const secret = ROTATABLE_SECRETS.find((candidate) => candidate === name);
        if (!secret) throw new ConfigError(`ROTATE_SECRETS names JWT_SECRET or SECRET_KEY, got "${name}"`);
        return secret;
      }),
  }),
  rootUrl: url<null>('ROOT_URL', {
    default: null,
    defaultText: '*(empty: passkeys are off)*',
    meaning:
      'the address browsers reach the service at, e.g. `https://gatehouse.example.com`; passkeys (WebAuthn) are bound to its host name (the relying party id) and accept ceremonies of its origin only. See [Second factors](mfa.md)',
    shape: (value) => new URL(value).origin,
  }),
  mfaRequiredFor,
  disableLoginForm: flag('DISABLE_LOGIN_FORM', {
    default: false,
    meaning: '`true` hides the local login form and refuses `POST /api/login` (403); local accounts stay (LDAP logins use the same form, so they stop too)',
  }),
  /** How many scrypt derivations run at once, and how many more may wait (beyond: 503). */
  passwordHashing: {
    concurrency: integer('PASSWORD_HASH_CONCURRENCY', {
      default: DEFAULT_HASH_CONCURRENCY,
      defaultText: 'cores − 1 (at least 1)',
      min: 1,
      meaning:
        'how many password hashes (scrypt: logins, password changes, new users) run at once; the rest wait their turn, so a burst of logins leaves a core to everyone else',
    }),
    queue: integer('PASSWORD_HASH_QUEUE', {
      default: DEFAULT_HASH_QUEUE,
      min: 0,
      meaning:
        'how many more may wait; beyond that a login (or password change) is answered 503 `too many password checks at once: retry in a moment` with `Retry-After: 1` at once, and costs no lockout attempt',
    }),
  },
  session: {
    maxLifetimeMs: integer('SESSION_MAX_LIFETIME_MS', {
      default: 2_592_000_000,
      defaultText: '`2592000000` (30 days)',
      min: 1,
      meaning: "a session's hard cap from creation",
    }),
    idleTimeoutMs: integer('SESSION_IDLE_TIMEOUT_MS', {
      default: 604_800_000,
      defaultText: '`604800000` (7 days)',
      min: 1,
      meaning: 'a session expires after this long without a request',
    }),
    rotationIntervalMs: integer('SESSION_ROTATION_INTERVAL_MS', {
      default: 600_000,
      defaultText: '`600000` (10 minutes)',
      min: 1,
      meaning: "a session's token is replaced after this much use",
    }),
    rotationGraceMs: integer('SESSION_ROTATION_GRACE_MS', {
      default: 30_000,
      defaultText: '`30000` (30 seconds)',
      min: 0,
      meaning: 'how long the replaced token still works (requests in flight)',
    }),
    cookieSecure: flag('SESSION_COOKIE_SECURE', { default: false, meaning: '`true` marks `svc_session` Secure (TLS terminated in front of the service)' }),
    invalidateAllOnBoot: flag('INVALIDATE_ALL_SESSIONS_ON_BOOT', {
      default: false,
      meaning: '`true` deletes every session once at boot (audited as `session.revoked_all`)',
    }),
  },
  /** The first administrator, created at boot while no user exists; null unless both its email and password are set. */
  seedAdmin: new Optional(
    { isOn: ({ env }) => !!env.SEED_ADMIN_EMAIL?.trim() && !!env.SEED_ADMIN_PASSWORD, requiredWhen: 'SEED_ADMIN_EMAIL is set' },
    {
      email: text('SEED_ADMIN_EMAIL', {
        form: 'email',
        meaning: 'with `SEED_ADMIN_PASSWORD` (≥ 12 characters), creates the first administrator at boot while no user exists',
      }),
      password: text('SEED_ADMIN_PASSWORD', { secret: true, meaning: 'see above; a shorter password seeds nothing (and says so in the log)' }),
      login: text('SEED_ADMIN_LOGIN', { default: 'admin', meaning: 'login of the seeded administrator' }),
      name: text('SEED_ADMIN_NAME', {
        default: ({ env }) => env.SEED_ADMIN_LOGIN?.trim() || 'admin',
        defaultText: 'the login',
        meaning: 'display name of the seeded administrator',
      }),
    },
  ),
  apiKeys: legacyApiKeys(
    'API_KEYS',
    'deprecated legacy keys: name of letters, digits, `.`, `_`, `-` (at most 100, unique); role Admin, Editor or Viewer; key of 16+ characters without spaces, unique, not starting with `svc_` (it may contain `:`). `POST /api/serviceaccounts/migrate` turns each into a hidden service account `legacy-<name>` of org_main whose token is that key, so old clients keep working. An invalid entry stops startup with the entry named (never its key)',
  ),
};
