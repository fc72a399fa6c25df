/**
 * A real OpenLDAP server (Debian `slapd`) for the LDAP tests: a generated configuration in a temp
 * directory (mdb backend, memberof and refint overlays, a self-signed certificate made with
 * openssl for StartTLS and ldaps), on free loopback ports, seeded with `ldapadd`, stopped by pid.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const SUFFIX = 'dc=example,dc=test';
export const ROOT_DN = `cn=admin,${SUFFIX}`;
export const ROOT_PASSWORD = 'root secret of the directory';
/** The service account the LDAP config binds as to search for users. */
export const SERVICE_DN = `cn=gatehouse,ou=services,${SUFFIX}`;
export const SERVICE_PASSWORD = 'service bind password 4f9a';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface DirectoryUser {
  uid: string;
  password: string;
  email?: string;
  name?: string;
}

export interface DirectoryGroup {
  cn: string;
  members: string[];
}

export const userDn = (uid: string) => `uid=${uid},ou=people,${SUFFIX}`;
export const groupDn = (cn: string) => `cn=${cn},ou=groups,${SUFFIX}`;

function slapdConf(dir: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
moduleload refint
pidfile ${dir}/slapd.pid
argsfile ${dir}/slapd.args
TLSCertificateFile ${dir}/cert.pem
TLSCertificateKeyFile ${dir}/key.pem
database mdb
maxsize 16777216
suffix "${SUFFIX}"
rootdn "${ROOT_DN}"
rootpw ${execFileSync('/usr/sbin/slappasswd', ['-s', ROOT_PASSWORD]).toString().trim()}
directory ${dir}/db
overlay memberof
memberof-group-oc groupOfNames
memberof-member-ad member
memberof-memberof-ad memberOf
memberof-refint TRUE
overlay refint
refint_attributes member
access to attrs=userPassword by anonymous auth by self write by * none
access to * by dn.exact="${SERVICE_DN}" read by self read by * none
`;
}

const ldif = (entries: string[]) => entries.map((entry) => `${entry.trim()}\n`).join('\n');

export class Slapd {
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly tlsPort: number,
    private readonly child: ChildProcess,
  ) {}

  /** The certificate the server presents (self-signed for 127.0.0.1 and localhost): the CA to trust. */
  get caCertFile(): string {
    return path.join(this.dir, 'cert.pem');
  }

  static async start(): Promise<Slapd> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-slapd-'));
    fs.mkdirSync(path.join(dir, 'db'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const conf = path.join(dir, 'slapd.conf');
    fs.writeFileSync(conf, slapdConf(dir));
    execFileSync('/usr/sbin/slaptest', ['-u', '-f', conf], { stdio: 'ignore' });
    const [port, tlsPort] = [await freePort(), await freePort()];
    const child = spawn('/usr/sbin/slapd', ['-f', conf, '-h', `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${tlsPort}/`, '-d', '0'], { stdio: 'ignore' });
    const slapd = new Slapd(dir, port, tlsPort, child);
    await slapd.waitUntilAnswering();
    slapd.add([
      `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
      `dn: ou=people,${SUFFIX}\nobjectClass: organizationalUnit\nou: people`,
      `dn: ou=groups,${SUFFIX}\nobjectClass: organizationalUnit\nou: groups`,
      `dn: ou=services,${SUFFIX}\nobjectClass: organizationalUnit\nou: services`,
      `dn: ${SERVICE_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: gatehouse\nuserPassword: ${SERVICE_PASSWORD}`,
    ]);
    return slapd;
  }

  private async waitUntilAnswering(): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      if (this.child.exitCode !== null) throw new Error(`slapd exited with ${this.child.exitCode}`);
      const open = await new Promise<boolean>((resolve) => {
        const socket = net.connect(this.port, '127.0.0.1', () => socket.end(() => resolve(true)));
        socket.on('error', () => resolve(false));
      });
      if (open) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('slapd did not answer');
  }

  /** Adds LDIF entries as the directory's root. */
  add(entries: string[]): void {
    execFileSync('/usr/bin/ldapadd', ['-x', '-H', `ldap://127.0.0.1:${this.port}/`, '-D', ROOT_DN, '-w', ROOT_PASSWORD], {
      input: ldif(entries),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
  }

  /** Applies an LDIF of changes (changetype: modify…) as the root. */
  modify(changes: string[]): void {
    execFileSync('/usr/bin/ldapmodify', ['-x', '-H', `ldap://127.0.0.1:${this.port}/`, '-D', ROOT_DN, '-w', ROOT_PASSWORD], {
      input: ldif(changes),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
  }

  addUsers(users: DirectoryUser[]): void {
    this.add(
      users.map((user) =>
        [
          `dn: ${userDn(user.uid)}`,
          'objectClass: inetOrgPerson',
          `uid: ${user.uid}`,
          `cn: ${user.name ?? user.uid}`,
          `sn: ${user.uid}`,
          ...(user.email ? [`mail: ${user.email}`] : []),
          `userPassword: ${user.password}`,
        ].join('\n'),
      ),
    );
  }

  addGroups(groups: DirectoryGroup[]): void {
    this.add(
      groups.map((group) =>
        [`dn: ${groupDn(group.cn)}`, 'objectClass: groupOfNames', `cn: ${group.cn}`, ...group.members.map((uid) => `member: ${userDn(uid)}`)].join('\n'),
      ),
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      process.kill(this.child.pid!, 'SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
