/**
 * An OpenID issuer whose token endpoint answers whatever ID token the test made: the way to
 * present the service with tokens a real provider never issues (wrong issuer or audience,
 * another key's signature, `alg: none`, expired, another nonce) and a userinfo `sub` that
 * differs from the token's. Discovery, JWKS, token and userinfo endpoints only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export interface IdTokenPlan {
  /** Claims over the valid defaults (iss, aud, sub, nonce, iat, exp); undefined values drop a claim. */
  claims?: Record<string, unknown>;
  /** Sign with a key the issuer does not publish. */
  foreignKey?: boolean;
  /** An unsigned token (`alg: none`). */
  unsigned?: boolean;
  /** What userinfo says. */
  userinfo?: Record<string, unknown>;
}

export interface FakeIssuer {
  issuer: string;
  clientId: string;
  /** The next token answer, for the nonce the service sent. */
  plan(nonce: string, plan?: IdTokenPlan): void;
  close(): Promise<void>;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export async function startFakeIssuer(clientId = 'fake-client'): Promise<FakeIssuer> {
  const own = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = { ...(await exportJWK(own.publicKey)), alg: 'RS256', use: 'sig', kid: 'k1' };
  let next: { nonce: string; plan: IdTokenPlan } | null = null;
  let issuer = '';

  async function idToken(): Promise<string> {
    const { nonce, plan } = next!;
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = { iss: issuer, aud: clientId, sub: 'subject-1', nonce, iat: now, exp: now + 300, ...plan.claims };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    if (plan.unsigned) return `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;
    const key: CryptoKey = plan.foreignKey ? foreign.privateKey : own.privateKey;
    return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(key);
  }

  const server = http.createServer((req, res) => {
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const path = new URL(req.url ?? '/', issuer).pathname;
    if (path === '/.well-known/openid-configuration') {
      return json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/userinfo`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (path === '/jwks') return json({ keys: [publicJwk] });
    if (path === '/token') {
      idToken().then(
        (token) => json({ access_token: 'fake-access-token', token_type: 'Bearer', expires_in: 300, id_token: token }),
        (err) => res.writeHead(500).end(String(err)),
      );
      return;
    }
    if (path === '/userinfo') return json({ sub: 'subject-1', email: 'fake@example.org', email_verified: true, ...next?.plan.userinfo });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    clientId,
    plan(nonce, plan = {}) {
      next = { nonce, plan };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
