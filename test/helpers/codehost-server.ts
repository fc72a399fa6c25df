/**
 * A small code host speaking GitHub's OAuth and REST shapes, for the codehost login: authorize
 * (the account named by `login` signs in at once, as a test stand-in for the login page), the
 * access-token endpoint (urlencoded unless `Accept: application/json`; a bad code is HTTP 200
 * with an `error` field, as GitHub does; PKCE S256 checked; codes used once), and `/user`,
 * `/user/emails`, `/user/orgs`, `/user/teams` under `/api`.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CodehostAccount {
  id: number;
  login: string;
  name?: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
  orgs?: string[];
  /** `<org>/<team slug>` */
  teams?: string[];
}

export interface CodehostServer {
  url: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, CodehostAccount>;
  /** The env that points the service at this server. */
  env(extra?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

interface Grant {
  login: string;
  clientId: string;
  redirectUri: string;
  challenge: string | null;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startCodehostServer(): Promise<CodehostServer> {
  const clientId = 'codehost-client';
  const clientSecret = 'codehost-secret';
  const accounts = new Map<string, CodehostAccount>();
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, string>();
  let url = '';

  async function accessToken(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const answer = (body: Record<string, string>) => {
      if ((req.headers.accept ?? '').includes('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      else res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' }).end(new URLSearchParams(body).toString());
    };
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return answer({ error: 'incorrect_client_credentials' });
    const grant = codes.get(form.get('code') ?? '');
    codes.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    const challengeOk = grant?.challenge === null || grant?.challenge === createHash('sha256').update(verifier).digest('base64url');
    if (!grant || grant.redirectUri !== form.get('redirect_uri') || !challengeOk) {
      return answer({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
    }
    const token = `gho_${randomBytes(12).toString('hex')}`;
    tokens.set(token, grant.login);
    answer({ access_token: token, token_type: 'bearer', scope: 'read:user,user:email,read:org' });
  }

  function api(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    const [, token = ''] = /^(?:bearer|token) (.+)$/i.exec(req.headers.authorization ?? '') ?? [];
    const account = accounts.get(tokens.get(token) ?? '');
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (!account) return json(401, { message: 'Bad credentials' });
    switch (path) {
      case '/api/user':
        return json(200, { id: account.id, login: account.login, name: account.name ?? null, email: null });
      case '/api/user/emails':
        return json(200, account.emails);
      case '/api/user/orgs':
        return json(
          200,
          (account.orgs ?? []).map((login) => ({ login })),
        );
      case '/api/user/teams':
        return json(
          200,
          (account.teams ?? []).map((team) => {
            const [org, slug] = team.split('/') as [string, string];
            return { slug, name: slug, organization: { login: org } };
          }),
        );
      default:
        return json(404, { message: 'Not Found' });
    }
  }

  const server = http.createServer((req, res) => {
    const requestUrl = new URL(req.url ?? '/', url);
    if (requestUrl.pathname === '/login/oauth/authorize') {
      const params = requestUrl.searchParams;
      const redirectUri = params.get('redirect_uri') ?? '';
      const code = randomBytes(10).toString('hex');
      codes.set(code, { login: params.get('login') ?? '', clientId: params.get('client_id') ?? '', redirectUri, challenge: params.get('code_challenge') });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', params.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (requestUrl.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      accessToken(req, res).catch((err) => res.writeHead(500).end(String(err)));
      return;
    }
    if (requestUrl.pathname.startsWith('/api/')) return api(req, res, requestUrl.pathname);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    clientId,
    clientSecret,
    accounts,
    env: (extra = {}) => ({
      OAUTH_CODEHOST_CLIENT_ID: clientId,
      OAUTH_CODEHOST_CLIENT_SECRET: clientSecret,
      OAUTH_CODEHOST_AUTH_URL: `${url}/login/oauth/authorize`,
      OAUTH_CODEHOST_TOKEN_URL: `${url}/login/oauth/access_token`,
      OAUTH_CODEHOST_API_URL: `${url}/api`,
      ...extra,
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
