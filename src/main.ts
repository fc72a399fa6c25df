/** Process entry: config -> db -> migrate -> seed -> policy -> listen. */
import pino from 'pino';
import { buildApp } from './app.ts';
import { startAuditRetention } from './audit/retention.ts';
import { bootstrap } from './bootstrap.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createServer, listen } from './http/server.ts';
import { startServices } from './startup.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel });
  const services = await startServices(config, logger);
  await bootstrap(services);
  const stopRetention = startAuditRetention(services);
  const { app } = buildApp(services);
  const server = createServer(app);
  const address = await listen(server, config.host, config.port);
  logger.info({ host: address.address, port: address.port }, 'gatehouse listening');

  const shutdown = () => {
    logger.info('shutting down');
    stopRetention();
    services.engine.stopRevisionPoll();
    server.close(() => void services.db.destroy().then(() => process.exit(0)));
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
