/**
 * Signed policy bundles: `npm run policy:build` with POLICY_SIGNING_KEY writes the bundle `opa
 * build --signing-key` writes; the service loads it with POLICY_BUNDLE_PATH and
 * POLICY_VERIFICATION_KEY, verified as OPA verifies it (opa itself accepts what the service
 * accepts and refuses what it refuses), at start and at POST /api/admin/policy/reload.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import pino from 'pino';
import { PolicyLoadError, readVerificationKey, untar, verifyBundle } from '../src/authz/bundle.ts';
import { readManifest } from '../src/authz/manifest.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startServices } from '../src/startup.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, auditEntries, createUser, type TestUser } from './helpers/factories.ts';
import { findOpa, REPO_ROOT } from './helpers/opa.ts';

const opa = findOpa();

/** A ustar archive of `files`, named from the root as opa names them (`/policy.wasm`). */
function tar(files: Map<string, Buffer>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, content] of files) {
    const header = Buffer.alloc(512);
    header.write(`/${name}`, 0, 100);
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${content.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write('        ', 148);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

function readFiles(bundle: string): Map<string, Buffer> {
  return untar(execFileSync('gzip', ['-dc', bundle], { maxBuffer: 64 * 1024 * 1024 }));
}

/** The bundle at `from` with its files changed by `change`, written to `to` (its signature as it was). */
function repack(from: string, to: string, change: (files: Map<string, Buffer>) => void): string {
  const files = readFiles(from);
  change(files);
  fs.writeFileSync(to, tar(files));
  return to;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** Signs `files` as opa build does (RS256, a `files` claim of SHA-256 hashes), for a bundle this test alters on purpose. */
function signAgain(files: Map<string, Buffer>, privateKey: string): void {
  files.delete('.signatures.json');
  const listed = [...files].map(([name, content]) => ({
    name,
    hash: createHash('sha256')
      .update(name === '.manifest' || name.endsWith('.json') ? canonical(JSON.parse(content.toString())) : content)
      .digest('hex'),
    algorithm: 'SHA-256',
  }));
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode({ files: listed })}`;
  const token = `${signed}.${sign('sha256', Buffer.from(signed), privateKey).toString('base64url')}`;
  files.set('.signatures.json', Buffer.from(JSON.stringify({ signatures: [token] })));
}

/** What opa itself says of the bundle with the key (and the algorithm it expects): null when it verifies, else what it printed. */
function opaVerifies(bundle: string, publicKey: string, alg = 'RS256'): string | null {
  const out = path.join(path.dirname(bundle), 'opa-out.tar.gz');
  const result = spawnSync(opa!, ['build', '--bundle', bundle, '--verification-key', publicKey, '--signing-alg', alg, '-o', out], { encoding: 'utf8' });
  return result.status === 0 ? null : `${result.stdout}${result.stderr}`.trim();
}

function fingerprint(publicKeyFile: string): string {
  return `sha256:${createHash('sha256')
    .update(readVerificationKey(publicKeyFile).export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16)}`;
}

describe('signed policy bundles', function () {
  // Two signed builds of the policy and one of an altered copy: opa compiles each to wasm.
  this.timeout(120_000);
  let dir: string;
  const keys = { rsa: '', rsaPub: '', ec: '', ecPub: '', other: '', otherPub: '' };
  let rsaBundle: string;
  let ecBundle: string;
  /** The same policy but teams:read made a server action: signed with the RSA key, another revision. */
  let alteredBundle: string;
  const revision = readManifest(REPO_ROOT).sourceHash;

  function build(out: string, key: string, alg: string, root = REPO_ROOT): string {
    execFileSync('bash', [path.join(root, 'tools/policy-build.sh')], {
      env: { ...process.env, POLICY_SIGNING_KEY: key, POLICY_SIGNING_ALG: alg, POLICY_BUNDLE_OUT: out },
      stdio: 'pipe',
    });
    return out;
  }

  before(function () {
    if (!opa) {
      if (process.env.CI) throw new Error('opa is missing (tools/opa.sh installs it)');
      this.skip();
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bundle-'));
    const write = (name: 'rsa' | 'ec' | 'other', pair: { privateKey: KeyObject; publicKey: KeyObject }) => {
      keys[name] = path.join(dir, `${name}.pem`);
      keys[`${name}Pub`] = path.join(dir, `${name}.pub.pem`);
      fs.writeFileSync(keys[name], pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
      fs.writeFileSync(keys[`${name}Pub`], pair.publicKey.export({ type: 'spki', format: 'pem' }));
    };
    write('rsa', generateKeyPairSync('rsa', { modulusLength: 2048 }));
    write('ec', generateKeyPairSync('ec', { namedCurve: 'P-256' }));
    write('other', generateKeyPairSync('rsa', { modulusLength: 2048 }));
    rsaBundle = build(path.join(dir, 'rsa.tar.gz'), keys.rsa, 'RS256');
    ecBundle = build(path.join(dir, 'ec.tar.gz'), keys.ec, 'ES256');
    // A copy of the policy in which only a server admin reads teams, built by the same script.
    const copy = path.join(dir, 'altered');
    fs.mkdirSync(copy);
    fs.cpSync(path.join(REPO_ROOT, 'tools'), path.join(copy, 'tools'), { recursive: true });
    fs.cpSync(path.join(REPO_ROOT, 'policies'), path.join(copy, 'policies'), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, '.tools'), path.join(copy, '.tools'));
    const server = path.join(copy, 'policies/authz/server/server.rego');
    fs.writeFileSync(
      server,
      fs.readFileSync(server, 'utf8').replace('is_server_action("roles:seed")', 'is_server_action("roles:seed")\n\nis_server_action("teams:read")'),
    );
    alteredBundle = build(path.join(dir, 'altered.tar.gz'), keys.rsa, 'RS256', copy);
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('verification', () => {
    it('accepts the RS256 and ES256 bundles the build signs, as opa does: the wasm, the revision (the source hash) and the signing key', () => {
      const wasm = fs.readFileSync(path.join(REPO_ROOT, 'policies/build/authz.wasm'));
      for (const [bundle, publicKey, alg] of [
        [rsaBundle, keys.rsaPub, 'RS256'],
        [ecBundle, keys.ecPub, 'ES256'],
      ] as const) {
        const verified = verifyBundle(bundle, readVerificationKey(publicKey));
        expect(verified.revision).to.equal(revision);
        expect(verified.signer)
          .to.equal(fingerprint(publicKey))
          .and.match(/^sha256:[0-9a-f]{16}$/);
        expect(verified.wasm.equals(wasm), 'the bundle holds the committed wasm').to.equal(true);
        expect(opaVerifies(bundle, publicKey, alg)).to.equal(null);
      }
    });

    it('lists every file of the bundle in the signature, the committed bundle holding the same files unsigned', () => {
      const signed = [...readFiles(rsaBundle).keys()].sort();
      const committed = [...readFiles(path.join(REPO_ROOT, 'policies/build/bundle.tar.gz')).keys()].sort();
      expect(signed).to.deep.equal([...committed, '.signatures.json'].sort());
      expect(committed).to.include.members(['.manifest', 'policy.wasm', 'data.json']);
    });

    const refusals: Array<[string, () => [string, string], RegExp, boolean]> = [
      [
        'an altered wasm',
        () => [
          repack(rsaBundle, path.join(dir, 'wasm.tar.gz'), (files) => {
            const wasm = Buffer.from(files.get('policy.wasm')!);
            wasm.writeUInt8(wasm.readUInt8(wasm.length - 1) ^ 1, wasm.length - 1);
            files.set('policy.wasm', wasm);
          }),
          keys.rsaPub,
        ],
        /^policy\.wasm in the bundle does not match its signed hash/,
        true,
      ],
      [
        'an altered revision',
        () => [
          repack(rsaBundle, path.join(dir, 'manifest.tar.gz'), (files) => {
            const manifest = JSON.parse(files.get('.manifest')!.toString()) as { revision: string };
            files.set('.manifest', Buffer.from(JSON.stringify({ ...manifest, revision: 'forged' })));
          }),
          keys.rsaPub,
        ],
        /^\.manifest in the bundle does not match its signed hash/,
        true,
      ],
      [
        'a file added',
        () => [
          repack(rsaBundle, path.join(dir, 'added.tar.gz'), (files) => files.set('policies/authz/extra.rego', Buffer.from('package authz.extra\n'))),
          keys.rsaPub,
        ],
        /^the bundle holds policies\/authz\/extra\.rego, which its signature does not list$/,
        true,
      ],
      [
        'a file removed',
        () => [repack(rsaBundle, path.join(dir, 'removed.tar.gz'), (files) => files.delete('data.json')), keys.rsaPub],
        /^the bundle lacks data\.json, which its signature lists$/,
        false,
      ],
      [
        'no signature file',
        () => [repack(rsaBundle, path.join(dir, 'unsigned.tar.gz'), (files) => files.delete('.signatures.json')), keys.rsaPub],
        /^the bundle is not signed: it has no \.signatures\.json$/,
        true,
      ],
      [
        'a stripped signature',
        () => [repack(rsaBundle, path.join(dir, 'stripped.tar.gz'), (files) => files.set('.signatures.json', Buffer.from('{"signatures":[]}'))), keys.rsaPub],
        /^the bundle is not signed: \.signatures\.json lists no signature$/,
        true,
      ],
      ['another key', () => [rsaBundle, keys.otherPub], /^the bundle signature does not verify with POLICY_VERIFICATION_KEY/, true],
      ['a key of another type', () => [ecBundle, keys.rsaPub], /^the bundle is signed with ES256, and POLICY_VERIFICATION_KEY is a rsa key$/, true],
      ['the unsigned committed bundle', () => [path.join(REPO_ROOT, 'policies/build/bundle.tar.gz'), keys.rsaPub], /^the bundle is not signed/, true],
    ];
    for (const [what, make, message, opaRefuses] of refusals) {
      it(`refuses ${what}, naming it${opaRefuses ? ', as opa does' : ''}`, () => {
        const [bundle, publicKey] = make();
        expect(() => verifyBundle(bundle, readVerificationKey(publicKey)))
          .to.throw(PolicyLoadError)
          .with.property('message')
          .that.matches(message);
        if (opaRefuses) expect(opaVerifies(bundle, publicKey)).to.be.a('string');
      });
    }

    it('accepts a bundle re-signed with the key after a change, and opa accepts it too', () => {
      const resigned = repack(rsaBundle, path.join(dir, 'resigned.tar.gz'), (files) => {
        const manifest = JSON.parse(files.get('.manifest')!.toString()) as { revision: string };
        files.set('.manifest', Buffer.from(JSON.stringify({ ...manifest, revision: 'r2' })));
        signAgain(files, fs.readFileSync(keys.rsa, 'utf8'));
      });
      expect(verifyBundle(resigned, readVerificationKey(keys.rsaPub)).revision).to.equal('r2');
      expect(opaVerifies(resigned, keys.rsaPub)).to.equal(null);
    });
  });

  describe('at start', () => {
    const start = (env: Record<string, string>) =>
      startServices(
        loadConfig({ NODE_ENV: 'test', DATABASE_URL: `sqlite:${path.join(dir, 'never-opened.db')}`, DATA_DIR: dir, ...env }),
        pino({ level: 'silent' }),
      );

    it('refuses a tampered bundle, a wrong key and a missing key file before the database opens (a configuration error: exit 2)', async () => {
      const tampered = repack(rsaBundle, path.join(dir, 'boot-tampered.tar.gz'), (files) => files.set('policies/authz/extra.rego', Buffer.from('package x\n')));
      const cases: Array<[Record<string, string>, string]> = [
        [
          { POLICY_BUNDLE_PATH: tampered, POLICY_VERIFICATION_KEY: keys.rsaPub },
          'policy bundle refused: the bundle holds policies/authz/extra.rego, which its signature does not list',
        ],
        [
          { POLICY_BUNDLE_PATH: rsaBundle, POLICY_VERIFICATION_KEY: keys.otherPub },
          'policy bundle refused: the bundle signature does not verify with POLICY_VERIFICATION_KEY (another key signed it, or the signature was altered)',
        ],
        [
          { POLICY_BUNDLE_PATH: rsaBundle, POLICY_VERIFICATION_KEY: path.join(dir, 'absent.pem') },
          `policy bundle refused: POLICY_VERIFICATION_KEY ${path.join(dir, 'absent.pem')} cannot be read (ENOENT)`,
        ],
      ];
      for (const [env, message] of cases) {
        const error = await start(env).then(
          () => null,
          (err: unknown) => err,
        );
        expect(error).to.be.instanceOf(ConfigError).with.property('message', message);
      }
      expect(fs.existsSync(path.join(dir, 'never-opened.db'))).to.equal(false);
    });

    it('needs both variables: a bundle without a key is a configuration error', () => {
      expect(() => loadConfig({ NODE_ENV: 'test', POLICY_BUNDLE_PATH: rsaBundle }))
        .to.throw(ConfigError)
        .with.property('message', 'POLICY_VERIFICATION_KEY is required when POLICY_BUNDLE_PATH or POLICY_VERIFICATION_KEY is set');
    });

    it('the process exits 2 with one line naming the cause', () => {
      const tampered = repack(rsaBundle, path.join(dir, 'process-tampered.tar.gz'), (files) => {
        const wasm = Buffer.from(files.get('policy.wasm')!);
        wasm.writeUInt8(wasm.readUInt8(100) ^ 1, 100);
        files.set('policy.wasm', wasm);
      });
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_ENV: 'development',
        DATA_DIR: dir,
        HOST: '127.0.0.1',
        PORT: '0',
        POLICY_BUNDLE_PATH: tampered,
        POLICY_VERIFICATION_KEY: keys.rsaPub,
      };
      for (const name of ['DATABASE_URL', 'TEST_DB']) delete env[name];
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: REPO_ROOT,
        env: { ...env, SECRET_KEY: 'bundle-test-secret-key-0123456789abcdef', JWT_SECRET: 'bundle-test-jwt-secret-0123456789abcdef' },
        encoding: 'utf8',
      });
      expect(result.status, result.stderr).to.equal(2);
      expect(result.stderr.trim()).to.equal(
        'configuration error: policy bundle refused: policy.wasm in the bundle does not match its signed hash (the file was altered)',
      );
    });
  });

  describe('a running instance', () => {
    let app: TestApp;
    let bundlePath: string;
    let decisionFile: string;
    let serverAdmin: TestUser;
    let orgAdmin: TestUser;
    let viewer: TestUser;

    const reload = (user: TestUser) => api(app, user).post('/api/admin/policy/reload', {});
    const scrape = async () => (await app.request<string>('GET', '/metrics')).body;
    const lastRevision = () => {
      const lines = fs.readFileSync(decisionFile, 'utf8').trim().split('\n');
      return (JSON.parse(lines[lines.length - 1]!) as { bundles: { authz: { revision: string } } }).bundles.authz.revision;
    };

    before(async () => {
      bundlePath = path.join(dir, 'running.tar.gz');
      decisionFile = path.join(dir, 'decisions.log');
      fs.copyFileSync(rsaBundle, bundlePath);
      app = await startTestApp({
        env: { POLICY_BUNDLE_PATH: bundlePath, POLICY_VERIFICATION_KEY: keys.rsaPub, DECISION_LOG: 'file', DECISION_LOG_PATH: decisionFile },
      });
      serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
      orgAdmin = await createUser(app, { role: 'Admin' });
      viewer = await createUser(app, { role: 'Viewer' });
    });
    after(async () => {
      await app?.close();
    });

    it('names the bundle revision and signer in readiness, /metrics and every decision log entry', async () => {
      const ready = await app.request('GET', '/api/health/ready');
      expect(ready.status).to.equal(200);
      expect(ready.body.policyBundle).to.deep.equal({ source: 'bundle', revision, signer: fingerprint(keys.rsaPub) });
      expect(await scrape()).to.include(`gatehouse_policy_bundle_info{source="bundle",revision="${revision}",signer="${fingerprint(keys.rsaPub)}"} 1`);
      expect((await api(app, viewer).get('/api/teams/search')).status).to.equal(200);
      expect(lastRevision()).to.equal(revision);
    });

    it('is a server action: 401 without a session, 403 for an org admin, and the policy stays', async () => {
      expect((await app.request('POST', '/api/admin/policy/reload', { body: {} })).status).to.equal(401);
      const refused = await reload(orgAdmin);
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.be.a('string');
      expect(await auditEntries(app, 'policy.reloaded')).to.deep.equal([]);
    });

    it('swaps in a verified bundle: the next decision is the new policy, no kept answer of the old one is given', async () => {
      // asked twice, so the allow is kept
      expect((await api(app, viewer).get('/api/teams/search')).status).to.equal(200);
      expect((await api(app, viewer).get('/api/teams/search')).status).to.equal(200);
      fs.copyFileSync(alteredBundle, bundlePath);
      const altered = verifyBundle(alteredBundle, readVerificationKey(keys.rsaPub)).revision;
      expect(altered).to.not.equal(revision);

      const res = await reload(serverAdmin);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({
        message: `policy reloaded: revision ${altered}`,
        source: 'bundle',
        revision: altered,
        signer: fingerprint(keys.rsaPub),
      });
      expect((await api(app, viewer).get('/api/teams/search')).status).to.equal(403);
      expect(lastRevision()).to.equal(altered);
      expect((await app.request('GET', '/api/health/ready')).body.policyBundle.revision).to.equal(altered);
      const metrics = await scrape();
      expect(metrics).to.include(`gatehouse_policy_bundle_info{source="bundle",revision="${altered}",signer="${fingerprint(keys.rsaPub)}"} 1`);
      expect(metrics).to.not.include(`revision="${revision}"`);
      expect(metrics).to.include('gatehouse_policy_reloads_total{outcome="loaded"} 1');
      const [entry] = await auditEntries(app, 'policy.reloaded');
      expect(entry).to.include({ outcome: 'success', actor_id: serverAdmin.id });
      expect(entry!.metadata).to.deep.equal({
        file: bundlePath,
        source: 'bundle',
        revision: altered,
        signer: fingerprint(keys.rsaPub),
        previousRevision: revision,
      });

      // and back
      fs.copyFileSync(rsaBundle, bundlePath);
      expect((await reload(serverAdmin)).status).to.equal(200);
      expect((await api(app, viewer).get('/api/teams/search')).status).to.equal(200);
    });

    it('keeps the running policy when the bundle is refused: 422 naming the cause, audited, counted', async () => {
      const cases: Array<[() => void, string]> = [
        [
          () => repack(rsaBundle, bundlePath, (files) => files.set('policy.wasm', Buffer.concat([files.get('policy.wasm')!, Buffer.from([0])]))),
          'policy.wasm in the bundle does not match its signed hash (the file was altered)',
        ],
        [() => repack(rsaBundle, bundlePath, (files) => files.delete('.signatures.json')), 'the bundle is not signed: it has no .signatures.json'],
        // a good bundle, but the key file now holds another key
        [
          () => {
            fs.copyFileSync(alteredBundle, bundlePath);
            fs.copyFileSync(keys.otherPub, keys.rsaPub);
          },
          'the bundle signature does not verify with POLICY_VERIFICATION_KEY (another key signed it, or the signature was altered)',
        ],
      ];
      const rsaPublicKey = fs.readFileSync(keys.rsaPub);
      try {
        for (const [prepare, cause] of cases) {
          prepare();
          const res = await reload(serverAdmin);
          expect(res.status).to.equal(422);
          expect(res.body).to.deep.equal({ message: `policy refused: ${cause}; the running policy (revision ${revision}) stays in use` });
        }
      } finally {
        fs.writeFileSync(keys.rsaPub, rsaPublicKey);
      }

      expect((await api(app, viewer).get('/api/teams/search')).status, 'the running policy still decides').to.equal(200);
      expect((await app.request('GET', '/api/health/ready')).body.policyBundle.revision).to.equal(revision);
      expect(await scrape()).to.include('gatehouse_policy_reloads_total{outcome="refused"} 3');
      const refusedEntries = (await auditEntries(app, 'policy.reloaded')).filter((entry) => entry.outcome === 'failure');
      expect(refusedEntries).to.have.length(3);
      expect(refusedEntries[0]!.metadata).to.deep.equal({
        file: bundlePath,
        reason: 'policy.wasm in the bundle does not match its signed hash (the file was altered)',
        revision,
      });
      fs.copyFileSync(rsaBundle, bundlePath);
    });
  });
});
