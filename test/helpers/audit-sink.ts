/**
 * What the audit stream tests send to: a recording proxy in front of a real sink (it passes
 * each request on and keeps the entries in the order they went through, and can be "down":
 * connections reset), and a receiver that answers as the test says (a webhook, Loki's push API).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides each answer (default 204); `down` resets every connection instead. */
  answer: (request: ReceivedRequest) => { status: number; body?: string };
  down: boolean;
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
  const receiver: Receiver = {
    url: '',
    requests: [],
    answer: () => ({ status: 204 }),
    down: false,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer(async (req, res) => {
    if (receiver.down) return req.socket.destroy();
    const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: await readBody(req) };
    receiver.requests.push(request);
    const { status, body } = receiver.answer(request);
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
