/**
 * The real backends some tests run against, and what the suite does without one: the test (or
 * the whole describe, when asked from its `before`) is skipped and the skip is recorded with the
 * missing program, so that the run ends with a summary of what ran, what was skipped and why
 * (test/helpers/peers-summary.ts prints it). Under CI (env CI set) a missing peer is a failure:
 * `npm run peers` (tools/peers.sh) installs them all, and CI runs it first.
 */
import fs from 'node:fs';
import { ETCD_BIN, KUBE_APISERVER_BIN } from './kubernetes.ts';
import { findOpa } from './opa.ts';
import { VICTORIA_LOGS_BIN } from './victoria-logs.ts';

const PEERS_COMMAND = 'npm run peers';

interface PeerCheck {
  /** What the summary calls it. */
  label: string;
  /** The programs it needs; it is present when they all exist. */
  programs: () => string[];
}

const PEERS = {
  opa: { label: 'OPA (opa eval)', programs: () => [findOpa() ?? 'opa on PATH or .tools/bin/opa'] },
  slapd: { label: 'OpenLDAP (slapd, ldap-utils)', programs: () => ['/usr/sbin/slapd', '/usr/bin/ldapadd'] },
  chromium: { label: 'chromium (browser tests)', programs: () => ['/usr/bin/chromium'] },
  prometheus: { label: 'Prometheus', programs: () => ['/usr/bin/prometheus', '/usr/bin/promtool'] },
  'victoria-metrics': { label: 'VictoriaMetrics and vmauth', programs: () => ['/usr/bin/victoria-metrics', '/usr/bin/vmauth'] },
  kubernetes: { label: 'kube-apiserver and etcd', programs: () => [KUBE_APISERVER_BIN, ETCD_BIN] },
  'victoria-logs': { label: 'VictoriaLogs', programs: () => [VICTORIA_LOGS_BIN] },
} satisfies Record<string, PeerCheck>;

export type Peer = keyof typeof PEERS;

/** The database a test may be bound to (TEST_DB, test/helpers/app.ts). */
type Database = 'mysql' | 'sqlite';
const TEST_DB: Database = process.env.TEST_DB === 'mysql' ? 'mysql' : 'sqlite';

/** One line of the record the summary reads: a suite or test that ran with its peer, or was skipped without it. */
export interface PeerRecord {
  peer: Peer | Database;
  ran: boolean;
  file: string;
  /** The tests it covers (all of a describe when asked from its `before`). */
  tests: number;
  /** What was missing. */
  reason?: string;
}

/** The file the records of this run are appended to: set once for the run by the summary plugin, shared by the parallel workers. */
export const RECORD_FILE_VARIABLE = 'GATEHOUSE_TEST_PEER_RECORD';

/**
 * TEST_WITHOUT_PEERS=all (or a list: slapd,opa) runs as if those peers were missing: what
 * `npm test` does on a machine without them.
 */
function hiddenPeers(): Set<string> {
  const names = (process.env.TEST_WITHOUT_PEERS ?? '').split(',').map((name) => name.trim());
  return new Set(names.includes('all') ? Object.keys(PEERS) : names.filter(Boolean));
}

/** The programs of `peer` that are missing; empty when it can run. */
function missingPrograms(peer: Peer): string[] {
  const programs = PEERS[peer].programs();
  if (hiddenPeers().has(peer)) return programs;
  return programs.filter((program) => !fs.existsSync(program));
}

export function peerAvailable(peer: Peer): boolean {
  return missingPrograms(peer).length === 0;
}

const DATABASES: Record<Database, { label: string; command: string }> = {
  mysql: { label: 'MariaDB-only tests', command: 'TEST_DB=mysql npm test' },
  sqlite: { label: 'SQLite-only tests', command: 'npm test (TEST_DB=sqlite, the default)' },
};

export function peerLabel(peer: Peer | Database): string {
  return peer in DATABASES ? DATABASES[peer as Database].label : PEERS[peer as Peer].label;
}

/** The command that makes the skipped tests of `peer` run. */
export function enablingCommand(peer: Peer | Database): string {
  return peer in DATABASES ? DATABASES[peer as Database].command : PEERS_COMMAND;
}

function record(entry: PeerRecord): void {
  const file = process.env[RECORD_FILE_VARIABLE];
  if (file) fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

/** The runnable asking (a test, or the `before` hook of a describe) and the tests it stands for. */
function scope(context: Mocha.Context): { file: string; tests: number } {
  // in a hook, `test` is the hook itself (and `currentTest` the suite's first test)
  const runnable = context.test as (Mocha.Runnable & { type?: string }) | undefined;
  if (runnable?.type === 'hook') {
    const suite = runnable.parent!;
    return { file: runnable.file ?? suite.file ?? '', tests: suite.total() };
  }
  return { file: runnable?.file ?? '', tests: 1 };
}

/**
 * Call first in a `before` (the whole describe) or in a test: returns when `peer` is installed;
 * else records the skip and skips, or fails under CI, naming what is missing.
 */
export function requirePeer(context: Mocha.Context, peer: Peer): void {
  const missing = missingPrograms(peer);
  const where = scope(context);
  if (missing.length === 0) {
    record({ peer, ran: true, ...where });
    return;
  }
  const reason = `missing ${missing.join(', ')}`;
  if (process.env.CI) throw new Error(`${peerLabel(peer)} is required under CI (${reason}): run ${enablingCommand(peer)} first`);
  record({ peer, ran: false, ...where, reason });
  context.skip();
}

/**
 * Call first in a `before` or a test that only means something on one database: on the other it is
 * skipped (under CI too: .ci/run runs the suite on both), and the skip recorded.
 */
export function requireDatabase(context: Mocha.Context, database: Database): void {
  const where = scope(context);
  if (TEST_DB === database) {
    record({ peer: database, ran: true, ...where });
    return;
  }
  record({ peer: database, ran: false, ...where, reason: `this run is on ${TEST_DB === 'mysql' ? 'MariaDB' : 'SQLite'}` });
  context.skip();
}
