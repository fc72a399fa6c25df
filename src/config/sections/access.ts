/** The variables of access control: the policy, its caches, its decision log and the quotas. */
import path from 'node:path';
import { choice, filePath, flag, fraction, integer, text, url } from '../kinds.ts';
import { ConfigError } from '../variable.ts';
import { Optional, type Variable } from '../variable.ts';

export const QUOTA_TARGETS = ['users', 'dashboards', 'connectors', 'api_keys', 'service_accounts', 'alert_rules', 'folders'] as const;
export type QuotaTarget = (typeof QUOTA_TARGETS)[number];

const quota = (name: string, meaning: string) =>
  integer(name, { default: -1, defaultText: name === 'QUOTA_USERS_PER_ORG' ? '`-1` (unlimited)' : undefined, min: -1, meaning });

/** The spec's variable of each target; api_keys counts the tokens of one service account. */
const quotaDefaults = {
  users: quota('QUOTA_USERS_PER_ORG', 'org members (people) per org'),
  service_accounts: quota('QUOTA_SERVICE_ACCOUNTS_PER_ORG', 'service accounts per org'),
  api_keys: quota('QUOTA_API_KEYS_PER_SA', 'live tokens per service account (the org quota target `api_keys`)'),
  dashboards: quota('QUOTA_DASHBOARDS_PER_ORG', 'dashboards per org'),
  connectors: quota('QUOTA_DATASOURCES_PER_ORG', 'connectors per org (quota target `connectors`)'),
  folders: quota('QUOTA_FOLDERS_PER_ORG', 'folders per org'),
  alert_rules: quota('QUOTA_ALERT_RULES_PER_ORG', 'alert rules per org'),
} satisfies Record<QuotaTarget, Variable<number>>;

export const access = {
  legacyAclEnabled: flag('LEGACY_ACL_ENABLED', {
    default: true,
    meaning: 'read the legacy dashboard ACL as a fallback in permission evaluation; `false` ignores it',
  }),
  authzRevisionPollMs: integer('AUTHZ_REVISION_POLL_MS', {
    default: 1000,
    min: 50,
    meaning: "how often an instance reads the policy change log's heads for the changes other instances committed (the bound on cross-instance staleness)",
  }),
  principalCacheTtlMs: integer('PRINCIPAL_CACHE_TTL_MS', {
    default: 1000,
    min: 0,
    meaning:
      "how long an instance reuses the session, API token and user rows behind a credential, and an org's team list (`GET /api/teams/search` without `query`), before reading them again; a revocation, disable, password change or team change made on the same instance shows on the next request, one made on another instance within this bound; `0` turns the caches off",
  }),
  authzVerifyDocuments: flag('AUTHZ_VERIFY_DOCUMENTS', {
    default: ({ nodeEnv }) => nodeEnv === 'test',
    defaultText: '`true` under `NODE_ENV=test`, else `false`',
    meaning:
      'after every commit, check each loaded policy document against a fresh build from the database and fail the transaction on a difference (a write that reported the wrong policy fragment); costs a document build per loaded org per commit, so it is for tests',
  }),
  authzMaxLoadedOrgs: integer('AUTHZ_MAX_LOADED_ORGS', {
    default: 256,
    min: 1,
    meaning: 'how many org policy documents an instance keeps in memory; the least recently used is dropped first and rebuilt from SQL when asked again',
  }),
  policyWasmPath: text('POLICY_WASM_PATH', {
    default: () => path.resolve('policies/build/authz.wasm'),
    defaultText: '`policies/build/authz.wasm`',
    trim: false,
    form: 'path',
    meaning: 'the compiled policy to load (unless `POLICY_BUNDLE_PATH` is set)',
  }),
  /** A signed OPA bundle loaded instead of POLICY_WASM_PATH, verified at boot and at each reload; null when off. */
  policyBundle: new Optional(
    {
      isOn: ({ env }) => !!(env.POLICY_BUNDLE_PATH?.trim() || env.POLICY_VERIFICATION_KEY?.trim()),
      requiredWhen: 'POLICY_BUNDLE_PATH or POLICY_VERIFICATION_KEY is set',
    },
    {
      path: text('POLICY_BUNDLE_PATH', {
        defaultText: '*(empty: load `POLICY_WASM_PATH`)*',
        form: 'path',
        meaning:
          "a signed OPA bundle (`npm run policy:build` with `POLICY_SIGNING_KEY`) loaded instead of `POLICY_WASM_PATH`, verified with `POLICY_VERIFICATION_KEY` at start and at each `POST /api/admin/policy/reload`: its signature, every file's hash, no file unlisted; a refused bundle stops the start (exit 2) or leaves the running policy in place (see [Policy as code](../policies/README.md#signed-bundles))",
      }),
      verificationKey: text('POLICY_VERIFICATION_KEY', {
        defaultText: '*(required with `POLICY_BUNDLE_PATH`)*',
        form: 'path',
        meaning: "the PEM public key (RSA for RS256/384/512, EC for ES256/384/512) the bundle's `.signatures.json` must verify with; read again at each reload",
      }),
    },
  ),
  /** Where authorize() decisions are logged (OPA's decision-log fields), null when off. */
  decisionLog: new Optional(
    {
      isOn: ({ env }) => !!env.DECISION_LOG?.trim(),
      requiredWhen: 'DECISION_LOG is set',
      check(decisionLog) {
        if (decisionLog.target === 'http' && !decisionLog.url) throw new ConfigError('DECISION_LOG_URL is required when DECISION_LOG=http');
      },
    },
    {
      target: choice('DECISION_LOG', ['file', 'stdout', 'http'], {
        defaultText: '*(empty: off)*',
        meaning:
          "log `authorize()` decisions with OPA's decision-log fields (see [Policy as code](../policies/README.md#decision-log)): JSON lines to a file or stdout, or `http`: gzip-compressed JSON arrays posted to `DECISION_LOG_URL` as OPA's decision-log plugin posts them ([operating](operating.md#decision-log-over-http)); anything else is a configuration error (exit 2)",
      }),
      /** The collector of `target: http`. */
      url: url('DECISION_LOG_URL', {
        default: null,
        defaultText: '*(required with `DECISION_LOG=http`)*',
        meaning:
          'where `DECISION_LOG=http` posts its batches (`POST`, `Content-Encoding: gzip`, a JSON array of decision events); an answer other than 2xx, or none, is retried with a backoff doubling from 0.5 s to 30 s',
      }),
      /** How many entries wait for the collector before new ones are dropped. */
      bufferSize: integer('DECISION_LOG_BUFFER_SIZE', {
        default: 10_000,
        min: 1,
        meaning:
          'how many decision entries `DECISION_LOG=http` keeps waiting for the collector; past it a new entry is dropped and counted (`gatehouse_decision_log_dropped_total`)',
      }),
      /** The file of `target: file`, appended to. */
      path: filePath('DECISION_LOG_PATH', {
        default: ({ dataDir }) => path.join(dataDir, 'decisions.log'),
        defaultText: '`$DATA_DIR/decisions.log`',
        show: (file, decisionLog) => ((decisionLog as { target: string }).target === 'file' ? file : null),
        meaning: 'the file of `DECISION_LOG=file`, appended to (its directory is created); one that cannot be written is a configuration error (exit 2)',
      }),
      /** The share of decisions logged, 0..1. */
      sample: fraction('DECISION_LOG_SAMPLE', { default: 1, meaning: 'the share of decisions logged (e.g. `0.1`: one in ten, at random)' }),
    },
  ),
  /** Default quota limits per target (-1 = unlimited). */
  quotaDefaults,
};
