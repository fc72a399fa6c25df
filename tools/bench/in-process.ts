/**
 * The service's parts in the benchmark's own process (no HTTP), on a temporary directory: what
 * bench:authorize measures against.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import type { Services } from '../../src/services.ts';
import { startServices } from '../../src/startup.ts';

/** Started and bootstrapped on SQLite in a new temporary directory, or on `databaseUrl`; remove `dir` when done. */
export async function inProcessServices(prefix: string, databaseUrl?: string): Promise<{ services: Services; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl ?? `sqlite:${path.join(dir, 'bench.sqlite')}`,
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    // the test-mode document check rebuilds the document after every commit: not what production pays
    AUTHZ_VERIFY_DOCUMENTS: 'false',
  });
  const services = await startServices(config, pino({ level: 'warn' }));
  await bootstrap(services);
  return { services, dir };
}
