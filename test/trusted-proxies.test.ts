/**
 * TRUSTED_PROXIES takes addresses and CIDRs (IPv4 and IPv6): a peer inside a listed range is a
 * proxy whose X-Forwarded-For and X-Request-Id are believed, a peer outside is the client
 * itself. A malformed entry stops startup with the entry named (exit code 2).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.ts';
import { resolveClientIp } from '../src/http/client-ip.ts';
import { IpRanges } from '../src/net/ip-ranges.ts';
import { startTestApp } from './helpers/app.ts';
import { auditEntries, createUser, DEFAULT_PASSWORD } from './helpers/factories.ts';

const secrets = { NODE_ENV: 'test', SECRET_KEY: 'x'.repeat(32), JWT_SECRET: 'y'.repeat(32), DATA_DIR: os.tmpdir() };
const proxies = (entries: string) => new IpRanges(loadConfig({ ...secrets, TRUSTED_PROXIES: entries }).trustedProxies, 'TRUSTED_PROXIES', 'address-or-cidr');

describe('TRUSTED_PROXIES', () => {
  describe('configuration', () => {
    it('accepts addresses and IPv4 and IPv6 CIDRs', () => {
      expect(loadConfig({ ...secrets, TRUSTED_PROXIES: '10.0.0.0/8, ::1, fd00::/8, 192.0.2.7' }).trustedProxies).to.deep.equal([
        '10.0.0.0/8',
        '::1',
        'fd00::/8',
        '192.0.2.7',
      ]);
    });

    it('refuses a malformed entry, naming it', () => {
      for (const entry of ['proxy.internal', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/8', '10.0.0.0/', '10.0.0.0/x', '300.0.0.1']) {
        expect(() => loadConfig({ ...secrets, TRUSTED_PROXIES: `10.0.0.1, ${entry}` }), entry).to.throw(
          ConfigError,
          `TRUSTED_PROXIES: "${entry}" is not an IP address or a CIDR such as 10.0.0.0/8 or fd00::/8`,
        );
      }
    });

    it('stops the process at start with exit code 2 and the entry named', async function () {
      this.timeout(60_000);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-proxies-'));
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...secrets,
        NODE_ENV: 'development',
        DATA_DIR: dir,
        PORT: '0',
        TRUSTED_PROXIES: '10.0.0.0/8, 10.1.0.0/40',
      };
      delete env.DATABASE_URL;
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      fs.rmSync(dir, { recursive: true, force: true });
      expect(code, stderr).to.equal(2);
      expect(stderr.trim()).to.equal('configuration error: TRUSTED_PROXIES: "10.1.0.0/40" is not an IP address or a CIDR such as 10.0.0.0/8 or fd00::/8');
    });
  });

  describe('the client address', () => {
    it('honours X-Forwarded-For from a peer inside a listed range, IPv4 or IPv6', () => {
      const trusted = proxies('10.0.0.0/8, ::1, fd00::/8');
      expect(resolveClientIp('10.20.30.40', '198.51.100.1', trusted)).to.equal('198.51.100.1');
      expect(resolveClientIp('::ffff:10.20.30.40', '198.51.100.1', trusted)).to.equal('198.51.100.1');
      expect(resolveClientIp('fd12:3456::1', '2001:db8::5', trusted)).to.equal('2001:db8::5');
      expect(resolveClientIp('::1', '198.51.100.1', trusted)).to.equal('198.51.100.1');
      // the nearest hop that is not itself a proxy: the proxy chain is walked from the right
      expect(resolveClientIp('10.0.0.1', '203.0.113.9, 198.51.100.1, 10.9.9.9', trusted)).to.equal('198.51.100.1');
    });

    it('ignores X-Forwarded-For from a peer outside every listed range', () => {
      const trusted = proxies('10.0.0.0/8, fd00::/8');
      expect(resolveClientIp('11.0.0.1', '198.51.100.1', trusted)).to.equal('11.0.0.1');
      expect(resolveClientIp('fe80::1', '198.51.100.1', trusted)).to.equal('fe80::1');
      expect(resolveClientIp('::ffff:192.168.1.1', '198.51.100.1', trusted)).to.equal('192.168.1.1');
    });
  });

  describe('over HTTP', () => {
    async function signInThrough(trustedProxies: string) {
      const app = await startTestApp({ env: { TRUSTED_PROXIES: trustedProxies } });
      try {
        await createUser(app, { login: 'behind' });
        const res = await app.request('POST', '/api/login', {
          body: { user: 'behind', password: DEFAULT_PASSWORD },
          headers: { 'x-forwarded-for': '198.51.100.7', 'x-request-id': 'proxy-trace-1' },
        });
        expect(res.status).to.equal(200);
        const [entry] = await auditEntries(app, 'user.login');
        return { ip: entry!.ip, requestId: res.headers.get('x-request-id') };
      } finally {
        await app.close();
      }
    }

    it('believes a proxy inside a listed CIDR (X-Forwarded-For in the audit, its X-Request-Id echoed)', async () => {
      expect(await signInThrough('10.0.0.0/8, 127.0.0.0/8')).to.deep.equal({ ip: '198.51.100.7', requestId: 'proxy-trace-1' });
    });

    it('does not believe a peer outside the listed CIDRs', async () => {
      const seen = await signInThrough('10.0.0.0/8, fd00::/8');
      expect(seen.ip).to.equal('127.0.0.1');
      expect(seen.requestId).to.not.equal('proxy-trace-1');
    });
  });
});
