/**
 * The answers of a Loki read sent once per label rule, merged into the answer of their union
 * (label rules under which no one LogQL query reads exactly what they let through), without I/O:
 * log lines as one set of streams, streams with the same labels as one, each line once (by its
 * stream's labels, timestamp and text), ordered by the request's direction and cut to its limit;
 * label names or values as their sorted union. Each rule's answer holds its first `limit` lines
 * in that order, so the first `limit` of their union are among them: the merge is exact.
 */
import type { DecodedAnswer } from './answers.ts';

export interface MergeJob {
  /**
   * `result`: the service's streams result (`{resultType, streams: [{labels, entries}]}`);
   * `envelope`: Loki's own answer to a log query (`{status, data: {resultType, result: [{stream, values}], stats}}`);
   * `names`: Loki's answer to a labels or label-values request (`{status, data?: [names]}`).
   */
  kind: 'result' | 'envelope' | 'names';
  direction: 'backward' | 'forward';
  limit: number;
  parts: Uint8Array[];
}

interface Line {
  labels: Record<string, string>;
  key: string;
  time: bigint;
  /** The entry as the backend gave it: `[timestamp, line]`, or with structured metadata after. */
  entry: unknown[];
}

const keyOf = (labels: Record<string, string>) =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((name) => [name, labels[name]]),
  );

class NotMergeable extends Error {}

function parse(part: Uint8Array): Record<string, unknown> {
  const parsed = JSON.parse(Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString('utf8')) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new NotMergeable('not a JSON object');
  return parsed as Record<string, unknown>;
}

function timeOf(value: unknown): bigint {
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value)) throw new NotMergeable('an entry without a timestamp');
  return BigInt(value);
}

/** The lines of every part, each once, in the direction's order (ties keep the parts' order), the first `limit`. */
function mergeLines(streamsOfParts: Array<Array<{ labels: Record<string, string>; entries: unknown[] }>>, job: MergeJob): Line[] {
  const seen = new Set<string>();
  const lines: Line[] = [];
  for (const streams of streamsOfParts) {
    for (const { labels, entries } of streams) {
      if (!labels || typeof labels !== 'object' || !Array.isArray(entries)) throw new NotMergeable('a stream without labels or entries');
      const key = keyOf(labels);
      for (const entry of entries) {
        if (!Array.isArray(entry)) throw new NotMergeable('an entry that is not an array');
        const identity = JSON.stringify([key, entry[0], entry[1]]);
        if (seen.has(identity)) continue;
        seen.add(identity);
        lines.push({ labels, key, time: timeOf(entry[0]), entry });
      }
    }
  }
  const forward = job.direction === 'forward';
  lines.sort((a, b) => (a.time === b.time ? 0 : a.time < b.time === forward ? -1 : 1));
  return lines.slice(0, job.limit);
}

/** The lines grouped by stream, streams in the order of their first line. */
function grouped(lines: Line[]): Array<{ labels: Record<string, string>; entries: unknown[][] }> {
  const streams = new Map<string, { labels: Record<string, string>; entries: unknown[][] }>();
  for (const line of lines) {
    let stream = streams.get(line.key);
    if (!stream) streams.set(line.key, (stream = { labels: line.labels, entries: [] }));
    stream.entries.push(line.entry);
  }
  return [...streams.values()];
}

/** Loki's query statistics of the parts, added up: each number the sum of the parts', anything else the first part's. */
export function addedStats(all: unknown[]): unknown {
  const present = all.filter((stats) => stats !== undefined);
  if (present.length === 0) return undefined;
  if (present.every((stats) => typeof stats === 'number')) return (present as number[]).reduce((a, b) => a + b, 0);
  const [first] = present;
  if (!first || typeof first !== 'object' || Array.isArray(first)) return first;
  const sum: Record<string, unknown> = {};
  for (const name of Object.keys(first))
    sum[name] = addedStats(present.map((stats) => (stats && typeof stats === 'object' ? (stats as Record<string, unknown>)[name] : undefined)));
  return sum;
}

function mergeEnvelopes(parsed: Array<Record<string, unknown>>, job: MergeJob): unknown {
  const data = parsed.map((answer) => {
    const inner = answer.data as { resultType?: unknown; result?: unknown; stats?: unknown } | undefined;
    if (answer.status !== 'success' || !inner || inner.resultType !== 'streams' || !Array.isArray(inner.result)) throw new NotMergeable('not a streams answer');
    return inner;
  });
  const streams = data.map((inner) =>
    (inner.result as Array<{ stream?: Record<string, string>; values?: unknown[] }>).map(({ stream, values }) => ({
      labels: stream ?? {},
      entries: values ?? [],
    })),
  );
  const result = grouped(mergeLines(streams, job)).map(({ labels, entries }) => ({ stream: labels, values: entries }));
  const stats = addedStats(data.map((inner) => inner.stats));
  return { ...parsed[0], data: { ...data[0], resultType: 'streams', result, ...(stats !== undefined && { stats }) } };
}

function mergeResults(parsed: Array<Record<string, unknown>>, job: MergeJob): unknown {
  const streams = parsed.map((result) => {
    if (result.resultType !== 'streams' || !Array.isArray(result.streams)) throw new NotMergeable('not a streams result');
    return result.streams as Array<{ labels: Record<string, string>; entries: unknown[] }>;
  });
  return { resultType: 'streams', streams: grouped(mergeLines(streams, job)) };
}

function mergeNames(parsed: Array<Record<string, unknown>>): unknown {
  const names = new Set<string>();
  for (const answer of parsed) {
    if (answer.status !== 'success' || (answer.data !== undefined && !Array.isArray(answer.data))) throw new NotMergeable('not a labels answer');
    for (const name of (answer.data as unknown[] | undefined) ?? []) names.add(String(name));
  }
  // Loki leaves `data` out when there is no name
  return { status: 'success', ...(names.size > 0 && { data: [...names].sort() }) };
}

/** The merged answer's JSON, or a 502 when a part is not an answer of the kind asked (a backend that answered otherwise). */
export function mergeAnswers(job: MergeJob): DecodedAnswer {
  let merged: unknown;
  try {
    const parsed = job.parts.map(parse);
    merged = job.kind === 'names' ? mergeNames(parsed) : job.kind === 'envelope' ? mergeEnvelopes(parsed, job) : mergeResults(parsed, job);
  } catch (err) {
    if (err instanceof NotMergeable || err instanceof SyntaxError)
      return { failure: { status: 502, message: `backend answers could not be merged: ${err.message}` } };
    throw err;
  }
  return { json: new TextEncoder().encode(JSON.stringify(merged)) };
}
