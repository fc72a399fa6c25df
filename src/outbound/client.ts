/**
 * The one way the service makes a request: http or https only, every connection's resolved
 * address checked against the address policy (no DNS rebinding: the check is in the lookup of
 * each connection, and IP literals are checked before connecting), no redirect followed (a 3xx
 * is an answer like any other), a connect timeout, a total timeout and a response size limit.
 * Every answer comes back without the credentials the request sent (redaction.ts).
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { BadGatewayError, BadRequestError, GatewayTimeoutError, ServiceError } from '../errors.ts';
import { refusalMessage, type AddressPolicy } from './address-policy.ts';
import { authHeaders, type OutboundAuth } from './auth.ts';
import { credentialForms, Redactor } from './redaction.ts';

export interface OutboundLimits {
  connectTimeoutMs: number;
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface OutboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: URL;
  headers?: Record<string, string>;
  body?: string | Buffer;
  auth?: OutboundAuth;
}

export interface OutboundResponse {
  status: number;
  contentType: string;
  /** Without the credentials the request sent (redaction.ts). */
  body: Buffer;
}

export interface OutboundStream {
  status: number;
  contentType: string;
  /** Without the credentials the request sent (redaction.ts); fails with a 502 or 504 when the answer breaks a limit. */
  body: Readable;
}

/** Parses a backend URL; only http and https with a host, no credentials in it. */
export function parseBackendUrl(raw: string, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequestError(`${field} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequestError(`${field} must start with http:// or https://`);
  if (!url.hostname) throw new BadRequestError(`${field} has no host`);
  if (url.username || url.password) throw new BadRequestError(`${field} must not carry credentials: use basic auth`);
  return url;
}

type LookupCallback = Parameters<LookupFunction>[2];

export class OutboundClient {
  constructor(
    private readonly policy: AddressPolicy,
    private readonly limits: OutboundLimits,
  ) {}

  /** Sends the request and reads the whole answer; a refused address is a 400, an unreachable or oversized backend a 502, a slow one a 504. */
  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const { status, contentType, body } = await this.stream(request);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return { status, contentType, body: Buffer.concat(chunks) };
  }

  /**
   * Sends the request and answers as soon as the backend's status and headers came; its body
   * follows as a stream. An answer that announces more than the size limit is refused (502) before
   * that; one that sends more is cut there: its stream fails with the 502, as it does with the 504
   * of the total timeout, which runs until the body's end.
   */
  stream(request: OutboundRequest): Promise<OutboundStream> {
    const { url } = request;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const why = this.policy.refusal(host);
      if (why) return Promise.reject(new BadRequestError(refusalMessage(host, host, why)));
    }
    const auth = request.auth ?? {};
    const forms = credentialForms(auth);
    return new Promise((resolve, reject) => {
      let failure: ServiceError | null = null;
      let body: Transform | null = null;
      const fail = (error: ServiceError) => {
        failure ??= error;
        clearTimeout(totalTimer);
        clearTimeout(connectTimer);
        req.destroy();
        if (body) body.destroy(failure);
        else reject(failure);
      };
      const lookup: LookupFunction = (hostname, options, callback) => {
        dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
          if (error) return (callback as LookupCallback)(error, '', 4);
          const refused = addresses.find((entry) => this.policy.refusal(entry.address));
          if (refused) {
            failure ??= new BadRequestError(refusalMessage(hostname, refused.address, this.policy.refusal(refused.address)!));
            return (callback as LookupCallback)(Object.assign(new Error(failure.message), { code: 'EADDRREFUSED' }), '', 4);
          }
          if (options.all) return (callback as (err: null, addresses: dns.LookupAddress[]) => void)(null, addresses);
          const [first] = addresses;
          return (callback as LookupCallback)(null, first!.address, first!.family);
        });
      };
      const tls = auth.tls;
      const options: https.RequestOptions = {
        method: request.method,
        headers: { accept: 'application/json', ...request.headers, ...authHeaders(auth) },
        agent: false,
        lookup,
        ...(tls?.cert && { cert: tls.cert }),
        ...(tls?.key && { key: tls.key }),
        ...(tls?.ca && { ca: tls.ca }),
        ...(tls?.serverName && { servername: tls.serverName }),
      };
      const limit = this.limits.maxResponseBytes;
      const onResponse = (res: http.IncomingMessage) => {
        clearTimeout(connectTimer);
        if (Number(res.headers['content-length']) > limit) return fail(tooLarge(limit));
        const answer = (body = limitedBody(limit, forms));
        // ended, failed, or dropped by its reader: the backend's request is done too
        answer.on('close', () => {
          clearTimeout(totalTimer);
          req.destroy();
        });
        answer.on('error', (error) => fail(error instanceof ServiceError ? error : unreachable(url, error)));
        res.on('error', (error) => fail(unreachable(url, error)));
        res.pipe(answer);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: answer });
      };
      const send = url.protocol === 'https:' ? https.request : http.request;
      let req: http.ClientRequest;
      try {
        req = send(url, options, onResponse);
      } catch {
        // unusable TLS material: settings.ts checks it when a connector is saved
        return reject(new BadRequestError(`the connection settings for ${url.host} cannot be used`));
      }
      const connectTimer = setTimeout(
        () => fail(new GatewayTimeoutError(`backend ${url.host} did not accept a connection within ${this.limits.connectTimeoutMs} ms`)),
        this.limits.connectTimeoutMs,
      );
      const totalTimer = setTimeout(
        () => fail(new GatewayTimeoutError(`backend ${url.host} did not answer within ${this.limits.timeoutMs} ms`)),
        this.limits.timeoutMs,
      );
      req.on('socket', (socket) => socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer)));
      req.on('error', (error) => fail(failure ?? unreachable(url, error)));
      req.end(request.body);
    });
  }
}

/** A body as it comes, cut with a 502 past `limit` bytes, the credentials' forms redacted. */
function limitedBody(limit: number, forms: Buffer[]): Transform {
  const redactor = forms.length > 0 ? new Redactor(forms) : null;
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      size += chunk.length;
      if (size > limit) return done(tooLarge(limit));
      const passed = redactor ? redactor.push(chunk) : chunk;
      // one chunk per turn of the event loop: a fast backend's answer does not hold it for megabytes at a time
      setImmediate(done, null, passed.length > 0 ? passed : undefined);
    },
    flush(done: TransformCallback) {
      const rest = redactor?.end();
      done(null, rest && rest.length > 0 ? rest : undefined);
    },
  });
}

const tooLarge = (limit: number) => new BadGatewayError(`backend response is larger than ${limit} bytes`);

/** The network error in words the caller can act on, without the backend's internals. */
function unreachable(url: URL, error: NodeJS.ErrnoException): ServiceError {
  const code = error.code ?? '';
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host not found'
        : code === 'ECONNRESET'
          ? 'connection reset'
          : code.startsWith('ERR_TLS') || code.includes('CERT') || /certificate|handshake|ssl|alert/i.test(error.message)
            ? `TLS failed (${code || error.message.slice(0, 120)})`
            : code || error.message.slice(0, 120);
  return new BadGatewayError(`backend ${url.host} unreachable: ${why}`);
}
