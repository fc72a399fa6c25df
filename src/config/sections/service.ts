/** The variables of the process itself: where it listens, what it logs, the requests it takes. */
import { choice, flag, integer, list, text } from '../kinds.ts';
import { ipRanges } from '../special.ts';
import { NODE_ENVS, Variable, type NodeEnv } from '../variable.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** RATE_LIMIT_PER_MINUTE outside NODE_ENV=test; the test suite's clock stands still, so there it is off unless set. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/** NODE_ENV: anything but `production` or `test` is development, as node's tools take it. */
export const nodeEnv = new Variable<NodeEnv>({
  name: 'NODE_ENV',
  form: NODE_ENVS.map((name) => `\`${name}\``).join(', '),
  defaultText: '`development`',
  meaning: '`production` makes `SECRET_KEY` and `JWT_SECRET` mandatory; `test` sets the test defaults said below; any other value is `development`',
  read: ({ env }) => (env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development'),
});

export const service = {
  env: nodeEnv,
  host: text('HOST', {
    default: '',
    defaultText: '*(empty: every interface)*',
    form: 'address',
    meaning: 'the address to listen on, e.g. `127.0.0.1` to accept local connections only',
  }),
  port: integer('PORT', {
    default: 3000,
    min: 0,
    max: 65535,
    meaning: 'HTTP port (0 picks a free one); a port in use is a configuration error (exit 2)',
  }),
  logLevel: choice('LOG_LEVEL', LOG_LEVELS, {
    default: ({ nodeEnv }) => (nodeEnv === 'test' ? 'silent' : 'info'),
    defaultText: '`info` (`silent` under `NODE_ENV=test`)',
    meaning: 'pino log level; anything else is a configuration error (exit 2)',
  }),
  metricsToken: text<null>('METRICS_TOKEN', {
    default: null,
    secret: true,
    defaultText: '*(empty: `/metrics` is public)*',
    meaning: 'when set, `GET /metrics` answers only to `Authorization: Bearer <METRICS_TOKEN>` (else 401)',
  }),
  shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', {
    default: 10_000,
    min: 0,
    meaning:
      'on SIGTERM or SIGINT, how long requests in flight may finish before their connections are closed and the process exits (code 1; 0 when they all finished)',
  }),
  bodyLimitBytes: integer('BODY_LIMIT_BYTES', {
    default: 1024 * 1024,
    min: 1024,
    meaning:
      'largest accepted JSON body; larger is 413 (a body nested deeper than 64 levels, or with an object of more than 1,000 members, is 400 whatever its size)',
  }),
  rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', {
    default: ({ nodeEnv }) => (nodeEnv === 'test' ? 0 : DEFAULT_RATE_LIMIT_PER_MINUTE),
    defaultText: `\`${DEFAULT_RATE_LIMIT_PER_MINUTE}\` (\`0\` under \`NODE_ENV=test\`)`,
    min: 0,
    meaning:
      'requests per minute (fixed windows of a clock minute) per API token, per signed-in user (all sessions together) and per client address for anonymous requests; beyond it `429` `{message}` with `Retry-After` (the seconds left in the window). Counted in memory, exact on one instance, and shared by the instances through the database every `RATE_LIMIT_SYNC_MS` (see the rate limit in docs/operating.md for the bound with several). `0` turns it off. Exempt: `/api/health`, `/api/health/ready`, `/metrics` and `POST /api/login` (which has its own lockout); a request refused by authentication (401) is not counted',
  }),
  rateLimitSyncMs: integer('RATE_LIMIT_SYNC_MS', {
    default: 250,
    min: 10,
    max: 60_000,
    meaning:
      "how often an instance adds the requests it counted to the database (one statement for every caller counted meanwhile) and reads back every instance's totals; with several instances a caller may get past the limit by what the others admitted in about two of these slices",
  }),
  rateLimitMaxKeys: integer('RATE_LIMIT_MAX_KEYS', {
    default: 100_000,
    min: 100,
    max: 10_000_000,
    meaning:
      'most callers (tokens, users, addresses) whose counts an instance keeps in memory, about 160 bytes each (16 MB at the default); beyond it the least recently seen is dropped, and its count is read back from the database at its next flush',
  }),
  trustedProxies: ipRanges(
    'TRUSTED_PROXIES',
    'address-or-cidr',
    "proxy addresses and CIDRs, IPv4 or IPv6 (`10.0.0.0/8, ::1, fd00::/8`); a malformed entry stops startup (exit code 2, the entry named); only when the socket peer is in one of them is the client address taken from `X-Forwarded-For` (for the login lockout and the audit log), the service's public origin from `X-Forwarded-Proto` and `X-Forwarded-Host` (for the CSRF check), and the request id from `X-Request-Id` (for the logs)",
  ),
  corsOrigins: list('CORS_ORIGINS', {
    form: 'comma-separated origins',
    meaning:
      "browser origins allowed to call the API with cookies; empty or `*` lets any origin call it without credentials; a cookie-authenticated change is accepted only from the service's own origin or a listed one (CSRF)",
    entries: (origins) => origins.filter((origin) => origin !== '*'),
  }),
  validateResponses: flag('RESPONSE_VALIDATION', {
    default: false,
    meaning:
      'development and tests (the suite sets it): every answer is checked against the response schemas its route declares (an undeclared status or field is a 500 naming the route and the field), see "API contract" in the README',
  }),
};
