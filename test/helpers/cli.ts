/** `npm run cli` as an operator runs it: a process of its own on a test app's database and secrets. */
import { execFile } from 'node:child_process';
import type { TestApp } from './app.ts';
import { REPO_ROOT } from './opa.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs tools/cli.ts with `args` against `app`'s database, `stdin` on its standard input; `env` adds or overrides variables. */
export function runCli(app: TestApp, args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const config = app.services.config;
  const env = {
    ...process.env,
    DATABASE_URL: config.databaseUrl ?? '',
    JWT_SECRET: config.jwtSecret,
    SECRET_KEY: config.secretKey,
    LOG_LEVEL: 'error',
    ...options.env,
  };
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', 'tools/cli.ts', ...args], { env, cwd: REPO_ROOT }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(options.stdin ?? '');
  });
}
