import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertDataDirWritable, ConfigError, describeDatabase, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  const secrets = { SECRET_KEY: 's'.repeat(32), JWT_SECRET: 'j'.repeat(32) };

  it('has the spec defaults', () => {
    const config = loadConfig({ NODE_ENV: 'test', ...secrets });
    expect(config.port).to.equal(3000);
    expect(config.session).to.include({
      maxLifetimeMs: 2_592_000_000,
      idleTimeoutMs: 604_800_000,
      rotationIntervalMs: 600_000,
      rotationGraceMs: 30_000,
      cookieSecure: false,
    });
    expect(config.auditRetentionDays).to.equal(90);
    expect(config.legacyAclEnabled).to.equal(true);
    expect(config.databaseUrl).to.equal(null);
  });

  it('reads the OAuth providers: off without a client id, defaults for the rest, mistakes refused', () => {
    expect(loadConfig({ NODE_ENV: 'test', ...secrets }).oauth).to.deep.equal({ codehost: null, workspace: null, generic: null });
    const generic = { OAUTH_GENERIC_CLIENT_ID: 'id', OAUTH_GENERIC_CLIENT_SECRET: 'secret', OAUTH_GENERIC_ISSUER_URL: 'https://idp.example/realms/x' };
    expect(loadConfig({ NODE_ENV: 'test', ...secrets, ...generic }).oauth.generic).to.deep.equal({
      clientId: 'id',
      clientSecret: 'secret',
      allowSignUp: false,
      allowEmailLinking: false,
      defaultRole: 'Viewer',
      defaultOrgId: 'org_main',
      issuerUrl: 'https://idp.example/realms/x',
      scopes: ['openid', 'email', 'profile'],
      emailAttributeName: 'email',
    });
    const workspace = loadConfig({
      NODE_ENV: 'test',
      ...secrets,
      OAUTH_WORKSPACE_CLIENT_ID: 'w',
      OAUTH_WORKSPACE_CLIENT_SECRET: 's',
      OAUTH_WORKSPACE_ALLOWED_DOMAINS: 'Example.com, example.org',
    });
    expect(workspace.oauth.workspace).to.include({ issuerUrl: 'https://accounts.google.com' });
    expect(loadConfig({ NODE_ENV: 'test', ...secrets, ...generic, OAUTH_GENERIC_ALLOW_EMAIL_LINKING: 'true' }).oauth.generic).to.include({
      allowEmailLinking: true,
    });
    expect(() => loadConfig({ NODE_ENV: 'test', ...secrets, ...generic, OAUTH_GENERIC_ALLOW_EMAIL_LINKING: 'sometimes' })).to.throw(
      /OAUTH_GENERIC_ALLOW_EMAIL_LINKING/,
    );
    expect(workspace.oauth.workspace!.allowedDomains).to.deep.equal(['example.com', 'example.org']);
    expect(() => loadConfig({ ...secrets, OAUTH_GENERIC_CLIENT_ID: 'id' })).to.throw(ConfigError, /OAUTH_GENERIC_CLIENT_SECRET is required/);
    expect(() => loadConfig({ ...secrets, ...generic, OAUTH_GENERIC_ISSUER_URL: '' })).to.throw(ConfigError, /OAUTH_GENERIC_ISSUER_URL is required/);
    expect(() => loadConfig({ ...secrets, ...generic, OAUTH_GENERIC_ISSUER_URL: 'idp.example' })).to.throw(ConfigError, /must be an http\(s\) URL/);
    expect(() => loadConfig({ ...secrets, ...generic, OAUTH_GENERIC_DEFAULT_ROLE: 'ServerAdmin' })).to.throw(
      ConfigError,
      /DEFAULT_ROLE must be Admin, Editor, Viewer or None/,
    );
    expect(() => loadConfig({ ...secrets, ...generic, OAUTH_GENERIC_SCOPES: 'email profile' })).to.throw(ConfigError, /must include openid/);
    expect(() => loadConfig({ ...secrets, ...generic, OAUTH_GENERIC_ALLOW_SIGN_UP: 'maybe' })).to.throw(ConfigError, /ALLOW_SIGN_UP must be true or false/);
  });

  it('requires JWT_SECRET and SECRET_KEY of at least 32 characters in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', SECRET_KEY: secrets.SECRET_KEY })).to.throw(ConfigError, /JWT_SECRET is required/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: secrets.JWT_SECRET })).to.throw(ConfigError, /SECRET_KEY is required/);
    expect(() => loadConfig({ NODE_ENV: 'production', ...secrets, JWT_SECRET: 'short' })).to.throw(ConfigError, /at least 32/);
    expect(loadConfig({ NODE_ENV: 'production', ...secrets }).jwtSecret).to.equal(secrets.JWT_SECRET);
  });

  it('generates and keeps development secrets under DATA_DIR', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-config-'));
    const first = loadConfig({ DATA_DIR: dir });
    const second = loadConfig({ DATA_DIR: dir });
    expect(first.jwtSecret).to.have.length.greaterThan(31).and.equal(second.jwtSecret);
    expect(first.secretKey).to.not.equal(first.jwtSecret);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('rejects malformed values with the variable named', () => {
    expect(() => loadConfig({ PORT: 'eighty', ...secrets })).to.throw(ConfigError, /PORT/);
    expect(() => loadConfig({ SESSION_COOKIE_SECURE: 'maybe', ...secrets })).to.throw(ConfigError, /SESSION_COOKIE_SECURE/);
  });

  it('reads lists: CORS_ORIGINS (* means any) and TRUSTED_PROXIES', () => {
    const config = loadConfig({ CORS_ORIGINS: '*', TRUSTED_PROXIES: '10.0.0.1, ::ffff:10.0.0.2', ...secrets });
    expect(config.corsOrigins).to.deep.equal([]);
    expect(config.trustedProxies).to.deep.equal(['10.0.0.1', '10.0.0.2']);
  });

  it('refuses a DATABASE_URL it cannot open instead of falling back to SQLite', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/gatehouse', ...secrets })).to.throw(
      ConfigError,
      'DATABASE_URL must start with mysql:// or sqlite:, got "postgres:"',
    );
    expect(() => loadConfig({ DATABASE_URL: '/var/lib/gatehouse.sqlite', ...secrets })).to.throw(ConfigError, 'got no scheme');
    expect(() => loadConfig({ DATABASE_URL: 'mysql://[bad', ...secrets })).to.throw(ConfigError, /DATABASE_URL is not a valid URL/);
    expect(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.sqlite', ...secrets }).databaseUrl).to.equal('sqlite:/tmp/x.sqlite');
  });

  it('knows the pino log levels and nothing else', () => {
    expect(loadConfig({ LOG_LEVEL: 'DEBUG', ...secrets }).logLevel).to.equal('debug');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose', ...secrets })).to.throw(
      ConfigError,
      /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/,
    );
  });

  it('refuses a PORT out of range', () => {
    expect(() => loadConfig({ PORT: '65536', ...secrets })).to.throw(ConfigError, 'PORT must be at most 65535, got 65536');
    expect(() => loadConfig({ PORT: '-1', ...secrets })).to.throw(ConfigError, /PORT must be at least 0/);
  });

  it('describes the database without its password', () => {
    expect(describeDatabase({ databaseUrl: 'mysql://app:s3cret@db:3306/gatehouse', sqliteFile: '' })).to.equal('mysql://app:*****@db:3306/gatehouse');
    expect(describeDatabase({ databaseUrl: null, sqliteFile: '/data/gatehouse.sqlite' })).to.equal('sqlite:/data/gatehouse.sqlite');
  });

  it('says when DATA_DIR cannot be written', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-config-'));
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    expect(() => assertDataDirWritable({ databaseUrl: null, dataDir: file })).to.throw(ConfigError, `DATA_DIR ${file} is not a writable directory`);
    expect(() => loadConfig({ DATA_DIR: path.join(file, 'below') })).to.throw(ConfigError, /DATA_DIR .* is not a writable directory \(ENOTDIR\)/);
    assertDataDirWritable({ databaseUrl: null, dataDir: path.join(dir, 'new') });
    expect(fs.readdirSync(path.join(dir, 'new'))).to.deep.equal([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
