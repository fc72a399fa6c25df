/**
 * Certificates made with openssl at test time (EC P-256, so it takes milliseconds): a CA, a
 * server certificate for localhost and 127.0.0.1, and a client certificate for mTLS, all signed
 * by the CA, plus a second CA that signed nothing the servers trust.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  otherCa: string;
  otherClientCert: string;
  otherClientKey: string;
  /** Paths of the same files, for backends that read them from disk. */
  paths: { ca: string; serverCert: string; serverKey: string; clientCert: string; clientKey: string };
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`]);
}

function makeSigned(dir: string, ca: string, name: string, extensions: string): void {
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

export function makeTestCerts(): TestCerts {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-certs-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  makeSigned(dir, 'ca', 'server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  makeSigned(dir, 'ca', 'client', 'extendedKeyUsage=clientAuth\n');
  makeSigned(dir, 'other-ca', 'other-client', 'extendedKeyUsage=clientAuth\n');
  const file = (name: string) => path.join(dir, name);
  const read = (name: string) => fs.readFileSync(file(name), 'utf8');
  return {
    dir,
    ca: read('ca.crt'),
    serverCert: read('server.crt'),
    serverKey: read('server.key'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    otherCa: read('other-ca.crt'),
    otherClientCert: read('other-client.crt'),
    otherClientKey: read('other-client.key'),
    paths: { ca: file('ca.crt'), serverCert: file('server.crt'), serverKey: file('server.key'), clientCert: file('client.crt'), clientKey: file('client.key') },
  };
}
