import { expect } from 'chai';
import fs from 'node:fs';
import { ConfigError, loadConfig } from '../src/config.ts';
import { fixture, samlEnv } from './helpers/saml-idp.ts';

describe('SAML configuration', () => {
  const secrets = { SECRET_KEY: 's'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
  const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...secrets, ...env });

  it('is off unless SAML_ENABLED=true', () => {
    expect(load({}).saml).to.equal(null);
    expect(load({ ...samlEnv(), SAML_ENABLED: 'false' }).saml).to.equal(null);
  });

  it('reads every SAML_* variable: certificates and keys from files', () => {
    const saml = load(samlEnv())!.saml!;
    expect(saml).to.include({
      entryPoint: 'https://idp.example.test/sso',
      logoutUrl: 'https://idp.example.test/slo',
      issuer: 'https://gatehouse.example.test/saml',
      callbackUrl: 'https://gatehouse.example.test/api/saml/acs',
      idpIssuer: 'https://idp.example.test/metadata',
      wantAssertionsSigned: true,
    });
    expect(saml.idpCert).to.equal(fs.readFileSync(fixture('idp-cert.pem'), 'utf8'));
    expect(saml.privateKey).to.equal(fs.readFileSync(fixture('sp-key.pem'), 'utf8'));
    expect(saml.attributeMapping).to.deep.equal({ login: 'uid', email: 'mail', name: 'displayName', groups: 'groups' });
  });

  it('takes inline PEM too, with real or \\n-escaped line breaks', () => {
    const cert = fs.readFileSync(fixture('idp-cert.pem'), 'utf8').trim();
    expect(load(samlEnv({ SAML_IDP_CERT: cert })).saml!.idpCert).to.equal(cert);
    expect(load(samlEnv({ SAML_IDP_CERT: cert.replace(/\n/g, '\\n') })).saml!.idpCert).to.equal(cert);
  });

  it('has defaults: signed assertions, NameID as login, the entry point for logout, no team sync', () => {
    const minimal = {
      SAML_ENABLED: 'true',
      SAML_ENTRY_POINT: 'https://idp.example.test/sso',
      SAML_ISSUER: 'gatehouse',
      SAML_CALLBACK_URL: 'https://gatehouse.example.test/api/saml/acs',
      SAML_IDP_CERT: fixture('idp-cert.pem'),
    };
    const saml = load(minimal).saml!;
    expect(saml).to.include({ logoutUrl: minimal.SAML_ENTRY_POINT, wantAssertionsSigned: true, privateKey: null, certificate: null, idpIssuer: null });
    expect(saml.attributeMapping).to.deep.equal({ login: 'NameID', email: 'email', name: 'displayName', groups: null });
  });

  it('refuses missing or malformed settings with the variable named', () => {
    expect(() => load(samlEnv({ SAML_ENTRY_POINT: '' }))).to.throw(ConfigError, /SAML_ENTRY_POINT is required/);
    expect(() => load(samlEnv({ SAML_CALLBACK_URL: 'ftp://x/acs' }))).to.throw(ConfigError, /SAML_CALLBACK_URL must be an http\(s\) URL/);
    expect(() => load(samlEnv({ SAML_ISSUER: '' }))).to.throw(ConfigError, /SAML_ISSUER is required/);
    expect(() => load(samlEnv({ SAML_IDP_CERT: '' }))).to.throw(ConfigError, /SAML_IDP_CERT is required/);
    expect(() => load(samlEnv({ SAML_IDP_CERT: '/no/such/file.pem' }))).to.throw(ConfigError, /SAML_IDP_CERT is neither an inline PEM nor a readable file/);
    expect(() => load(samlEnv({ SAML_IDP_CERT: fixture('idp-key.pem') }))).to.throw(ConfigError, /SAML_IDP_CERT does not hold a PEM certificate/);
    expect(() => load(samlEnv({ SAML_PRIVATE_KEY: fixture('sp-cert.pem') }))).to.throw(ConfigError, /SAML_PRIVATE_KEY does not hold a PEM private key/);
    expect(() => load(samlEnv({ SAML_PRIVATE_KEY: '' }))).to.throw(ConfigError, /SAML_CERTIFICATE needs SAML_PRIVATE_KEY/);
    expect(() => load(samlEnv({ SAML_WANT_ASSERTIONS_SIGNED: 'sometimes' }))).to.throw(ConfigError, /SAML_WANT_ASSERTIONS_SIGNED/);
  });
});
