import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { expect } from 'chai';
import { ConfigError } from '../src/config.ts';
import { escapeFilterValue } from '../src/identity/providers/ldap/client.ts';
import { loadLdapSettings } from '../src/identity/providers/ldap/config.ts';
import { startServices } from '../src/startup.ts';
import { createTestDatabase, startTestApp, testConfig } from './helpers/app.ts';
import { api, createUser } from './helpers/factories.ts';
import { defaultMappings, ldapToml, PEOPLE, startDirectory, writeLdapConfig, type ServerOptions, type Slapd } from './helpers/ldap.ts';
import { freePort, SERVICE_PASSWORD } from './helpers/slapd.ts';
import { requirePeer } from './helpers/peers.ts';

describe('LDAP connections: TLS on and off, failover', () => {
  let slapd: Slapd;

  before(async function () {
    requirePeer(this, 'slapd');
    slapd = await startDirectory();
  });
  after(async () => {
    await slapd?.stop();
  });

  /** Whether bob signs in through a server configured as `servers`, and what the status endpoint says of each. */
  async function attempt(servers: ServerOptions[]) {
    const app = await startTestApp({ env: writeLdapConfig(servers.map((server) => ({ mappings: defaultMappings('org_main'), ...server }))).env });
    try {
      const res = await app.request('POST', '/api/login', { body: { user: 'bob', password: PEOPLE.bob.password } });
      const root = await createUser(app, { login: 'root', svcAdmin: true });
      const status = await api(app, root).get('/api/admin/ldap/status');
      return { status: res.status, servers: status.body as Array<{ available: boolean; error: string | null }> };
    } finally {
      await app.close();
    }
  }

  it('plain LDAP (TLS off)', async () => {
    expect((await attempt([{ port: slapd.port }])).status).to.equal(200);
  });

  it('StartTLS with the CA given in root_ca_cert', async () => {
    const result = await attempt([{ port: slapd.port, startTls: true, rootCaCert: slapd.caCertFile }]);
    expect(result.status).to.equal(200);
    expect(result.servers[0]).to.include({ available: true });
  });

  it('ldaps (use_ssl) with the CA given in root_ca_cert', async () => {
    expect((await attempt([{ port: slapd.tlsPort, useSsl: true, rootCaCert: slapd.caCertFile }])).status).to.equal(200);
  });

  it('verifies certificates by default: an untrusted one refuses the login (401), and the status says why', async () => {
    for (const server of [
      { port: slapd.port, startTls: true },
      { port: slapd.tlsPort, useSsl: true },
    ]) {
      const result = await attempt([server]);
      expect(result.status).to.equal(401);
      expect(result.servers[0]!.available).to.equal(false);
      expect(result.servers[0]!.error).to.match(/certificate/i);
    }
  });

  it('ssl_skip_verify = true accepts an untrusted certificate', async () => {
    expect((await attempt([{ port: slapd.tlsPort, useSsl: true, sslSkipVerify: true }])).status).to.equal(200);
  });

  it('tries the second server when the first does not answer', async () => {
    const result = await attempt([{ port: await freePort() }, { port: slapd.port }]);
    expect(result.status).to.equal(200);
    expect(result.servers.map((server) => server.available)).to.deep.equal([false, true]);
  });

  it('refuses every login (401) while no server answers', async () => {
    expect((await attempt([{ port: await freePort() }])).status).to.equal(401);
  });
});

describe('LDAP configuration (ldap.toml)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ldap-toml-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  function write(text: string): string {
    const file = path.join(dir, `ldap-${Math.random().toString(36).slice(2)}.toml`);
    fs.writeFileSync(file, text);
    return file;
  }

  const refusal = (text: string) => {
    try {
      loadLdapSettings(write(text));
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('reads every key, with defaults for the optional ones', () => {
    const settings = loadLdapSettings(write(ldapToml([{ port: 389, mappings: [{ groupDn: '*', orgId: 'org_main', orgRole: 'viewer' }] }])));
    expect(settings.servers).to.have.length(1);
    expect(settings.servers[0]).to.deep.include({
      host: '127.0.0.1',
      port: 389,
      useSsl: false,
      startTls: false,
      sslSkipVerify: false,
      rootCaCert: null,
      bindPassword: SERVICE_PASSWORD,
      searchFilter: '(uid=%s)',
      attributes: { username: 'uid', email: 'mail', name: 'cn', memberOf: 'memberOf' },
      groupMappings: [{ groupDn: '*', orgId: 'org_main', orgRole: 'Viewer', svcAdmin: null }],
      allowUnmappedUsers: false,
      timeoutMs: 5000,
    });
  });

  it('refuses a bad file with the key named, never the bind password', () => {
    const base = (extra: string[]) => ldapToml([{ port: 389, extra }]);
    const cases: Array<[string, RegExp]> = [
      ['not = [toml', /not valid TOML \(line 1, column \d+\)/],
      [`bind_password = "${SERVICE_PASSWORD}"\n[[servers]]\nhost = `, /not valid TOML/],
      ['', /servers must be an array of tables/],
      [
        base([]).replace('use_ssl = false', 'use_ssl = true').replace('start_tls = false', 'start_tls = true'),
        /servers\[0\]: use_ssl \(ldaps\) and start_tls exclude each other/,
      ],
      [base(['colour = "blue"']), /unknown key servers\[0\]\.colour/],
      [base([]).replace('port = 389', 'port = 70000'), /servers\[0\]\.port must be an integer from 1 to 65535/],
      [base([]).replace('(uid=%s)', '(uid=alice)'), /servers\[0\]\.search_filter must contain %s/],
      [base([]).replace(/search_base_dns = .*/, 'search_base_dns = []'), /servers\[0\]\.search_base_dns must be a non-empty array/],
      [base(['root_ca_cert = "/nonexistent/ca.pem"']), /servers\[0\]\.root_ca_cert: cannot read \/nonexistent\/ca.pem \(ENOENT\)/],
      [
        `${base([])}\n\n[[servers.group_mappings]]\ngroup_dn = "cn=x"\norg_id = "org_main"\norg_role = "Owner"`,
        /group_mappings\[0\]\.org_role must be one of Admin, Editor, Viewer, None/,
      ],
    ];
    for (const [text, expected] of cases) {
      const message = refusal(text);
      expect(message, text).to.match(expected);
      expect(message).not.to.include(SERVICE_PASSWORD);
    }
  });

  it('stops startup with a ConfigError (exit 2 in main.ts) when SVC_AUTH_LDAP_ENABLED=true and the file is bad or missing', async () => {
    const database = await createTestDatabase();
    try {
      for (const file of [path.join(dir, 'missing.toml'), write('servers = 1')]) {
        const config = testConfig(database.url, { SVC_AUTH_LDAP_ENABLED: 'true', LDAP_CONFIG_FILE: file });
        const failure = await startServices(config, pino({ level: 'silent' })).catch((err: Error) => err);
        expect(failure).to.be.instanceOf(ConfigError);
        expect((failure as Error).message).to.match(/^LDAP config /);
      }
    } finally {
      await database.drop();
    }
  });

  it('escapes filter values per RFC 4515', () => {
    expect(escapeFilterValue('a*b(c)d\\e\u0000f')).to.equal('a\\2ab\\28c\\29d\\5ce\\00f');
    expect(escapeFilterValue('jörg')).to.equal('jörg');
  });
});
