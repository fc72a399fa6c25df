/**
 * Cheap requests that would make the event loop do expensive work: each is refused with a 4xx
 * naming its limit before that work starts.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_PROXY_PARAMS } from '../src/connectors/backend.routes.ts';
import { keyDerivationCount } from '../src/crypto/password.ts';
import { normalizeDn } from '../src/identity/providers/ldap/directory.ts';
import { MAX_WEBAUTHN_FIELD_LENGTH } from '../src/identity/user.mfa.routes.ts';
import { MAX_JSON_DEPTH, MAX_JSON_OBJECT_MEMBERS } from '../src/http/json-body.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, createUser, type TestUser } from './helpers/factories.ts';

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const objectOf = (members: number) => `{${Array.from({ length: members }, (_, i) => `"k${i}":${i}`).join(',')}}`;

const TOO_DEEP = `request body is nested deeper than ${MAX_JSON_DEPTH} levels`;
const TOO_WIDE = `request body has an object of more than ${MAX_JSON_OBJECT_MEMBERS} members`;

describe('denial of service: request bodies', () => {
  let app: TestApp;
  let admin: TestUser;
  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  // JSON.parse of 400,000 nested arrays took 0.2–0.6 s, of one 90,000-member object 0.1–0.2 s
  const refusedBodies = [
    { name: 'a login nested 100,000 deep', body: `{"user":"a","password":"b","x":${nested(100_000)}}`, message: TOO_DEEP },
    { name: 'a login nested one level too deep', body: `{"user":"a","password":"b","x":${nested(MAX_JSON_DEPTH)}}`, message: TOO_DEEP },
    { name: 'a login holding an object of 60,000 members', body: `{"user":"a","password":"b","x":${objectOf(60_000)}}`, message: TOO_WIDE },
    {
      name: 'a login holding an object one member too wide',
      body: `{"user":"a","password":"b","x":${objectOf(MAX_JSON_OBJECT_MEMBERS + 1)}}`,
      message: TOO_WIDE,
    },
    { name: 'a login with a __proto__ key', body: '{"user":"a","password":"b","__proto__":{"isAdmin":true}}', message: 'request body is not valid JSON' },
    { name: 'a login of a bare string', body: '"user"', message: 'request body is not valid JSON' },
  ];
  for (const { name, body, message } of refusedBodies) {
    it(`refuses ${name} with 400 before hashing a password`, async () => {
      const derivations = keyDerivationCount();
      const res = await app.request('POST', '/api/login', { rawBody: body });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ message });
      expect(keyDerivationCount()).to.equal(derivations);
    });
  }

  // a model nested 100,000 deep was a 500: JSON.stringify overflowed the stack saving it
  const models = [
    { name: 'nested 100,000 deep', model: nested(100_000), status: 400, message: TOO_DEEP },
    { name: 'holding an object of 5,000 members', model: objectOf(5000), status: 400, message: TOO_WIDE },
    // the body's top object, the dashboard and the model's array: three levels above the model's content
    { name: 'nested to the limit', model: nested(MAX_JSON_DEPTH - 2), status: 200 },
    { name: 'holding an object of as many members as allowed', model: objectOf(MAX_JSON_OBJECT_MEMBERS), status: 200 },
    { name: 'holding brackets and commas inside strings', model: JSON.stringify(['[{'.repeat(500), ','.repeat(5000), '\\"[[[']), status: 200 },
  ];
  for (const [index, { name, model, status, message }] of models.entries()) {
    it(`saves a dashboard model ${name}: ${status}`, async () => {
      const title = `model ${index}`;
      const res = await app.request('POST', '/api/dashboards/db', { cookie: admin.cookie, rawBody: `{"dashboard":{"title":"${title}","model":${model}}}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(status);
      if (message) expect(res.body).to.deep.equal({ message });
      expect(await app.count('dashboards', { title })).to.equal(status === 200 ? 1 : 0);
    });
  }
});

describe('denial of service: the connector proxy', () => {
  let app: TestApp;
  let viewer: TestUser;
  let backend: http.Server;
  let forwarded: number;
  let proxy: (path: string) => string;
  before(async () => {
    forwarded = 0;
    backend = http.createServer((req, res) => {
      forwarded += 1;
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end('{"status":"success","data":[]}');
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    const admin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    const url = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    const created = await app.request('POST', '/api/connectors', { cookie: admin.cookie, body: { name: 'prom', type: 'tsmetrics', url } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    proxy = (path) => `/api/connectors/proxy/uid/${created.body.uid}/${path}`;
  });
  after(async () => {
    await app?.close();
    await new Promise((resolve) => backend?.close(resolve));
  });

  const params = (count: number) => Array.from({ length: count }, () => 'match%5B%5D=up').join('&');
  // a 1 MiB form of 260,000 parameters took 80–100 ms to parse, as much again to forward
  const reads = [
    { name: 'a form of 260,000 parameters', form: 'a=1&'.repeat(260_000), status: 400 },
    { name: 'a form of one parameter more than allowed', form: params(MAX_PROXY_PARAMS + 1), status: 400 },
    { name: 'a form of as many parameters as allowed', form: params(MAX_PROXY_PARAMS), status: 200 },
  ];
  for (const { name, form, status } of reads) {
    it(`POST ${name}: ${status}`, async () => {
      const before = forwarded;
      const res = await app.request('POST', proxy('api/v1/series'), { cookie: viewer.cookie, rawBody: form, contentType: 'application/x-www-form-urlencoded' });
      expect(res.status, JSON.stringify(res.body)).to.equal(status);
      if (status === 400) expect(res.body).to.deep.equal({ message: `give at most ${MAX_PROXY_PARAMS} parameters` });
      expect(forwarded - before).to.equal(status === 200 ? 1 : 0);
    });
  }

  it('GET with a query of one parameter more than allowed: 400', async () => {
    const res = await app.request('GET', proxy(`api/v1/series?${params(MAX_PROXY_PARAMS + 1)}`), { cookie: viewer.cookie });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({ message: `give at most ${MAX_PROXY_PARAMS} parameters` });
  });
});

describe('denial of service: passkey registration', () => {
  const ORIGIN = 'http://localhost:3999';
  let app: TestApp;
  let user: TestUser;
  before(async () => {
    app = await startTestApp({ env: { ROOT_URL: ORIGIN } });
    user = await createUser(app);
  });
  after(async () => {
    await app?.close();
  });

  const base64url = (bytes: Buffer) => bytes.toString('base64url');
  const clientData = (challenge: string) => base64url(Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin: ORIGIN })));
  const credential = (response: Record<string, string>) => ({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', response, clientExtensionResults: {} });
  /** CBOR: an array of `items` zeros, which @simplewebauthn decoded for 0.3–0.6 s at 700,000 */
  const cborArray = (items: number) => Buffer.concat([Buffer.from([0x9a, ...new Uint8Array(new Uint32Array([items]).buffer).reverse()]), Buffer.alloc(items)]);
  const tooLong = (field: string) => `body.credential.response.${field} must NOT have more than ${MAX_WEBAUTHN_FIELD_LENGTH} characters`;

  const attacks = [
    {
      name: 'an attestation object of a 700,000-item CBOR array',
      response: (challenge: string) => ({ clientDataJSON: clientData(challenge), attestationObject: base64url(cborArray(700_000)) }),
      field: 'attestationObject',
    },
    {
      name: 'an attestation object one character too long',
      response: (challenge: string) => ({ clientDataJSON: clientData(challenge), attestationObject: 'A'.repeat(MAX_WEBAUTHN_FIELD_LENGTH + 1) }),
      field: 'attestationObject',
    },
    { name: 'client data of 900,000 characters', response: () => ({ clientDataJSON: 'A'.repeat(900_000), attestationObject: 'AA' }), field: 'clientDataJSON' },
  ];
  for (const { name, response, field } of attacks) {
    it(`refuses ${name} with 400 before the pending registration is read`, async () => {
      const options = await api(app, user).post('/api/user/mfa/webauthn/registration/options', { password: user.password });
      expect(options.status, JSON.stringify(options.body)).to.equal(200);
      const refused = await api(app, user).post('/api/user/mfa/webauthn/registration', { credential: credential(response(options.body.challenge)) });
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.equal({ message: tooLong(field) });
      // the registration is still pending: the refusal came before the handler took it
      const decoded = await api(app, user).post('/api/user/mfa/webauthn/registration', {
        credential: credential({ clientDataJSON: clientData(options.body.challenge), attestationObject: base64url(cborArray(3)) }),
      });
      expect(decoded.status).to.equal(400);
      expect(decoded.body.message).to.match(/^the passkey registration is not valid/);
    });
  }
});

describe('denial of service: LDAP distinguished names', () => {
  // the blanks were matched by /\s*([,=])\s*/g, which took 4.8 s over a directory value of 40,000 blanks and about 2 minutes over these 200,000
  const names = [
    { dn: 'CN=Admins , OU = Groups,DC=example, DC=com', normalized: 'cn=admins,ou=groups,dc=example,dc=com' },
    { dn: '  cn=a b ,\tou=c\u00a0', normalized: 'cn=a b,ou=c' },
    { dn: `cn=${' '.repeat(200_000)}x`, normalized: 'cn=x' },
    { dn: `${' '.repeat(200_000)}cn`, normalized: 'cn' },
  ];
  for (const { dn, normalized } of names) {
    it(`normalizes ${JSON.stringify(dn.length > 60 ? `${dn.slice(0, 20)}… (${dn.length} characters)` : dn)}`, () => {
      expect(normalizeDn(dn)).to.equal(normalized);
    });
  }
});
