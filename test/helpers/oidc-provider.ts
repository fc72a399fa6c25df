/**
 * A real OpenID Connect provider in process: `oidc-provider` on a loopback port, with one
 * confidential client, PKCE required, and a test interaction that logs in the account named by
 * `login_hint` and grants consent, so the whole code flow runs without a browser. Accounts are
 * claims the test sets (`accounts.set(sub, {email, email_verified, ...})`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { TestApp } from './app.ts';

export const CLIENT_ID = 'gatehouse-test';
export const CLIENT_SECRET = 'gatehouse-test-secret-0123456789';

export interface TestOidcProvider {
  issuer: string;
  accounts: Map<string, Record<string, unknown>>;
  /** Adds the app's callback of `provider` to the client's redirect URIs (once the app is up). */
  register(app: TestApp, provider: 'generic' | 'workspace'): Promise<void>;
  close(): Promise<void>;
}

export async function startOidcProvider(options: { claims?: string[] } = {}): Promise<TestOidcProvider> {
  const accounts = new Map<string, Record<string, unknown>>();
  let provider: Provider | null = null;
  const server = http.createServer((req, res) => {
    if (!provider) {
      res.writeHead(503).end();
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      loginNamedAccount(provider, req, res).catch((err) => res.writeHead(500).end(String(err)));
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };

  const redirectUris: string[] = [];

  return {
    issuer,
    accounts,
    async register(app, id) {
      redirectUris.push(`${app.url}/api/login/${id}/callback`);
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: redirectUris,
            response_types: ['code'],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        jwks: { keys: [jwk as never] },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        pkce: { required: () => true },
        ttl: { AccessToken: 3600, IdToken: 3600, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600 },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        claims: { openid: ['sub'], email: ['email', 'email_verified', ...(options.claims ?? [])], profile: ['name', 'preferred_username'] },
        async findAccount(_ctx, sub) {
          const claims = accounts.get(sub);
          if (!claims) return undefined;
          return { accountId: sub, claims: async () => ({ ...claims, sub }) };
        },
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A bare login page for the browser test: one field, the account to sign in as. */
const LOGIN_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider</title></head><body>
<form method="post"><label for="account">Provider account</label><input id="account" name="account"><button type="submit">Continue</button></form>
</body></html>`;

function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });
}

/**
 * The test's stand-in for a login page: the account named by `login_hint` signs in and consents
 * at once; without one (a browser), a form asks which account.
 */
async function loginNamedAccount(provider: Provider, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  let accountId = details.params.login_hint as string | undefined;
  if (!accountId && req.method === 'POST') accountId = (await readForm(req)).get('account') ?? undefined;
  if (!accountId) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(LOGIN_PAGE);
    return;
  }
  const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/** Cookies per name, as the provider sets them across its redirects. */
class ProviderCookies {
  private readonly values = new Map<string, string>();
  absorb(setCookie: string[]): void {
    for (const cookie of setCookie) {
      const [pair = ''] = cookie.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value) this.values.set(name, value);
      else this.values.delete(name);
    }
  }
  header(): string {
    return [...this.values].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface ProviderRedirect {
  /** The app's callback path and query, as the provider sent the browser back. */
  callbackPath: string;
  /** The `svc_oauth_state=…` cookie the start set. */
  stateCookie: string;
  /** The authorization URL the app built. */
  authorizationUrl: URL;
}

/** Starts a login at the app and lets `accountId` sign in at the provider: where the browser goes back to. */
export async function loginAtProvider(app: TestApp, id: string, accountId: string, redirect?: string): Promise<ProviderRedirect> {
  const start = await app.request('GET', `/api/login/${id}${redirect ? `?${new URLSearchParams({ redirect })}` : ''}`);
  if (start.status !== 302) throw new Error(`login start answered ${start.status}: ${JSON.stringify(start.body)}`);
  const authorizationUrl = new URL(start.headers.get('location')!);
  const stateCookie = start.setCookie.find((cookie) => cookie.startsWith('svc_oauth_state='))!.split(';')[0]!;
  return { callbackPath: await signInAtProvider(app, authorizationUrl, accountId), stateCookie, authorizationUrl };
}

/** Lets `accountId` sign in at the provider the app sent the browser to: the app's callback path and query. */
export async function signInAtProvider(app: TestApp, authorizationUrl: URL, accountId: string): Promise<string> {
  let url = new URL(authorizationUrl);
  url.searchParams.set('login_hint', accountId);
  const cookies = new ProviderCookies();
  for (let hops = 0; !url.href.startsWith(app.url); hops++) {
    if (hops > 10) throw new Error('the provider redirected too often');
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: cookies.header() } });
    cookies.absorb(response.headers.getSetCookie());
    const location = response.headers.get('location');
    if (!location) throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${await response.text()}`);
    url = new URL(location, url);
  }
  return url.href.slice(app.url.length);
}
