/**
 * What the audit stream tests send to: a recording proxy in front of a real sink (it passes
 * each request on and keeps the entries in the order they went through, and can be "down":
 * connections reset), and a receiver that answers as the test says (a webhook, Loki's push API).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { RunningVictoriaLogs } from './victoria-logs.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  /** The requests it took (answered 2xx), in order. */
  requests: ReceivedRequest[];
  /** The requests it refused. */
  refused: ReceivedRequest[];
  /** Decides each answer (default 204); `down` resets every connection instead. */
  answer: (request: ReceivedRequest) => { status: number; body?: string };
  down: boolean;
  /** How long each answer takes. */
  delayMs: number;
  /** The most requests it held at once. */
  maxInFlight: number;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A sink played by the test. */
export async function startReceiver(): Promise<Receiver> {
  let inFlight = 0;
  const receiver: Receiver = {
    url: '',
    requests: [],
    refused: [],
    answer: () => ({ status: 204 }),
    down: false,
    delayMs: 0,
    maxInFlight: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer(async (req, res) => {
    if (receiver.down) return req.socket.destroy();
    inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: await readBody(req) };
    if (receiver.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, receiver.delayMs));
    const { status, body } = receiver.answer(request);
    if (status >= 200 && status < 300) receiver.requests.push(request);
    else receiver.refused.push(request);
    inFlight--;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body ?? '');
  });
  receiver.url = await listen(server);
  return receiver;
}

export interface RecordingProxy {
  url: string;
  /** Each line that reached the sink and was taken (2xx), parsed, in the order they went through. */
  taken: Array<Record<string, any>>;
  down: boolean;
  close(): Promise<void>;
}

/** Passes requests on to `target`, recording the JSON lines of each one the target took. */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const proxy: RecordingProxy = {
    url: '',
    taken: [],
    down: false,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer(async (req, res) => {
    if (proxy.down) return req.socket.destroy();
    const body = await readBody(req);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body });
    const text = await answer.text();
    if (answer.status >= 200 && answer.status < 300)
      for (const line of body.split('\n').filter(Boolean)) proxy.taken.push(JSON.parse(line) as Record<string, any>);
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(text);
  });
  proxy.url = await listen(server);
  return proxy;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is true, at most `ms`. */
export async function eventually(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export interface Stored {
  id: string;
  seq: number;
  org: string;
}

/** Every audit entry VictoriaLogs holds for tenant `accountId`, repeats included. */
export async function storedEntries(victoriaLogs: RunningVictoriaLogs, accountId: number): Promise<Stored[]> {
  const body = new URLSearchParams({ query: '* | fields id, seq, org', start: '0' });
  const res = await fetch(`${victoriaLogs.url}/select/logsql/query`, { method: 'POST', body, headers: { AccountID: String(accountId), ProjectID: '0' } });
  expect(res.status).to.equal(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; seq: string; org: string })
    .map((line) => ({ id: line.id, seq: Number(line.seq), org: line.org }));
}

/**
 * The stream's promise, checked on what arrived: after dropping repeats by id, every id of
 * `expectedIds` exactly once and nothing else; each org's numbers 1..n without a gap; and the
 * lines that went through the proxy in each org's order (a repeat comes after its first delivery).
 */
export function expectDeliveredInOrder(stored: Stored[], expectedIds: string[], proxy: RecordingProxy): void {
  const unique = new Map(stored.map((entry) => [entry.id, entry]));
  expect(unique.size).to.equal(expectedIds.length);
  expect([...unique.keys()].sort()).to.deep.equal([...expectedIds].sort());
  const byOrg = new Map<string, number[]>();
  for (const entry of unique.values()) byOrg.set(entry.org, [...(byOrg.get(entry.org) ?? []), entry.seq]);
  for (const [org, seqs] of byOrg)
    expect(
      seqs.sort((a, b) => a - b),
      org,
    ).to.deep.equal(seqs.map((_, i) => i + 1));
  const firstSeen = new Map<string, number>();
  const lastSeqOf = new Map<string, number>();
  for (const line of proxy.taken) {
    if (firstSeen.has(line.id as string)) continue;
    firstSeen.set(line.id as string, Number(line.seq));
    const previous = lastSeqOf.get(line.org as string) ?? 0;
    expect(Number(line.seq), `org ${line.org as string}: ${line.seq as number} after ${previous}`).to.equal(previous + 1);
    lastSeqOf.set(line.org as string, Number(line.seq));
  }
}
