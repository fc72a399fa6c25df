/**
 * A backend that repeats the credentials it was sent never hands them to a caller. The real
 * vmauth (Debian `victoria-metrics`) refuses a wrong basic-auth password with the Authorization
 * header it got (`cannot find the provided auth token "Basic dm0t…"`): through the connectivity
 * test, a query, the proxy and the chat tool metrics_query, the caller sees `[redacted]` instead.
 * An in-test backend repeats every other form a credential can take (the password alone, base64
 * without padding or in base64url, URL- and form-encoded, escaped in JSON, a bearer token, a
 * custom header's value), in a plain-text and in a JSON refusal. Without vmauth its part is
 * skipped, except in CI.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, type TestUser } from './helpers/factories.ts';
import { startVictoriaMetrics, VM_BASIC_PASSWORD, VM_BASIC_USER, type RunningVictoriaMetrics } from './helpers/victoria-metrics.ts';
import { requirePeer } from './helpers/peers.ts';

const base64 = (text: string) => Buffer.from(text).toString('base64');

/** Every form in which `secret` must not reach a caller. */
function formsOf(secret: string): string[] {
  const uri = encodeURIComponent(secret);
  return [
    secret,
    uri,
    uri.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    new URLSearchParams({ v: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
  ];
}

function basicForms(user: string, password: string): string[] {
  const encoded = base64(`${user}:${password}`);
  return [...formsOf(password), encoded, encoded.replace(/=+$/, ''), Buffer.from(`${user}:${password}`).toString('base64url')];
}

describe('connectors: no credential comes back from a backend', function () {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  before(async () => {
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => app?.close());

  let names = 0;
  async function connector(url: string, extra: Record<string, unknown>): Promise<string> {
    const res = await api(app, admin).post('/api/connectors', { name: `metrics-${++names}`, type: 'tsmetrics', url, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.uid;
  }

  /** The four ways a caller reaches the backend, each answering what the backend refused with. */
  async function everyPath(uid: string) {
    return {
      test: await api(app, admin).post(`/api/connectors/${uid}/test`),
      query: await api(app, viewer).post(`/api/connectors/${uid}/query`, { query: 'up' }),
      proxy: await app.request('GET', `/api/connectors/proxy/uid/${uid}/api/v1/labels`, { cookie: viewer.cookie }),
      chat: await api(app, viewer).post('/api/chat/tools/metrics_query', {
        agentType: 'investigator',
        permissionMode: 'read_only',
        args: { connector: uid, query: 'up' },
      }),
    };
  }

  function expectNoneOf(forms: string[], shown: unknown, label: string) {
    const text = typeof shown === 'string' ? shown : JSON.stringify(shown);
    for (const form of forms) expect(text, `${label} shows ${form}`).not.to.contain(form);
  }

  describe('vmauth repeating a refused basic-auth header', () => {
    let victoria: RunningVictoriaMetrics | undefined;
    before(async function () {
      requirePeer(this, 'victoria-metrics');
      victoria = await startVictoriaMetrics();
    });
    after(async () => victoria?.stop());

    it('the test, a query, the proxy and metrics_query show [redacted] where vmauth repeats the header', async () => {
      const good = await connector(victoria!.url, { jsonData: { basicAuthUser: VM_BASIC_USER }, secureJsonData: { basicAuthPassword: VM_BASIC_PASSWORD } });
      expect((await api(app, admin).post(`/api/connectors/${good}/test`)).body).to.deep.include({ status: 'OK' });

      const password = 'wrong-pass/wörd+1';
      const uid = await connector(victoria!.url, { jsonData: { basicAuthUser: VM_BASIC_USER }, secureJsonData: { basicAuthPassword: password } });
      const refusal = 'cannot find the provided auth token "Basic [redacted]" in config';
      const { test, query, proxy, chat } = await everyPath(uid);
      expect(test.status).to.equal(400);
      expect(test.body).to.deep.equal({ status: 'ERROR', message: `backend answered 400: ${refusal}`, details: { status: 400, error: refusal } });
      expect(query.status).to.equal(400);
      expect(query.body).to.deep.equal({ message: `backend answered 400: ${refusal}` });
      expect(proxy.status).to.equal(400);
      expect(proxy.body).to.equal(`${refusal}\n`);
      expect(chat.status).to.equal(400);
      expect(chat.body).to.deep.equal({ message: `backend answered 400: ${refusal}` });
      expectNoneOf(basicForms(VM_BASIC_USER, password), { test, query, proxy, chat }, 'an answer');
    });
  });

  describe('a backend repeating every form of what it got', () => {
    let echo: http.Server;
    let url: string;
    /** The forms the backend repeats of the credentials it got: those of basic auth, a bearer token and a custom header. */
    const repeated = (headers: http.IncomingHttpHeaders) => {
      const authorization = String(headers.authorization);
      const scheme = authorization.split(' ')[0]!;
      const credential = authorization.slice(scheme.length + 1);
      const secrets =
        scheme === 'Basic' ? basicForms(...(Buffer.from(credential, 'base64').toString().split(/:(.*)/s) as [string, string])) : formsOf(credential);
      return [...secrets, ...formsOf(String(headers['x-scope-orgid']))];
    };
    before(async () => {
      echo = http.createServer((req, res) => {
        const forms = repeated(req.headers);
        res.statusCode = 400;
        if (req.url!.includes('/api/v1/labels')) {
          res.setHeader('content-type', 'text/plain; charset=utf-8');
          res.end(`refused: ${forms.join(' | ')}\n`);
        } else {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: forms.join(' | ') }));
        }
      });
      await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => echo.close(() => resolve())));

    const tenant = 'tenant "blue" & <green>';
    const [user, password, token] = ['echo-user', 'p@ss wörd/"x"&y', 'token+/=with spaces'];
    const header = { jsonData: { httpHeaderName1: 'X-Scope-OrgID' }, secureJsonData: { httpHeaderValue1: tenant } };
    const cases = [
      {
        method: 'basic auth',
        settings: {
          jsonData: { ...header.jsonData, basicAuthUser: user },
          secureJsonData: { ...header.secureJsonData, basicAuthPassword: password },
        },
        forms: [...basicForms(user, password), ...formsOf(tenant)],
      },
      {
        method: 'a bearer token',
        settings: { jsonData: header.jsonData, secureJsonData: { ...header.secureJsonData, bearerToken: token } },
        forms: [...formsOf(token), ...formsOf(tenant)],
      },
    ];

    for (const { method, settings, forms } of cases) {
      it(`${method} and a custom header: no form of them reaches the caller, in plain text or JSON, whole or cut to 500 characters`, async () => {
        const uid = await connector(url, settings);
        const { test, query, proxy, chat } = await everyPath(uid);
        for (const [label, res] of Object.entries({ test, query, proxy, chat })) {
          expect(res.status, label).to.equal(400);
          expect(JSON.stringify(res.body), label).to.contain('[redacted]');
        }
        // the proxy passes the whole plain-text refusal: every form the backend repeated is replaced
        const pieces = String(proxy.body).trim().slice('refused: '.length).split(' | ');
        expect(pieces).to.have.length(forms.length);
        expect(pieces.every((piece) => piece === '[redacted]')).to.equal(true, String(proxy.body));
        const json = await app.request('POST', `/api/connectors/proxy/uid/${uid}/api/v1/query`, {
          cookie: viewer.cookie,
          rawBody: 'query=up',
          contentType: 'application/x-www-form-urlencoded',
        });
        expect(json.body.error.split(' | ').every((piece: string) => piece === '[redacted]')).to.equal(true, json.body.error);
        expectNoneOf(forms, { test, query, proxy, chat, json }, 'an answer');
      });
    }
  });
});
