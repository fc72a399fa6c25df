/**
 * The service as an operator runs it: `src/main.ts` in a child process of its own, on a free
 * loopback port, its log read from stdout. The test ends it by pid (SIGTERM, or SIGKILL for a crash).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const PROCESS_SECRETS = { SECRET_KEY: 'process-test-secret-key-0123456789abcdef', JWT_SECRET: 'process-test-jwt-secret-0123456789abcdef' };

export interface ServiceProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the URL the service listens on, once it says so. */
  listening: Promise<string>;
  /** Sends `signal` and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export function startServiceProcess(env: Record<string, string>): ServiceProcess {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'TEST_DB', 'NODE_ENV', 'LOG_LEVEL', 'PORT', 'HOST', 'DATA_DIR', 'METRICS_TOKEN']) delete base[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, ...PROCESS_SECRETS, NODE_ENV: 'development', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; url?: string })
        .find((entry) => entry.msg?.startsWith('gatehouse listening'));
      if (found?.url) resolve(found.url);
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening:\n${out}\n${err}`)));
  });
  listening.catch(() => undefined);
  return {
    child,
    stderr: () => err,
    exited,
    listening,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid!, signal);
        await exited;
      }
    },
  };
}
