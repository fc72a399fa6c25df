/** Process entry: config -> db -> migrate -> seed -> policy -> listen; SIGTERM/SIGINT drain. */
import type { Server } from 'node:http';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.ts';
import { startAuditRetention } from './audit/retention.ts';
import { startAuditStream } from './audit/stream.ts';
import { bootstrap } from './bootstrap.ts';
import { assertDataDirWritable, ConfigError, describeDatabase, loadConfig, type Config } from './config.ts';
import { createServer, listen } from './http/server.ts';
import { anyHumanUserExists } from './identity/users.store.ts';
import type { Services } from './services.ts';
import { startServices } from './startup.ts';
import { BatchedLines } from './logging/batched-lines.ts';
import { createLineLogger } from './logging/line-writer.ts';

/** Listening fails for a reason the operator fixes in the configuration: said as such. */
async function listenOrExplain(server: Server, config: Config) {
  try {
    return await listen(server, config.host, config.port);
  } catch (err) {
    const where = `${config.host || 'every interface'} port ${config.port}`;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`PORT ${config.port} is already in use (${where}): stop the other process or choose another PORT`);
    if (code === 'EACCES') throw new ConfigError(`PORT ${config.port} needs privileges this process lacks (${where}): choose a port above 1023`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`HOST ${config.host} is not an address of this machine`);
    throw err;
  }
}

async function announce(logger: Logger, services: Services, port: number): Promise<void> {
  const { config } = services;
  const url = `http://${config.host && config.host !== '0.0.0.0' && config.host !== '::' ? config.host : 'localhost'}:${port}`;
  const setupOpen = !(await anyHumanUserExists(services.db));
  const { provenance } = services.engine;
  // sourceHash: the revision, named as the build's manifest names it
  const policy = {
    file: provenance.file,
    source: provenance.source,
    sourceHash: provenance.revision,
    signer: provenance.signer,
    opaVersion: provenance.opaVersion,
  };
  logger.info(
    {
      url,
      host: config.host || '(every interface)',
      port,
      database: describeDatabase(config),
      setupOpen,
      ...(setupOpen && { setupUrl: `${url}/setup` }),
      policy,
    },
    `gatehouse listening on ${url}; database ${describeDatabase(config)}; ${setupOpen ? `setup open at ${url}/setup` : 'setup done'}; policy ${policy.sourceHash?.slice(0, 12) ?? 'without manifest'}${policy.signer ? ` signed by ${policy.signer}` : ''}`,
  );
}

/** How long a logged line may wait in the buffer before it is written. */
const LOG_FLUSH_INTERVAL_MS = 200;

/**
 * How many characters of log lines are gathered before they are written: 64 KiB cost 0.1 µs per
 * line against 0.3–0.45 µs in 4 KiB batches (a write of its own, and its conversion, per batch);
 * at 16,000 lines a second (about 230 characters each) a batch fills in 17 ms, sooner than
 * LOG_FLUSH_INTERVAL_MS.
 */
const LOG_BATCH_CHARS = 64 * 1024;

/**
 * The service's log: JSON lines on stdout, written in batches of LOG_BATCH_CHARS or every
 * LOG_FLUSH_INTERVAL_MS rather than one write per line (a line per request). The writes stay
 * synchronous, as pino's default: handing them to libuv's thread pool cost more CPU per line than
 * it saved. What is batched is written when the process exits, a crash included; only a
 * SIGKILL loses the last lines.
 */
function createLogger(level: string): Logger {
  const destination = new BatchedLines(pino.destination({ dest: 1, sync: true }), LOG_BATCH_CHARS);
  // The batch goes to pino's synchronous destination, which writes it at once and goes quiet
  // on a broken stdout (EPIPE) rather than throwing.
  const flush = () => destination.flush();
  setInterval(flush, LOG_FLUSH_INTERVAL_MS).unref();
  process.on('exit', flush);
  return createLineLogger({ level }, destination);
}

async function main(): Promise<void> {
  const config = loadConfig();
  assertDataDirWritable(config);
  const logger = createLogger(config.logLevel);
  const services = await startServices(config, logger);
  services.metrics.collectProcessMetrics();
  await bootstrap(services);
  const stopRetention = startAuditRetention(services);
  const stopAuditStream = startAuditStream(services);
  const built = buildApp(services);
  const { app } = built;
  const server = createServer(app);
  const address = await listenOrExplain(server, config);
  await announce(logger, services, address.port);

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    // A second signal is the operator's impatience: stop now.
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: no new connections, waiting for requests in flight');
    stopRetention();
    services.engine.stopChangePoll();
    const deadline = setTimeout(() => {
      logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'requests still in flight at SHUTDOWN_TIMEOUT_MS: closing their connections');
      server.closeAllConnections();
      process.exit(1);
    }, config.shutdownTimeoutMs);
    server.close(() => {
      clearTimeout(deadline);
      // the rate limit's last counts go to the database for the other instances, and a batch of the
      // audit stream under way finishes (or fails: it is sent again), and the decision log's waiting entries are sent, before the pool closes
      void Promise.all([built.stop(), stopAuditStream(), services.engine.closeDecisionLog()])
        .then(() => services.db.destroy())
        .then(() => {
          logger.info('stopped');
          process.exit(0);
        });
    });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((err) => {
  // The environment's fault, or secrets the instances on the database do not share: the operator's to fix.
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
