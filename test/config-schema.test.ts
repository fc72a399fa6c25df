/**
 * The configuration schema (src/config/schema.ts) is the one list of variables: the docs are
 * written from it, every variable the code reads is in it, and the settings redact its secrets.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { effectiveSettings, loadConfig, REDACTED, VARIABLES, type Env } from '../src/config.ts';
import { renderConfigurationDoc } from '../src/config/docs.ts';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const saml = (file: string) => fileURLToPath(new URL(`fixtures/saml/${file}`, import.meta.url));

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** An environment turning every optional group on, each variable set to a value of its form. */
function everythingOn(dataDir: string): Env {
  return {
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    SECRET_KEY: 'secret-key-value-0123456789abcdefghij',
    JWT_SECRET: 'jwt-secret-value-0123456789abcdefghij',
    METRICS_TOKEN: 'metrics-token-value',
    SEED_ADMIN_EMAIL: 'admin@example.com',
    SEED_ADMIN_PASSWORD: 'seed-admin-password-value',
    API_KEYS: 'grafana:Viewer:legacy-key-value-0123456789',
    DECISION_LOG: 'file',
    SAML_ENABLED: 'true',
    SAML_ENTRY_POINT: 'https://idp.example/sso',
    SAML_ISSUER: 'gatehouse',
    SAML_CALLBACK_URL: 'https://gatehouse.example/api/saml/acs',
    SAML_IDP_CERT: saml('idp-cert.pem'),
    SAML_PRIVATE_KEY: saml('sp-key.pem'),
    SAML_CERTIFICATE: saml('sp-cert.pem'),
    ...Object.fromEntries(
      ['CODEHOST', 'WORKSPACE', 'GENERIC'].flatMap((provider) => [
        [`OAUTH_${provider}_CLIENT_ID`, `${provider.toLowerCase()}-client`],
        [`OAUTH_${provider}_CLIENT_SECRET`, `${provider.toLowerCase()}-client-secret-value`],
      ]),
    ),
    OAUTH_GENERIC_ISSUER_URL: 'https://sso.example/realms/main',
    AUDIT_STREAM: 'webhook',
    AUDIT_STREAM_URL: 'https://audit.example/hook',
    AUDIT_STREAM_BEARER_TOKEN: 'audit-stream-bearer-value',
    AUDIT_STREAM_HEADERS: 'X-Audit-Key: audit-stream-header-value',
    AUDIT_STREAM_SECRET: 'audit-stream-signing-value',
  };
}

/** Secrets another one excludes (both would set one header): each is shown with the other unset. */
const EXCLUSIVE: Record<string, Env> = {
  AUDIT_STREAM_BASIC_AUTH: { AUDIT_STREAM_BASIC_AUTH: 'audit-writer:audit-stream-password-value', AUDIT_STREAM_BEARER_TOKEN: '' },
};

describe('configuration schema', () => {
  let dataDir: string;
  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-schema-'));
  });
  after(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('docs/configuration.md is what the schema says (npm run docs:config writes it)', () => {
    const written = fs.readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    expect(written, 'docs/configuration.md differs from the schema: run npm run docs:config').to.equal(renderConfigurationDoc());
  });

  it('declares each variable once', () => {
    const names = VARIABLES.map((variable) => variable.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).to.deep.equal([]);
    for (const variable of VARIABLES) expect(variable.meaning, variable.name).to.not.equal('');
  });

  it('declares every variable the code reads from process.env', () => {
    const declared = new Set(VARIABLES.map((variable) => variable.name));
    const named: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const source = fs.readFileSync(file, 'utf8');
      for (const match of source.matchAll(/\benv(?:\.|\?\.|\[['"`])([A-Z][A-Z0-9_]*)/g)) named.push(match[1]!);
    }
    expect(named).to.not.be.empty;
    expect(named.filter((name) => !declared.has(name))).to.deep.equal([]);
  });

  it('reads no variable it does not declare, whichever groups are on', () => {
    const declared = new Set(VARIABLES.map((variable) => variable.name));
    const read = new Set<string>();
    const recording = (env: Env) =>
      new Proxy(env, {
        get(target, name) {
          if (typeof name === 'string') read.add(name);
          return target[name as string];
        },
      });
    loadConfig(recording({ NODE_ENV: 'test', DATA_DIR: dataDir }));
    loadConfig(recording(everythingOn(dataDir)));
    expect([...read].filter((name) => !declared.has(name))).to.deep.equal([]);
    expect(
      [...declared].filter((name) => !read.has(name)),
      'declared but never read',
    ).to.deep.equal([]);
  });

  it('shows every variable in the settings, each secret only as set', () => {
    const base = everythingOn(dataDir);
    const baseSettings = effectiveSettings(loadConfig(base));
    expect(Object.keys(baseSettings).sort()).to.deep.equal(VARIABLES.map((variable) => variable.name).sort());
    for (const variable of VARIABLES.filter((candidate) => candidate.secret)) {
      const env = { ...base, ...EXCLUSIVE[variable.name] };
      const settings = EXCLUSIVE[variable.name] ? effectiveSettings(loadConfig(env)) : baseSettings;
      const text = JSON.stringify(settings);
      const value = env[variable.name]!;
      expect(value, variable.name).to.be.a('string');
      expect(JSON.stringify(settings[variable.name]), variable.name).to.include(REDACTED);
      expect(text, variable.name).to.not.include(variable.name === 'API_KEYS' ? value.split(':')[2] : value);
    }
    expect(baseSettings.SEED_ADMIN_PASSWORD).to.equal(REDACTED);
    expect(baseSettings.API_KEYS).to.deep.equal([`grafana:Viewer:${REDACTED}`]);
  });

  it('names the variable and the expected form in its error', () => {
    const base = { NODE_ENV: 'test', DATA_DIR: dataDir };
    expect(() => loadConfig({ ...base, SHUTDOWN_TIMEOUT_MS: 'soon' })).to.throw('SHUTDOWN_TIMEOUT_MS must be an integer, got "soon"');
    expect(() => loadConfig({ ...base, BODY_LIMIT_BYTES: '10' })).to.throw('BODY_LIMIT_BYTES must be at least 1024, got 10');
    expect(() => loadConfig({ ...base, DECISION_LOG: 'file', DECISION_LOG_SAMPLE: '2' })).to.throw('DECISION_LOG_SAMPLE must be a number from 0 to 1, got "2"');
    expect(() => loadConfig({ ...base, ROTATE_SECRETS: 'PASSWORD' })).to.throw('ROTATE_SECRETS names JWT_SECRET or SECRET_KEY, got "PASSWORD"');
  });
});
