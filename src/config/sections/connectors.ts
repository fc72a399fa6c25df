/** The variables of the requests the service makes to backends, and of the ops connector. */
import { ALLOWED_NETWORKS_VARIABLE } from '../../outbound/address-policy.ts';
import { integer } from '../kinds.ts';
import { ipRanges } from '../special.ts';

export const connectors = {
  connectorAllowedNetworks: ipRanges(
    ALLOWED_NETWORKS_VARIABLE,
    'cidr',
    "CIDRs the service may connect to although the outbound address policy refuses them (loopback, link-local and cloud metadata `169.254.0.0/16`/`fe80::/10`, unspecified, multicast, the service's own addresses), e.g. `127.0.0.0/8,::1/128` for local development; the policy applies to the address each connection resolves to",
  ),
  opsPlanTtlMs: integer('OPS_PLAN_TTL_MS', {
    default: 3_600_000,
    defaultText: '`3600000` (1 hour)',
    min: 1,
    meaning: 'how long an ops plan waits for its approval; then it expires (see "Ops connector (Kubernetes): plans" in the README)',
  }),
  /** Limits of every request the service makes to a backend. */
  outbound: {
    connectTimeoutMs: integer('OUTBOUND_CONNECT_TIMEOUT_MS', {
      default: 5_000,
      min: 1,
      meaning: 'how long a request to a backend may wait for its connection (then 504)',
    }),
    timeoutMs: integer('OUTBOUND_TIMEOUT_MS', { default: 30_000, min: 1, meaning: 'how long a request to a backend may take in all (then 504)' }),
    maxResponseBytes: integer('OUTBOUND_MAX_RESPONSE_BYTES', {
      default: 10 * 1024 * 1024,
      min: 1024,
      meaning: 'largest backend response the service reads (larger is 502; the connector proxy cuts a streamed answer there)',
    }),
  },
  opsReadMaxBytes: integer('OPS_READ_MAX_BYTES', {
    default: 1024 * 1024,
    min: 1024,
    meaning: "largest answer of an ops connector's read: a list is cut to fit and says `truncated`, logs are cut by the cluster",
  }),
};
