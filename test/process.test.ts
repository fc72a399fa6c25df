/**
 * The process as an operator runs it, spawned: the start-up line, configuration errors (one line,
 * exit code 2, no stack trace), and SIGTERM draining requests in flight within
 * SHUTDOWN_TIMEOUT_MS, sent to `npm start` too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first stdout log line whose msg starts with `prefix`. */
  line(prefix: string): Promise<Record<string, any>>;
}

function start(command: string, args: string[], env: Record<string, string>): Spawned {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'TEST_DB', 'NODE_ENV', 'LOG_LEVEL', 'PORT', 'HOST', 'DATA_DIR', 'METRICS_TOKEN']) delete base[name];
  const child = spawn(command, args, { cwd: ROOT, env: { ...base, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const find = (prefix: string) =>
    out
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, any>)
      .find((entry) => typeof entry.msg === 'string' && entry.msg.startsWith(prefix));
  const line = async (prefix: string) => {
    for (;;) {
      const found = find(prefix);
      if (found) return found;
      const more = new Promise<void>((resolve) => waiters.push(resolve));
      const gone = await Promise.race([more.then(() => false), exited.then(() => true)]);
      if (gone && !find(prefix)) throw new Error(`exited before logging "${prefix}":\n${out}\n${err}`);
    }
  };
  return { child, stdout: () => out, stderr: () => err, exited, line };
}

const SECRETS = { SECRET_KEY: 'process-test-secret-key-0123456789abcdef', JWT_SECRET: 'process-test-jwt-secret-0123456789abcdef' };
const node = (env: Record<string, string>) => start(process.execPath, ['--import', 'tsx', 'src/main.ts'], { ...SECRETS, HOST: '127.0.0.1', PORT: '0', ...env });

describe('the process', function () {
  // Each case boots a TypeScript process of its own.
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-process-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function expectConfigurationError(env: Record<string, string>, message: string): Promise<void> {
    const proc = node({ DATA_DIR: dir, ...env });
    expect(await proc.exited, proc.stderr()).to.equal(2);
    expect(proc.stderr().trim().split('\n')).to.deep.equal([`configuration error: ${message}`]);
  }

  it('refuses an unknown DATABASE_URL scheme, an out-of-range PORT and an unknown LOG_LEVEL: one line, exit code 2', async () => {
    await Promise.all([
      expectConfigurationError({ DATABASE_URL: 'postgres://db/gatehouse' }, 'DATABASE_URL must start with mysql:// or sqlite:, got "postgres:"'),
      expectConfigurationError({ PORT: '70000' }, 'PORT must be at most 65535, got 70000'),
      expectConfigurationError({ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'),
    ]);
  });

  it('refuses an unwritable DATA_DIR', async () => {
    const file = path.join(dir, 'not-a-directory');
    fs.writeFileSync(file, '');
    await expectConfigurationError({ DATA_DIR: file }, `DATA_DIR ${file} is not a writable directory (EEXIST)`);
  });

  it('refuses a missing or broken POLICY_WASM_PATH', async () => {
    const missing = path.join(dir, 'missing.wasm');
    const broken = path.join(dir, 'broken.wasm');
    fs.writeFileSync(broken, 'not wasm');
    await Promise.all([
      expectConfigurationError(
        { POLICY_WASM_PATH: missing },
        `POLICY_WASM_PATH ${missing} cannot be read (ENOENT): run npm run policy:build, or point POLICY_WASM_PATH at a built authz.wasm`,
      ),
      expectConfigurationError(
        { POLICY_WASM_PATH: broken },
        `POLICY_WASM_PATH ${broken} is not a compiled policy (WebAssembly.compile(): expected magic word 00 61 73 6d, found 6e 6f 74 20 @+0)`,
      ),
    ]);
  });

  it('refuses a port in use', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      await expectConfigurationError(
        { PORT: String(port) },
        `PORT ${port} is already in use (127.0.0.1 port ${port}): stop the other process or choose another PORT`,
      );
    } finally {
      taken.close();
    }
  });

  it('says where it listens, which database, that setup is open and which policy build; SIGTERM to npm start stops the server', async () => {
    const proc = start('npm', ['start'], { ...SECRETS, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dir });
    const listening = await proc.line('gatehouse listening');
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'policies/build/manifest.json'), 'utf8'));
    expect(listening).to.deep.include({
      database: `sqlite:${path.join(dir, 'gatehouse.sqlite')}`,
      setupOpen: true,
      setupUrl: `${listening.url}/setup`,
    });
    expect(listening.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(listening.policy).to.deep.include({ sourceHash: manifest.sourceHash, opaVersion: manifest.opaVersion });
    expect((await fetch(`${listening.url}/api/health`)).status).to.equal(200);
    // written in batches, but a quiet service still writes its line soon, without exiting
    expect(await proc.line('request completed')).to.deep.include({ route: '/api/health', res: { statusCode: 200 } });

    proc.child.kill('SIGTERM');
    await proc.exited;
    await proc.line('stopped');
    // Nothing is left listening: the server did not outlive npm.
    const refused = await fetch(`${listening.url}/api/health`).then(
      () => null,
      (err: Error) => err,
    );
    expect(refused, 'the server still answers after npm start exited').to.be.an('error');
  });

  it('stops on SIGTERM even when whatever read its stdout has gone (the buffered log lines cannot be written)', async () => {
    const proc = node({ DATA_DIR: dir });
    const { url } = await proc.line('gatehouse listening');
    proc.child.stdout!.destroy();
    for (let i = 0; i < 5; i++) expect((await fetch(`${url}/api/health`)).status).to.equal(200);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
  });

  /**
   * A login request whose body is still to come: the server's `100 Continue` says it has the
   * headers and the request is in flight (no clock involved).
   */
  async function requestInFlight(url: string) {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    let answer = '';
    const continued = new Promise<void>((resolve) =>
      socket.on('data', (chunk) => {
        answer += chunk.toString();
        if (answer.includes('100 Continue')) resolve();
      }),
    );
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const body = JSON.stringify({ user: 'nobody', password: 'wrong password' });
    socket.write(
      `POST /api/login HTTP/1.1\r\nHost: gatehouse\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await continued;
    return { socket, body, closed, answer: () => answer };
  }

  it('on SIGTERM lets a request in flight finish, then exits 0', async () => {
    const proc = node({ DATA_DIR: dir, SHUTDOWN_TIMEOUT_MS: '30000' });
    const { url } = await proc.line('gatehouse listening');
    const request = await requestInFlight(url);
    proc.child.kill('SIGTERM');
    await proc.line('shutting down');
    request.socket.write(request.body);
    await request.closed;
    expect(request.answer()).to.match(/HTTP\/1\.1 401 Unauthorized/);
    expect(request.answer()).to.include('{"message":"invalid username or password"}');
    expect(await proc.exited).to.equal(0);
  });

  it('on SIGTERM closes what is still in flight at SHUTDOWN_TIMEOUT_MS and exits 1', async () => {
    const proc = node({ DATA_DIR: dir, SHUTDOWN_TIMEOUT_MS: '200' });
    const { url } = await proc.line('gatehouse listening');
    const request = await requestInFlight(url);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(1);
    expect(await proc.line('requests still in flight at SHUTDOWN_TIMEOUT_MS')).to.include({ timeoutMs: 200 });
    await request.closed;
  });
});
