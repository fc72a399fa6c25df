/**
 * The Loki the Loki connector's tests read: the in-test server of loki-double.ts (Loki is under
 * the AGPL and is neither built nor run here), holding fixed log lines for one tenant (sent as
 * `X-Scope-OrgID`; a request without it is 401 `no org id`), stopped by the test.
 */
import { startLokiDouble } from './loki-double.ts';

/** The tenant the log lines belong to (sent as `X-Scope-OrgID`), and one that has none. */
export const TENANT = 'gatehouse-tenant-7f3a';
export const OTHER_TENANT = 'gatehouse-tenant-empty';

/**
 * The lines of TENANT: `{job="checkout", level}` one per second from the instance's `t0` (unix
 * seconds, a whole minute shortly before start: the labels API looks at the last six hours by default).
 */
export const LINES = [
  { level: 'info', line: 'order 1001 placed' },
  { level: 'error', line: 'order 1002 payment declined' },
  { level: 'info', line: 'order 1003 placed' },
  { level: 'error', line: 'order 1004 payment declined' },
  { level: 'info', line: 'order 1005 placed' },
] as const;

export interface RunningLoki {
  url: string;
  /** The first line's time, unix seconds; line i is at t0 + i. */
  t0: number;
  stop(): Promise<void>;
}

/** Line i's timestamp as Loki returns it: nanoseconds, as a string. */
export const lineTimestamp = (t0: number, index: number) => `${BigInt(t0 + index) * 1_000_000_000n}`;

export async function startLoki(): Promise<RunningLoki> {
  const t0 = Math.floor(Date.now() / 60_000) * 60 - 60;
  const streams = ['info', 'error'].map((level) => ({
    labels: { job: 'checkout', level },
    entries: LINES.flatMap((entry, index): Array<[bigint, string]> => (entry.level === level ? [[BigInt(lineTimestamp(t0, index)), entry.line]] : [])),
  }));
  const double = await startLokiDouble({ [TENANT]: streams });
  return { url: double.url, t0, stop: double.stop };
}
