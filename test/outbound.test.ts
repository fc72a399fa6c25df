/**
 * src/outbound against loopback servers: the address policy (also on resolved names), no
 * redirects followed, the total timeout, the size limit (also of a streamed answer), each auth
 * method (bearer, basic, custom headers, mTLS with certificates made by openssl for the test),
 * and the credentials a backend repeats replaced in what comes back.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.ts';
import { AddressPolicy } from '../src/outbound/address-policy.ts';
import { OutboundClient, parseBackendUrl } from '../src/outbound/client.ts';
import { assertOneAuthorization, assertSendableHeader, type OutboundAuth } from '../src/outbound/auth.ts';
import { credentialForms, Redactor } from '../src/outbound/redaction.ts';
import { ServiceError } from '../src/errors.ts';
import { makeTestCerts, type TestCerts } from './helpers/certs.ts';

const LIMITS = { connectTimeoutMs: 2000, timeoutMs: 5000, maxResponseBytes: 1024 };
const loopbackAllowed = new AddressPolicy(['127.0.0.0/8'], []);

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A loopback server that records what it got and answers with `answer`. */
async function backend(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void, tls?: https.ServerOptions) {
  const seen: Seen[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      answer(req, res);
    });
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  const port = await listen(server);
  return {
    seen,
    url: (path: string, host = '127.0.0.1') => new URL(`${tls ? 'https' : 'http'}://${host}:${port}${path}`),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return err as ServiceError;
  }
  throw new Error('expected a refusal');
}

const ok = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.setHeader('content-type', 'application/json');
  res.end('{"status":"success"}');
};

describe('outbound: address policy', () => {
  const policy = new AddressPolicy([], ['192.0.2.10']);

  it('refuses loopback, link-local and metadata, unspecified, multicast and its own address, in both families', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', 'ff02::1', '192.0.2.10']) {
      expect(policy.refusal(address), address).to.be.a('string');
    }
  });

  it('sees through IPv4-mapped IPv6 addresses', () => {
    expect(policy.refusal('::ffff:127.0.0.1')).to.equal('loopback');
    expect(policy.refusal('::ffff:169.254.169.254')).to.equal('link-local (cloud metadata)');
    // the form the URL parser gives http://[::ffff:127.0.0.1]/
    expect(new URL('http://[::ffff:127.0.0.1]/').hostname).to.equal('[::ffff:7f00:1]');
    expect(policy.refusal('::ffff:7f00:1')).to.equal('loopback');
  });

  it('allows other addresses, and what CONNECTOR_ALLOWED_NETWORKS lists', () => {
    expect(policy.refusal('10.1.2.3')).to.equal(null);
    expect(policy.refusal('2001:db8::1')).to.equal(null);
    const allowing = new AddressPolicy(['127.0.0.0/8', '::1/128', '169.254.0.0/16'], []);
    expect(allowing.refusal('127.0.0.1')).to.equal(null);
    expect(allowing.refusal('::1')).to.equal(null);
    expect(allowing.refusal('169.254.169.254')).to.equal(null);
    expect(allowing.refusal('fe80::1')).to.equal('link-local');
  });

  it('refuses a malformed CONNECTOR_ALLOWED_NETWORKS at startup, naming the variable', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', CONNECTOR_ALLOWED_NETWORKS: '127.0.0.1', DATA_DIR: fs.mkdtempSync('/tmp/gh-') })).to.throw(
      /CONNECTOR_ALLOWED_NETWORKS/,
    );
    expect(() => loadConfig({ NODE_ENV: 'test', CONNECTOR_ALLOWED_NETWORKS: '10.0.0.0/33', DATA_DIR: fs.mkdtempSync('/tmp/gh-') })).to.throw(
      /CONNECTOR_ALLOWED_NETWORKS/,
    );
    expect(
      loadConfig({ NODE_ENV: 'test', CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8, ::1/128', DATA_DIR: fs.mkdtempSync('/tmp/gh-') }).connectorAllowedNetworks,
    ).to.deep.equal(['127.0.0.0/8', '::1/128']);
  });

  it('accepts only http and https URLs without credentials', () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com', 'not a url', 'http://user:pass@example.com/']) {
      expect(() => parseBackendUrl(url), url).to.throw(ServiceError);
    }
    expect(parseBackendUrl('https://prometheus.example:9090/prefix').pathname).to.equal('/prefix');
  });
});

describe('outbound: credentials repeated by a backend', () => {
  const auth: OutboundAuth = { basic: { user: 'ada', password: 'pa ss"word' }, headers: [{ name: 'X-Scope-OrgID', value: 'tenant-one' }] };
  const forms = credentialForms(auth);
  const basic = Buffer.from('ada:pa ss"word').toString('base64');
  const answer = `refused "Basic ${basic}" for tenant-one (password=pa%20ss%22word, ${JSON.stringify('pa ss"word')})`;
  const redacted = 'refused "Basic [redacted]" for [redacted] (password=[redacted], "[redacted]")';

  it('are replaced in an answer read whole or in chunks cut anywhere, even inside a credential', () => {
    const bytes = Buffer.from(answer);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const redactor = new Redactor(forms);
      const passed = Buffer.concat([redactor.push(bytes.subarray(0, cut)), redactor.push(bytes.subarray(cut)), redactor.end()]);
      expect(passed.toString(), `cut at ${cut}`).to.equal(redacted);
    }
    const oneByOne = new Redactor(forms);
    const passed = Buffer.concat([...bytes].map((byte) => oneByOne.push(Buffer.from([byte]))).concat(oneByOne.end()));
    expect(passed.toString()).to.equal(redacted);
  });

  it('are replaced in what the client answers, whole or streamed', async () => {
    const server = await backend((_req, res) => {
      res.statusCode = 401;
      res.write(answer.slice(0, 20));
      res.end(answer.slice(20));
    });
    try {
      const client = new OutboundClient(loopbackAllowed, LIMITS);
      expect((await client.request({ method: 'GET', url: server.url('/'), auth })).body.toString()).to.equal(redacted);
      const { body } = await client.stream({ method: 'GET', url: server.url('/'), auth });
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).to.equal(redacted);
    } finally {
      await server.close();
    }
  });
});

describe('outbound: requests', () => {
  let server: Awaited<ReturnType<typeof backend>>;
  afterEach(async () => server?.close());

  it('refuses a loopback backend by default, before any connection, and says which variable allows it', async () => {
    server = await backend(ok);
    const client = new OutboundClient(new AddressPolicy([], []), LIMITS);
    const refused = await failure(client.request({ method: 'GET', url: server.url('/api/v1/labels') }));
    expect(refused.status).to.equal(400);
    expect(refused.message).to.match(/^connections to 127\.0\.0\.1 are refused: loopback; set CONNECTOR_ALLOWED_NETWORKS/);
    expect(server.seen).to.have.length(0);
  });

  it('checks the address a name resolves to on connection (localhost is loopback)', async () => {
    server = await backend(ok);
    const client = new OutboundClient(new AddressPolicy([], []), LIMITS);
    const refused = await failure(client.request({ method: 'GET', url: server.url('/', 'localhost') }));
    expect(refused.status).to.equal(400);
    expect(refused.message).to.match(/^connections to localhost \((127\.0\.0\.1|::1)\) are refused: loopback; set CONNECTOR_ALLOWED_NETWORKS/);
    expect(server.seen).to.have.length(0);
  });

  it('does not follow a redirect, so a backend cannot send the service to the metadata address', async () => {
    server = await backend((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
      res.end();
    });
    const response = await new OutboundClient(loopbackAllowed, LIMITS).request({ method: 'GET', url: server.url('/') });
    expect(response.status).to.equal(302);
    expect(server.seen).to.have.length(1);
  });

  it('sends bearer, basic and custom header credentials, and nothing of its own caller', async () => {
    server = await backend(ok);
    const client = new OutboundClient(loopbackAllowed, LIMITS);
    await client.request({ method: 'GET', url: server.url('/a'), auth: { bearerToken: 'tok-1' } });
    await client.request({ method: 'GET', url: server.url('/b'), auth: { basic: { user: 'ada', password: 'p:ss' } } });
    await client.request({ method: 'POST', url: server.url('/c'), body: 'query=up', auth: { headers: [{ name: 'X-Scope-OrgID', value: 'tenant-1' }] } });
    expect(server.seen.map((seen) => seen.headers.authorization)).to.deep.equal([
      'Bearer tok-1',
      `Basic ${Buffer.from('ada:p:ss').toString('base64')}`,
      undefined,
    ]);
    expect(server.seen[2]!.headers['x-scope-orgid']).to.equal('tenant-1');
    expect(server.seen[2]!.body).to.equal('query=up');
    expect(server.seen.every((seen) => seen.headers.cookie === undefined)).to.be.true;
  });

  it('never lets a custom header set Cookie, Host or a hop-by-hop header, nor two Authorizations', () => {
    for (const name of ['Cookie', 'host', 'Connection', 'Transfer-Encoding', 'Upgrade', 'Proxy-Authorization', 'TE', 'Keep-Alive', 'bad name', 'x\r\ny']) {
      expect(() => assertSendableHeader(name, 'v', 'jsonData.httpHeaderName1'), name).to.throw(ServiceError);
    }
    expect(() => assertSendableHeader('X-Ok', 'a\r\nInjected: 1', 'secureJsonData.httpHeaderValue1')).to.throw(/control character/);
    expect(() => assertOneAuthorization({ bearerToken: 't', basic: { user: 'u', password: 'p' } })).to.throw(/only one of/);
  });

  it('gives up on a backend that does not answer within the total timeout (504)', async () => {
    server = await backend(() => {});
    const client = new OutboundClient(loopbackAllowed, { ...LIMITS, timeoutMs: 200 });
    const slow = await failure(client.request({ method: 'GET', url: server.url('/') }));
    expect(slow.status).to.equal(504);
    expect(slow.message).to.match(/did not answer within 200 ms/);
  });

  it('refuses a response over the size limit, declared or streamed (502)', async () => {
    const big = 'x'.repeat(LIMITS.maxResponseBytes + 1);
    server = await backend((req, res) => {
      if (req.url === '/streamed') res.write(big.slice(0, 600));
      res.end(req.url === '/streamed' ? big.slice(600) : big);
    });
    const client = new OutboundClient(loopbackAllowed, LIMITS);
    for (const path of ['/declared', '/streamed']) {
      const tooBig = await failure(client.request({ method: 'GET', url: server.url(path) }));
      expect(tooBig.status, path).to.equal(502);
      expect(tooBig.message).to.equal('backend response is larger than 1024 bytes');
    }
  });

  it('streams an answer as it comes, cut with a 502 past the size limit and a 504 past the total timeout', async () => {
    let finish = () => {};
    server = await backend((req, res) => {
      res.write('first ');
      if (req.url === '/held') finish = () => res.end('last');
      else if (req.url === '/long') res.write('x'.repeat(LIMITS.maxResponseBytes));
    });
    const client = new OutboundClient(loopbackAllowed, { ...LIMITS, timeoutMs: 300 });
    const held = await client.stream({ method: 'GET', url: server.url('/held') });
    const reader = held.body[Symbol.asyncIterator]();
    expect(String((await reader.next()).value)).to.equal('first ');
    finish();
    expect(String((await reader.next()).value)).to.equal('last');
    expect((await reader.next()).done).to.equal(true);
    for (const [path, status] of [
      ['/long', 502],
      ['/stalled', 504],
    ] as const) {
      const { body } = await client.stream({ method: 'GET', url: server.url(path) });
      const cut = await failure(
        (async () => {
          for await (const _chunk of body);
        })(),
      );
      expect(cut.status, path).to.equal(status);
    }
  });

  it('reports an unreachable backend as 502 without internals', async () => {
    server = await backend(ok);
    const url = server.url('/');
    await server.close();
    const down = await failure(new OutboundClient(loopbackAllowed, LIMITS).request({ method: 'GET', url }));
    expect(down.status).to.equal(502);
    expect(down.message).to.match(/^backend 127\.0\.0\.1:\d+ unreachable: connection refused$/);
  });

  describe('mTLS', () => {
    let certs: TestCerts;
    before(() => (certs = makeTestCerts()));
    after(() => fs.rmSync(certs.dir, { recursive: true, force: true }));

    const mtlsServer = () => backend(ok, { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, requestCert: true, rejectUnauthorized: true });

    it('connects with the client certificate and the CA that signed the backend', async () => {
      server = await mtlsServer();
      const response = await new OutboundClient(loopbackAllowed, LIMITS).request({
        method: 'GET',
        url: server.url('/api/v1/labels'),
        auth: { tls: { cert: certs.clientCert, key: certs.clientKey, ca: certs.ca } },
      });
      expect(response.status).to.equal(200);
      expect(server.seen).to.have.length(1);
    });

    it('fails without a client certificate, with one of another CA, and against an untrusted server', async () => {
      server = await mtlsServer();
      const client = new OutboundClient(loopbackAllowed, LIMITS);
      const url = server.url('/');
      for (const tls of [
        { ca: certs.ca },
        { ca: certs.ca, cert: certs.otherClientCert, key: certs.otherClientKey },
        { ca: certs.otherCa, cert: certs.clientCert, key: certs.clientKey },
      ]) {
        const refused = await failure(client.request({ method: 'GET', url, auth: { tls } }));
        expect(refused.status).to.equal(502);
        expect(refused.message).to.match(/^backend 127\.0\.0\.1:\d+ unreachable: /);
      }
      expect(server.seen).to.have.length(0);
    });
  });
});
