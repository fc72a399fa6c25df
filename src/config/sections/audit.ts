/** The variables of the audit stream: where committed audit entries are sent, and how. */
import { choice, integer, list, REQUIRED, text, url } from '../kinds.ts';
import { ConfigError, Optional, REDACTED } from '../variable.ts';

export const AUDIT_STREAM_KINDS = ['victorialogs', 'loki', 'webhook'] as const;
export type AuditStreamKind = (typeof AUDIT_STREAM_KINDS)[number];

/** The header a webhook sink checks the HMAC-SHA256 of the body in (docs/operating.md#audit-stream). */
export const AUDIT_SIGNATURE_HEADER = 'X-Gatehouse-Signature';

/** `Name: value` entries; the header's own rules (no Host, no framing headers) are checked by the outbound layer when it sends. */
function headerEntries(entries: string[]): Array<{ name: string; value: string }> {
  return entries.map((entry) => {
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(name))
      throw new ConfigError('AUDIT_STREAM_HEADERS must be a comma-separated list of `Name: value` headers, got an entry without a valid name');
    return { name, value: entry.slice(colon + 1).trim() };
  });
}

/** The audit stream (AUDIT_STREAM set), null when off. */
export const auditStream = new Optional(
  {
    isOn: ({ env }) => !!env.AUDIT_STREAM?.trim(),
    requiredWhen: 'AUDIT_STREAM is set',
    check(stream) {
      const authorizations = [stream.bearerToken && 'AUDIT_STREAM_BEARER_TOKEN', stream.basicAuth && 'AUDIT_STREAM_BASIC_AUTH'].filter(Boolean);
      if (stream.headers.some((header) => header.name.toLowerCase() === 'authorization'))
        authorizations.push('an Authorization header in AUDIT_STREAM_HEADERS');
      if (authorizations.length > 1) throw new ConfigError(`only one of ${authorizations.join(' and ')} may set Authorization`);
      if (stream.basicAuth !== null && !stream.basicAuth.includes(':')) throw new ConfigError('AUDIT_STREAM_BASIC_AUTH must be `user:password`');
      if (stream.kind === 'webhook' && !stream.secret) throw new ConfigError('AUDIT_STREAM_SECRET is required when AUDIT_STREAM=webhook');
    },
  },
  {
    kind: choice('AUDIT_STREAM', AUDIT_STREAM_KINDS, {
      defaultText: '*(empty: off)*',
      meaning:
        'sends every committed audit entry to a log store or a webhook, at least once and in order per org (see [the audit stream](operating.md#audit-stream)); the variables below are read only when it is set, and a value other than these is a configuration error (exit 2)',
    }),
    url: url('AUDIT_STREAM_URL', {
      defaultText: REQUIRED,
      meaning:
        "where entries go: VictoriaLogs' and Loki's base URL (`/insert/jsonline` and `/loki/api/v1/push` are added), or the webhook's full URL. The outbound address policy does not apply to it: the operator chose it",
    }),
    bearerToken: text<null>('AUDIT_STREAM_BEARER_TOKEN', { default: null, secret: true, meaning: 'sent as `Authorization: Bearer <token>`' }),
    basicAuth: text<null>('AUDIT_STREAM_BASIC_AUTH', {
      default: null,
      secret: true,
      form: '`user:password`',
      meaning: 'basic auth credentials, `user:password`',
    }),
    headers: list('AUDIT_STREAM_HEADERS', {
      secret: true,
      form: 'comma-separated `Name: value` list',
      meaning: 'headers sent with every delivery, e.g. `AccountID: 12, ProjectID: 3` for a VictoriaLogs tenant or `X-Scope-OrgID: ops` for Loki',
      entries: headerEntries,
      show: (headers) => (headers.length > 0 ? REDACTED : null),
    }),
    secret: text<null>('AUDIT_STREAM_SECRET', {
      default: null,
      secret: true,
      meaning: `the key of the HMAC-SHA256 signature of each webhook body, sent in \`${AUDIT_SIGNATURE_HEADER}: sha256=<hex>\` (required for \`webhook\`)`,
    }),
    batchSize: integer('AUDIT_STREAM_BATCH_SIZE', { default: 500, min: 1, max: 10_000, meaning: 'most entries sent in one request' }),
    intervalMs: integer('AUDIT_STREAM_INTERVAL_MS', {
      default: 1000,
      min: 10,
      meaning: 'how often each instance looks for entries to send when the last look found none',
    }),
    maxBackoffMs: integer('AUDIT_STREAM_MAX_BACKOFF_MS', {
      default: 60_000,
      min: 10,
      meaning: 'the longest pause between attempts while the sink fails (the pause doubles from `AUDIT_STREAM_INTERVAL_MS` up to this)',
    }),
    maxAttempts: integer('AUDIT_STREAM_MAX_ATTEMPTS', {
      default: 5,
      min: 1,
      max: 1000,
      meaning:
        'how many times an entry the sink refuses as malformed (400, 413, 422) is sent alone before it is given up as a dead letter; an unreachable or failing sink (network errors, 5xx, 401, 403, 429) never uses them up',
    }),
  },
);
