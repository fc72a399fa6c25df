/**
 * The admin CLI as an operator runs it: a child process on the service's database (SQLite, or
 * MariaDB with TEST_DB=mysql), a password on stdin. reset-password lets a locked-out admin in
 * again and signs their sessions out; create-admin makes a server admin; revoke-sessions says how
 * many it revoked; bad usage exits 2 with one line, before any database is opened.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { describeDatabase } from '../src/config.ts';
import { createTestDatabase, startTestApp, TEST_DB, type TestApp } from './helpers/app.ts';
import { auditEntries, createUser, DEFAULT_PASSWORD, liveSessions, passwordLogin, sessionCookie } from './helpers/factories.ts';
import { runCli } from './helpers/cli.ts';

const NEW_PASSWORD = 'a brand new long passphrase';

describe('admin CLI', function () {
  // Each run boots a TypeScript process of its own.
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  const cli = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) => runCli(app, args, options);

  const me = (cookie: string) => app.request('GET', '/api/user', { cookie });
  /** The line with which the CLI names the database it opened, on stderr. */
  const opened = () => `database: ${describeDatabase(app.services.config)}\n`;

  describe('reset-password', () => {
    it('sets the password from stdin, lifts the lockout, revokes every session, audited as the system', async () => {
      const admin = await createUser(app, { login: 'locked-admin', svcAdmin: true, role: 'Admin' });
      const otherSession = await sessionCookie(app, admin.id);
      for (let i = 0; i < 5; i++) expect((await passwordLogin(app, 'locked-admin', 'wrong password!')).status).to.equal(401);
      expect((await passwordLogin(app, 'locked-admin', DEFAULT_PASSWORD)).status).to.equal(429);

      const result = await cli(['reset-password', 'locked-admin'], { stdin: `${NEW_PASSWORD}\n` });
      expect(result, result.stderr).to.include({ code: 0, stderr: opened() });
      expect(result.stdout.trim()).to.equal('password of locked-admin reset; 2 sessions revoked; login lockout lifted');

      expect((await me(admin.cookie)).status).to.equal(401);
      expect((await me(otherSession)).status).to.equal(401);
      expect(await liveSessions(app, admin.id)).to.equal(0);
      expect((await passwordLogin(app, 'locked-admin', DEFAULT_PASSWORD)).status).to.equal(401);
      const signedIn = await passwordLogin(app, 'locked-admin', NEW_PASSWORD);
      expect(signedIn.status).to.equal(200);
      expect((await me(`svc_session=${signedIn.cookies.svc_session}`)).body.login).to.equal('locked-admin');

      const [changed] = await auditEntries(app, { action: 'user.password_changed', target_id: admin.id });
      expect(changed).to.deep.include({ actor_type: 'system', actor_id: null, outcome: 'success', metadata: { by: 'cli', lockoutCleared: true } });
      const [revoked] = await auditEntries(app, { action: 'session.revoked', target_id: admin.id });
      expect(revoked).to.deep.include({ actor_type: 'system', metadata: { count: 2, reason: 'password reset with the admin CLI' } });
    });

    it('applies the password policy and changes nothing when it refuses (exit code 2)', async () => {
      const user = await createUser(app, { login: 'policy-user' });
      const cases: Array<[string, RegExp]> = [
        ['short\n', /^error: the password must be at least 12 characters$/],
        ['password1234\n', /^error: this password is too common/],
        ['policy-user\n', /^error: the password must be at least 12 characters$/],
        ['policy-user@example.test', /^error: the password must not be your login or email$/],
        ['', /^error: no password on stdin/],
      ];
      for (const [stdin, message] of cases) {
        const result = await cli(['reset-password', 'policy-user'], { stdin });
        expect(result.code, stdin).to.equal(2);
        expect(result.stderr.trim().split('\n').at(-1), stdin).to.match(message);
      }
      expect((await me(user.cookie)).status).to.equal(200);
      expect((await passwordLogin(app, 'policy-user', DEFAULT_PASSWORD)).status).to.equal(200);
    });

    it('takes no password from the command line, and says when the user does not exist (exit code 2)', async () => {
      await createUser(app, { login: 'argv-user' });
      const argv = await cli(['reset-password', 'argv-user', NEW_PASSWORD]);
      expect(argv.code).to.equal(2);
      expect(argv.stderr.trim()).to.equal('error: reset-password takes exactly one login (a password is read from stdin, never from the command line)');
      expect((await passwordLogin(app, 'argv-user', DEFAULT_PASSWORD)).status).to.equal(200);

      const missing = await cli(['reset-password', 'nobody-here'], { stdin: NEW_PASSWORD });
      expect(missing).to.deep.equal({ code: 2, stdout: '', stderr: `${opened()}error: user nobody-here not found\n` });
    });
  });

  describe('create-admin', () => {
    it('creates a server admin who can sign in and administer the server', async () => {
      const result = await cli(['create-admin', 'Ops-Admin', '--email', 'ops@example.test', '--name=Ops Admin'], { stdin: NEW_PASSWORD });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/^created server admin ops-admin \(usr_\w+\)\n$/);

      const row = await app.db('users').where('login', 'ops-admin').first();
      expect(row).to.deep.include({ email: 'ops@example.test', name: 'Ops Admin' });
      expect(!!row.is_svc_admin).to.equal(true);
      expect(await app.db('org_members').where({ user_id: row.id }).select('org_id', 'role')).to.deep.equal([{ org_id: 'org_main', role: 'Admin' }]);
      const [created] = await auditEntries(app, { action: 'user.created', target_id: row.id });
      expect(created).to.deep.include({ actor_type: 'system', metadata: { isSvcAdmin: true, orgRole: 'Admin', via: 'cli' } });

      const signedIn = await passwordLogin(app, 'ops@example.test', NEW_PASSWORD);
      expect(signedIn.status).to.equal(200);
      const users = await app.request('GET', '/api/admin/users', { cookie: `svc_session=${signedIn.cookies.svc_session}` });
      expect(users.status).to.equal(200);
    });

    it('refuses a login or email that is taken, bad fields and weak passwords (exit code 2)', async () => {
      await createUser(app, { login: 'taken', email: 'taken@example.test' });
      const before = await app.count('users');
      expect(await cli(['create-admin', 'TAKEN'], { stdin: NEW_PASSWORD })).to.deep.equal({
        code: 2,
        stdout: '',
        stderr: `${opened()}error: a user with that login or email already exists\n`,
      });
      expect((await cli(['create-admin', 'fresh', '--email', 'taken@example.test'], { stdin: NEW_PASSWORD })).code).to.equal(2);
      const badLogin = await cli(['create-admin', 'no spaces'], { stdin: NEW_PASSWORD });
      expect(badLogin.code).to.equal(2);
      expect(badLogin.stderr).to.match(/^error: the login is not valid/);
      expect((await cli(['create-admin', 'fresh', '--email', 'not-an-email'], { stdin: NEW_PASSWORD })).stderr).to.match(/^error: --email is not valid/);
      expect((await cli(['create-admin', 'fresh'], { stdin: 'too short' })).code).to.equal(2);
      expect(await app.count('users')).to.equal(before);
    });
  });

  describe('revoke-sessions', () => {
    it('revokes every session of the user and says how many', async () => {
      const user = await createUser(app, { login: 'roaming' });
      const second = await sessionCookie(app, user.id);
      const bystander = await createUser(app);
      const result = await cli(['revoke-sessions', 'roaming']);
      expect(result).to.deep.equal({ code: 0, stdout: 'revoked 2 sessions of roaming\n', stderr: opened() });
      expect((await me(user.cookie)).status).to.equal(401);
      expect((await me(second)).status).to.equal(401);
      expect((await me(bystander.cookie)).status).to.equal(200);
      expect((await cli(['revoke-sessions', 'roaming'])).stdout).to.equal('revoked 0 sessions of roaming\n');
      const entries = await auditEntries(app, { action: 'session.revoked', target_id: user.id });
      expect(entries.map((entry) => [entry.actor_type, entry.metadata?.count])).to.deep.equal([
        ['system', 2],
        ['system', 0],
      ]);
    });
  });

  describe('the database it acts on', () => {
    const HINT = 'set DATA_DIR or DATABASE_URL as the service has them';

    it('refuses an empty DATA_DIR (no database file) with a hint, for every command, and creates nothing', async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-'));
      try {
        const file = path.join(dataDir, 'gatehouse.sqlite');
        for (const args of [
          ['revoke-sessions', 'someone'],
          ['create-admin', 'someone'],
        ]) {
          const result = await cli(args, { stdin: NEW_PASSWORD, env: { DATABASE_URL: '', DATA_DIR: dataDir } });
          expect(result.code, args[0]).to.equal(2);
          expect(result.stdout).to.equal('');
          expect(result.stderr).to.equal(`error: no database at sqlite:${file} (the service has not run with it): ${HINT}; nothing was created\n`);
        }
        expect(fs.readdirSync(dataDir)).to.deep.equal([]);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it('refuses a database with no tables, even for create-admin, and migrates nothing into it', async () => {
      const database = await createTestDatabase();
      try {
        const config = { databaseUrl: database.url, sqliteFile: '' };
        if (TEST_DB === 'sqlite') fs.writeFileSync(database.url.slice('sqlite:'.length), '');
        for (const args of [
          ['revoke-sessions', 'someone'],
          ['create-admin', 'someone'],
        ]) {
          const result = await cli(args, { stdin: NEW_PASSWORD, env: { DATABASE_URL: database.url } });
          expect(result.code, args[0]).to.equal(2);
          expect(result.stderr).to.equal(`error: ${describeDatabase(config)} has no tables (the service has not run with it): ${HINT}\n`);
        }
      } finally {
        await database.drop();
      }
    });

    it('on a database without users (setup open), refuses all but create-admin, which makes the first admin', async () => {
      const fresh = await startTestApp();
      try {
        const env = { DATABASE_URL: fresh.services.config.databaseUrl ?? '' };
        const database = describeDatabase(fresh.services.config);
        const refused = await cli(['revoke-sessions', 'someone'], { env });
        expect(refused).to.deep.equal({
          code: 2,
          stdout: '',
          stderr: `error: ${database} has no users (a fresh installation, not the service's database in use?): ${HINT}; revoke-sessions needs users\n`,
        });
        const created = await cli(['create-admin', 'first-admin'], { stdin: NEW_PASSWORD, env });
        expect(created.code, created.stderr).to.equal(0);
        expect(created.stderr).to.equal(`database: ${database}\n`);
        expect(await fresh.count('users', { login: 'first-admin', is_svc_admin: true })).to.equal(1);
        expect((await cli(['revoke-sessions', 'first-admin'], { env })).stdout).to.equal('revoked 0 sessions of first-admin\n');
      } finally {
        await fresh.close();
      }
    });
  });

  describe('usage', () => {
    it('documents every command with help and <command> --help (exit code 0)', async () => {
      const help = await cli(['help']);
      expect(help.code).to.equal(0);
      for (const command of ['reset-password <login>', 'create-admin <login>', 'revoke-sessions <login>', 'import-legacy-acl', 'migrate-legacy-acl']) {
        expect(help.stdout).to.include(command);
      }
      const one = await cli(['create-admin', '--help']);
      expect(one.code).to.equal(0);
      expect(one.stdout).to.match(/^usage: npm run cli -- create-admin <login> \[--email <email>\] \[--name <name>\]\n/);
    });

    it('exits 2 with one line for bad usage and bad configuration', async () => {
      const cases: Array<[string[], string, Record<string, string>?]> = [
        [[], 'usage: npm run cli'],
        [['frobnicate'], 'error: unknown command frobnicate (npm run cli -- help lists them)'],
        [['revoke-sessions'], 'error: revoke-sessions takes exactly one login'],
        [['revoke-sessions', 'a', '--org', 'org_main'], 'error: unknown option --org'],
        [['create-admin', 'someone', '--email'], 'error: --email needs a value'],
        [['revoke-sessions', 'someone'], 'error: TRUSTED_PROXIES: "10.0.0.0/99" is not an IP address or a CIDR', { TRUSTED_PROXIES: '10.0.0.0/99' }],
      ];
      for (const [args, message, env] of cases) {
        const result = await cli(args, { env });
        expect(result.code, args.join(' ')).to.equal(2);
        expect(result.stderr + result.stdout, args.join(' ')).to.include(message);
        if (args.length > 0) expect(result.stderr.trim().split('\n'), args.join(' ')).to.have.length(1);
      }
    });
  });
});
