/**
 * The admin CLI: `npm run cli -- <command> [options]`. It opens the database the service uses
 * (the same environment variables), migrates it, and acts as the `system` actor in the audit log.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import pino from 'pino';
import { isAction } from '../src/accesscontrol/actions.ts';
import { subjectOfUser } from '../src/accesscontrol/roles.ts';
import { SYSTEM_ACTOR } from '../src/audit/writer.ts';
import type { AuthzInput } from '../src/authz/types.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { NotFoundError, ServiceError } from '../src/errors.ts';
import { findUserByLoginOrEmail } from '../src/identity/users.store.ts';
import { findOrgById, isOrgMember } from '../src/orgs/store.ts';
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
  export-policy-data --org <orgId> [--out <file>]
      Writes the org's policy data document, exactly as the policy evaluates it, as JSON to
      <file> (else to stdout): \`opa eval -d policies/authz -d <file> -i <input.json>
      data.authz.decision\` reproduces the service's decisions (README, "Policy as code").
  explain --org <orgId> --user <login> --action <action> [--resource <kind>:<uid> | <scope>]
      Prints the policy's decision for that user (or service account) and its reasons, and
      the input that reproduces it with opa eval. A resource is <kind>:<uid>, e.g.
      dashboards:d1, or a scope such as teams:id:<teamId>.
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

/** `--name value` options of a command, each allowed once; anything else is a usage error. */
function parseOptions<N extends string>(args: string[], names: readonly N[]): Partial<Record<N, string>> {
  const options: Partial<Record<N, string>> = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i]!.slice(2) as N;
    if (!args[i]!.startsWith('--') || !names.includes(name)) throw new UsageError(`unknown option ${args[i]}`);
    if (args[i + 1] === undefined) throw new UsageError(`${args[i]} needs a value`);
    options[name] = args[i + 1];
  }
  return options;
}

/** The org an operator names, which must exist. */
async function existingOrg(services: Services, orgId: string | undefined): Promise<string> {
  if (!orgId) throw new UsageError('--org <orgId> is required');
  if (!(await findOrgById(services.db, orgId))) throw new NotFoundError(`org ${orgId} not found`);
  return orgId;
}

/** `<kind>:<uid>` names a resource by uid; anything with more colons is taken as a scope. */
function resourceOption(value: string): AuthzInput['resource'] {
  const parts = value.split(':');
  if (parts.length === 2 && parts[0] && parts[1]) return { kind: parts[0], uid: parts[1] };
  if (parts.length > 2) return { scope: value };
  throw new UsageError(`--resource must be <kind>:<uid> or a scope <kind>:<attr>:<value>, got "${value}"`);
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
  async 'export-policy-data'(services, args) {
    const options = parseOptions(args, ['org', 'out']);
    const org = await existingOrg(services, options.org);
    const json = JSON.stringify(await services.engine.document(org), null, 2);
    if (!options.out) return json;
    writeFileSync(options.out, `${json}\n`);
    return `wrote the policy data of org ${org} to ${options.out}`;
  },
  async explain(services, args) {
    const options = parseOptions(args, ['org', 'user', 'action', 'resource']);
    const org = await existingOrg(services, options.org);
    if (!options.user) throw new UsageError('--user <login> is required');
    if (!options.action || !isAction(options.action)) throw new UsageError(`--action must be a catalogued action, got "${options.action ?? ''}"`);
    const user = await findUserByLoginOrEmail(services.db, options.user);
    if (!user || !(await isOrgMember(services.db, org, user.id))) throw new NotFoundError(`user ${options.user} not found in org ${org}`);
    const input: AuthzInput = { subject: subjectOfUser(user), org_id: org, action: options.action };
    if (options.resource) input.resource = resourceOption(options.resource);
    const decision = await services.engine.explain(input);
    return [
      `${decision.allow ? 'allowed' : 'denied'}: ${user.login} ${options.action}${options.resource ? ` on ${options.resource}` : ''} in org ${org}`,
      ...decision.reasons.map((reason) => `  - ${reason}`),
      `input: ${JSON.stringify(input)}`,
    ].join('\n');
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
