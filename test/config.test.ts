import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.ts';

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
});
