/**
 * One instance's boot in a process of its own (test/concurrent-bootstrap.test.ts): opens and
 * migrates the database of DATABASE_URL as main.ts does, prints `ready`, and when a line arrives
 * on stdin seeds it (bootstrap), prints `bootstrapped` or the error, and exits.
 */
import readline from 'node:readline';
import pino from 'pino';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { startServices } from '../../src/startup.ts';

const services = await startServices(loadConfig(), pino({ level: 'silent' }));
const lines = readline.createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
let failure: unknown = null;
try {
  await bootstrap(services);
} catch (err) {
  failure = err;
}
services.engine.stopChangePoll();
await services.db.destroy();
process.stdout.write(failure ? `failed: ${String(failure)}\n` : 'bootstrapped\n');
process.exitCode = failure ? 1 : 0;
