/**
 * Code-host (GitHub-shaped OAuth 2.0) login against a small server speaking GitHub's OAuth and
 * REST shapes: the primary verified email, allowed organizations, team sync into the default
 * org's `<org>/<team>` teams, and the code exchange's failures.
 */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addTeamMember, assignRoleToTeam, auditEntries, buildTeam, buildUser } from './helpers/factories.ts';
import { startCodehostServer, type CodehostAccount, type CodehostServer } from './helpers/codehost-server.ts';

describe('code host login', () => {
  let host: CodehostServer;
  let app: TestApp;
  let sequence = 0;

  before(async () => {
    host = await startCodehostServer();
    app = await startTestApp({
      env: host.env({ OAUTH_CODEHOST_ALLOW_SIGN_UP: 'true', OAUTH_CODEHOST_ALLOWED_ORGANIZATIONS: 'Acme,initech', OAUTH_CODEHOST_SYNC_TEAMS: 'true' }),
    });
  });
  after(async () => {
    await app?.close();
    await host?.close();
  });

  function account(overrides: Partial<CodehostAccount> = {}): CodehostAccount {
    sequence += 1;
    const login = `octo${sequence}`;
    const created: CodehostAccount = {
      id: 1000 + sequence,
      login,
      name: `Octo ${sequence}`,
      emails: [{ email: `${login}@users.example`, primary: true, verified: true }],
      orgs: ['acme'],
      ...overrides,
    };
    host.accounts.set(created.login, created);
    return created;
  }

  /** The browser's round trip: start, the code host's redirect back, the callback. */
  async function signIn(target: TestApp, login: string, options: { tamper?: (callback: URL) => void } = {}) {
    const start = await target.request('GET', '/api/login/codehost');
    expect(start.status).to.equal(302);
    const authorize = new URL(start.headers.get('location')!);
    authorize.searchParams.set('login', login);
    const cookie = start.setCookie.find((c) => c.startsWith('svc_oauth_state='))!.split(';')[0]!;
    const back = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(back.headers.get('location')!);
    options.tamper?.(callback);
    const response = await target.request('GET', `${callback.pathname}${callback.search}`, { cookie });
    expect(response.status).to.equal(302);
    const location = new URL(response.headers.get('location')!, target.url);
    const session = response.setCookie.find((c) => /^svc_session=[^;]/.test(c))?.split(';')[0];
    return { authorize, location, session, callback, cookie };
  }

  it('asks for the user, email and org scopes with state and PKCE S256', async () => {
    const start = await app.request('GET', '/api/login/codehost');
    const url = new URL(start.headers.get('location')!);
    expect(`${url.origin}${url.pathname}`).to.equal(`${host.url}/login/oauth/authorize`);
    expect(url.searchParams.get('scope')).to.equal('read:user user:email read:org');
    expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(url.searchParams.get('state')).to.match(/^[\w-]{32,}$/);
    expect(url.searchParams.get('redirect_uri')).to.equal(`${app.url}/api/login/codehost/callback`);
  });

  it('signs up a member of an allowed organization with the primary verified email, keyed by the numeric id', async () => {
    const octo = account({
      emails: [
        { email: 'old@users.example', primary: false, verified: true },
        { email: 'Main@Users.example', primary: true, verified: true },
      ],
      orgs: ['other', 'ACME'],
    });
    const { location, session } = await signIn(app, octo.login);
    expect(location.pathname).to.equal('/');
    const me = await app.request('GET', '/api/user', { cookie: session! });
    expect(me.body).to.include({ login: octo.login, email: 'main@users.example', name: octo.name });
    expect(me.body.authLabels).to.deep.equal(['Code host']);
    const link = await app.db('user_auth_links').where({ auth_module: 'oauth_codehost', user_id: me.body.id }).first();
    expect(link).to.include({ auth_id: String(octo.id), issuer: `${host.url}/api` });
    const [login] = await auditEntries(app, { action: 'user.login', actor_id: me.body.id });
    expect(login!.metadata).to.deep.equal({ method: 'oauth_codehost' });
  });

  it('never keeps an unverified primary email, and joins no existing account by email while linking is off', async () => {
    const existing = await buildUser(app, { email: 'verified-later@users.example' });
    const unverified = account({ emails: [{ email: 'verified-later@users.example', primary: true, verified: false }] });
    // Without a verified primary email the user has none: sign-up proceeds without an email, no link to the existing account.
    const first = await signIn(app, unverified.login);
    const me = await app.request('GET', '/api/user', { cookie: first.session! });
    expect(me.body.id).not.to.equal(existing.id);
    expect(me.body.email).to.equal('');

    const secondaryOnly = account({
      emails: [
        { email: 'someone@users.example', primary: true, verified: false },
        { email: 'verified-later@users.example', primary: false, verified: true },
      ],
    });
    const second = await signIn(app, secondaryOnly.login);
    expect((await app.request('GET', '/api/user', { cookie: second.session! })).body.id).not.to.equal(existing.id);

    // A verified primary email of an existing account does not join it either: email linking is off.
    const verified = account({ emails: [{ email: 'verified-later@users.example', primary: true, verified: true }] });
    const third = await signIn(app, verified.login);
    expect(third.session).to.equal(undefined);
    expect(third.location.searchParams.get('error')).to.equal('an account with this email already exists: sign in to it and link Code host from your profile');
    const failure = (await auditEntries(app, { action: 'user.login_failed' })).at(-1)!;
    expect(failure.metadata).to.deep.equal({ method: 'oauth_codehost', reason: 'email linking is off for oauth_codehost' });
    expect(await app.count('user_auth_links', { user_id: existing.id })).to.equal(0);
  });

  it('refuses users outside the allowed organizations', async () => {
    const outsider = account({ orgs: ['acme-evil', 'other'] });
    const { location, session } = await signIn(app, outsider.login);
    expect(location.pathname).to.equal('/login');
    expect(location.searchParams.get('error')).to.equal('you are not a member of an organization allowed to sign in here');
    expect(session).to.equal(undefined);
    expect(await app.count('user_auth_links', { auth_id: String(outsider.id) })).to.equal(0);
    const failure = (await auditEntries(app, { action: 'user.login_failed' })).at(-1)!;
    expect(failure.metadata).to.deep.equal({ method: 'oauth_codehost', reason: 'not in acme, initech' });
  });

  it('syncs the default org’s <org>/<team> teams at each login, leaving other teams alone', async () => {
    const backend = await buildTeam(app, { name: 'acme/backend' });
    const frontend = await buildTeam(app, { name: 'Acme/Frontend' });
    const ops = await buildTeam(app, { name: 'initech/ops' });
    const manual = await buildTeam(app, { name: 'Hand-made team' });
    const octo = account({ teams: ['acme/backend', 'acme/frontend', 'acme/unmapped'] });
    const first = await signIn(app, octo.login);
    const userId = (await app.request('GET', '/api/user', { cookie: first.session! })).body.id;
    await addTeamMember(app, manual, userId);
    const teamsOf = async () => (await app.db('team_members').where('user_id', userId).select('team_id')).map((row: { team_id: string }) => row.team_id).sort();
    expect(await teamsOf()).to.deep.equal([backend.id, frontend.id, manual.id].sort());

    octo.teams = ['initech/ops', 'acme/frontend'];
    await signIn(app, octo.login);
    expect(await teamsOf()).to.deep.equal([frontend.id, ops.id, manual.id].sort());
    const removed = await auditEntries(app, { action: 'team.member_removed', target_id: backend.id });
    expect(removed.at(-1)!).to.include({ actor_id: userId, outcome: 'success' });
    expect(removed.at(-1)!.metadata).to.include({ userId, via: 'oauth_codehost' });

    // The policy follows at once: the role of a team the user was synced into applies, and stops applying.
    await assignRoleToTeam(app, ops, 'fixed:org.users:reader');
    const permissions = async (session: string) => (await app.request('GET', '/api/user/permissions', { cookie: session })).body;
    const joined = await signIn(app, octo.login);
    expect(await permissions(joined.session!)).to.have.property('org.users:read');
    octo.teams = [];
    const left = await signIn(app, octo.login);
    expect(await permissions(left.session!)).not.to.have.property('org.users:read');
    expect(await teamsOf()).to.deep.equal([manual.id]);
  });

  it('fails when the code is bad (HTTP 200 with an error field) or replayed', async () => {
    const octo = account();
    const bad = await signIn(app, octo.login, { tamper: (callback) => callback.searchParams.set('code', 'not-a-code') });
    expect(bad.location.pathname).to.equal('/login');
    expect(bad.location.searchParams.get('error')).to.equal('Code host login failed: try again');
    expect(bad.session).to.equal(undefined);
    expect((await auditEntries(app, { action: 'user.login_failed' })).at(-1)!.metadata!.reason).to.match(/bad_verification_code/);

    const good = await signIn(app, octo.login);
    expect(good.session).to.be.a('string');
    const replay = await app.request('GET', `${good.callback.pathname}${good.callback.search}`, { cookie: good.cookie });
    expect(new URL(replay.headers.get('location')!, app.url).searchParams.get('error')).to.equal('Code host login failed: try again');
    expect(replay.setCookie.some((c) => /^svc_session=[^;]/.test(c))).to.equal(false);
  });

  it('refuses an unknown user when sign-up is off', async () => {
    const closed = await startTestApp({ env: host.env() });
    try {
      const octo = account();
      const { location } = await signIn(closed, octo.login);
      expect(location.searchParams.get('error')).to.match(/sign-up is disabled/);
      expect(await closed.count('user_auth_links')).to.equal(0);
    } finally {
      await closed.close();
    }
  });
});
