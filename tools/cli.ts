/**
 * The admin CLI: `npm run cli -- <command> [options]`. It opens the database the service uses
 * (the same environment variables), migrates it, and acts as the `system` actor in the audit log.
 */
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { SYSTEM_ACTOR } from '../src/audit/writer.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { ServiceError } from '../src/errors.ts';
import { importLegacyAcl, migrateLegacyAcl, parseLegacyAclExport } from '../src/permissions/legacy-acl.ts';
import type { Services } from '../src/services.ts';
import { startServices } from '../src/startup.ts';

const USAGE = `usage: npm run cli -- <command> [options]

commands:
  import-legacy-acl --org <orgId> <file.json>
      Replaces the org's legacy dashboard ACL with the export in <file.json> (format: README,
      "Legacy dashboard ACL"). The policy reads it as a fallback unless LEGACY_ACL_ENABLED=false.
  migrate-legacy-acl --org <orgId>
      Turns the org's legacy ACL entries into managed grants of the same level and empties the
      legacy ACL. Running it again changes nothing.
  help
      Shows this text.

The CLI uses the service's environment (DATABASE_URL, DATA_DIR, JWT_SECRET, SECRET_KEY, ...).`;

class UsageError extends Error {}

/** `--org <id>` and the positional arguments of a command. */
function parseArgs(args: string[]): { org: string; positional: string[] } {
  const positional: string[] = [];
  let org: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === '--org') org = args[++i];
    else if (args[i]!.startsWith('--')) throw new UsageError(`unknown option ${args[i]}`);
    else positional.push(args[i]!);
  }
  if (!org) throw new UsageError('--org <orgId> is required');
  return { org, positional };
}

const commands: Record<string, (services: Services, args: string[]) => Promise<string>> = {
  async 'import-legacy-acl'(services, args) {
    const { org, positional } = parseArgs(args);
    if (positional.length !== 1) throw new UsageError('import-legacy-acl needs exactly one file');
    let text: string;
    try {
      text = readFileSync(positional[0]!, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${positional[0]}: ${(err as Error).message}`);
    }
    const imported = await importLegacyAcl(services, SYSTEM_ACTOR, org, parseLegacyAclExport(text));
    return `imported ${imported} legacy ACL entries into org ${org}`;
  },
  async 'migrate-legacy-acl'(services, args) {
    const { org, positional } = parseArgs(args);
    if (positional.length > 0) throw new UsageError('migrate-legacy-acl takes no file');
    const migrated = await migrateLegacyAcl(services, SYSTEM_ACTOR, org);
    return `migrated ${migrated} legacy ACL entries of org ${org} into managed grants`;
  },
};

async function run(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`unknown command ${name}\n\n${USAGE}`);
    return 2;
  }
  const config = loadConfig();
  const services = await startServices(config, pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }));
  try {
    console.log(await command(services, args));
    return 0;
  } finally {
    services.engine.stopRevisionPoll();
    await services.db.destroy();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ServiceError || err instanceof ConfigError) {
      console.error(`error: ${err.message}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  },
);
