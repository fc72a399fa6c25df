/**
 * The admin CLI: `npm run cli -- <command> [options]`. It opens the database the service uses
 * (the same environment variables, read by the same config), says which on stderr, migrates it,
 * and acts as the `system` actor in the audit log.
 * Exit codes: 0 done, 2 when the operator's input must change (usage, configuration, a value the
 * service refuses, a name that is unknown or taken), 1 when something else failed (the database,
 * a file), 3 when policy-diff finds a decision that flips; an error is one line on stderr.
 *
 * A password is read from stdin (piped) or asked for at the terminal, never taken from the command
 * line: arguments end up in shell histories and in every user's `ps` listing.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Ajv } from 'ajv';
import pino, { type Logger } from 'pino';
import { isAction } from '../src/authz/actions.ts';
import { findOrgMemberUsers } from '../src/accesscontrol/policy.store.ts';
import { subjectOfUser } from '../src/accesscontrol/roles.ts';
import { recordAudit, SYSTEM_ACTOR } from '../src/audit/writer.ts';
import { loadCandidate } from '../src/authz/policy-candidate.ts';
import { readRecordedDecisions, sweepOf, type RecordedDecisions, type Sweep } from '../src/authz/policy-diff-inputs.ts';
import { diffPolicies, renderPolicyDiff } from '../src/authz/policy-diff.ts';
import { renderReasons } from '../src/authz/reasons.ts';
import type { AuthzInput } from '../src/authz/types.ts';
import { ConfigError, describeDatabase, loadConfig, type Config } from '../src/config.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../src/crypto/password.ts';
import { waitForDatabase } from '../src/db/connect.ts';
import { createDb, sqliteFileOf } from '../src/db/knex.ts';
import { BadRequestError, NotFoundError, ServiceError } from '../src/errors.ts';
import { emailSchema, loginSchema, nameSchema, newPasswordSchema } from '../src/http/schemas.ts';
import { clearAttemptsOfUser } from '../src/identity/lockout.ts';
import { assertAcceptablePassword } from '../src/identity/password-policy.ts';
import { assertNoClash } from '../src/identity/profile.ts';
import { revokeAllSessionsOf, userTarget } from '../src/identity/session-revocation.ts';
import { insertServerAdmin } from '../src/identity/setup.ts';
import { anyHumanUserExists, findUserByLoginOrEmail, setUserPassword, type UserRow } from '../src/identity/users.store.ts';
import { findOrgById, isOrgMember } from '../src/orgs/store.ts';
import { importLegacyAcl, migrateLegacyAcl, parseLegacyAclExport } from '../src/permissions/legacy-acl.ts';
import type { Services } from '../src/services.ts';
import { startServices } from '../src/startup.ts';

class UsageError extends Error {}

interface ParsedArgs {
  options: Record<string, string>;
  /** The `--name` flags given, which take no value. */
  flags: Set<string>;
  positional: string[];
}

/** What a command prints, and the exit code it ends with when that is not 0. */
interface Outcome {
  output: string;
  exitCode: number;
}

interface Command {
  /** The command line it takes, after its name. */
  synopsis: string;
  /** What it does, for `help` and `<command> --help`. */
  description: string;
  /** The `--name value` options it accepts. */
  options: string[];
  /** The `--name` flags it accepts (no value). */
  flags?: string[];
  /** Refuses bad usage before anything opens the database. */
  validate(args: ParsedArgs): void;
  /** It makes sense on a database that has no user yet (a fresh installation's first admin). */
  runsOnFreshDatabase?: true;
  run(services: Services, args: ParsedArgs): Promise<string | Outcome>;
}

/** Splits `--name value` / `--name=value` options (only those in `allowed`) and `--name` flags from positional arguments. */
function parseArgs(args: string[], allowed: string[], allowedFlags: string[] = []): ParsedArgs {
  const options: Record<string, string> = {};
  const flags = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.split(/=(.*)/s) as [string, string | undefined];
    if (allowedFlags.includes(name)) {
      if (inline !== undefined) throw new UsageError(`${name} takes no value`);
      flags.add(name);
      continue;
    }
    if (!allowed.includes(name)) throw new UsageError(`unknown option ${name}`);
    const value = inline ?? args[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    options[name] = value;
  }
  return { options, flags, positional };
}

function requiredOrg(args: ParsedArgs): string {
  const org = args.options['--org'];
  if (!org) throw new UsageError('--org <orgId> is required');
  return org;
}

/** The one `<login>` a user command takes; anything more is refused, a password above all. */
function onlyLogin(command: string, args: ParsedArgs): string {
  if (args.positional.length !== 1) throw new UsageError(`${command} takes exactly one login (a password is read from stdin, never from the command line)`);
  return args.positional[0]!;
}

const ajv = new Ajv({ allErrors: false, strict: true });
const fieldCheckers = new Map<object, ReturnType<typeof ajv.compile>>();

/** Checks a value the API would check with `schema`, so the CLI accepts nothing the API refuses. */
function assertField(value: string, schema: object, what: string): void {
  let check = fieldCheckers.get(schema);
  if (!check) fieldCheckers.set(schema, (check = ajv.compile(schema)));
  if (!check(value)) throw new BadRequestError(`${what} is not valid: ${check.errors?.[0]?.message ?? 'invalid'}`);
}

/** Asks at the terminal without echoing what is typed. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') {
          finish();
          resolve(typed);
          return;
        }
        if (char === '\u0003' || char === '\u0004') {
          finish();
          reject(new UsageError('cancelled'));
          return;
        }
        typed = char === '\u007f' || char === '\b' ? typed.slice(0, -1) : typed + char;
      }
    };
    process.stderr.write(question);
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/** The new password: asked twice at a terminal, else all of stdin without its final line break. */
async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const password = await promptHidden('New password: ');
    if ((await promptHidden('Repeat it: ')) !== password) throw new UsageError('the two passwords differ');
    return password;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (!password) throw new UsageError('no password on stdin: pipe it in, or run the command in a terminal to be asked for it');
  return password;
}

/** The password policy of the API (length, common passwords, not the login or email), then its hash. */
async function acceptableHash(password: string, owner: { login: string; email: string | null }): Promise<string> {
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequestError(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  assertField(password, newPasswordSchema, 'the password');
  assertAcceptablePassword(password, owner);
  return hashPassword(password);
}

async function findHumanUser(services: Services, login: string): Promise<UserRow> {
  const user = await findUserByLoginOrEmail(services.db, login);
  if (!user || user.is_service_account) throw new NotFoundError(`user ${login} not found`);
  return user;
}

/** The org an operator names, which must exist (a name that is not there is the operator's to fix). */
async function existingOrg(services: Services, args: ParsedArgs): Promise<string> {
  const org = requiredOrg(args);
  if (!(await findOrgById(services.db, org))) throw new UsageError(`org ${org} not found`);
  return org;
}

/** `<kind>:<uid>` names a resource by uid; anything with more colons is taken as a scope. */
function resourceOption(value: string): NonNullable<AuthzInput['resource']> {
  const parts = value.split(':');
  if (parts.length === 2 && parts[0] && parts[1]) return { kind: parts[0], uid: parts[1] };
  if (parts.length > 2) return { scope: value };
  throw new UsageError(`--resource must be <kind>:<uid> or a scope <kind>:<attr>:<value>, got "${value}"`);
}

/** The exit code of policy-diff when a decision flips: CI fails the change on it. */
const FLIPPED = 3;

const REPO_ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The candidate's wasm bytes: a file as it is (a .wasm or a bundle), a directory of Rego compiled
 * by tools/policy-build.sh as the committed build is, into a temporary directory.
 */
function candidateBytes(candidate: string): Buffer {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(candidate).isDirectory();
  } catch (err) {
    throw new UsageError(`cannot read --candidate ${candidate}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!isDirectory) return readFileSync(candidate);
  const out = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-candidate-'));
  try {
    execFileSync('bash', [path.join(REPO_ROOT, 'tools/policy-build.sh'), path.resolve(candidate), out], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return readFileSync(path.join(out, 'authz.wasm'));
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim();
    throw new UsageError(`the Rego in ${candidate} does not build: ${stderr.split('\n').slice(-5).join(' ') || (err as Error).message}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The entries of a decision log file (DECISION_LOG=file's lines), read as a stream. */
async function recordedDecisionsOf(file: string): Promise<RecordedDecisions> {
  if (!existsSync(file)) throw new UsageError(`no decision log at ${file}`);
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  return readRecordedDecisions(lines, Number.POSITIVE_INFINITY);
}

function sweepLimit(args: ParsedArgs): number | undefined {
  const limit = args.options['--limit'];
  if (limit === undefined) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(limit)) throw new UsageError(`--limit must be a whole number from 1 to 999999999, got "${limit}"`);
  return Number(limit);
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** The commands by name; `help` lists them in this order. */
const commands: Record<string, Command> = {
  'reset-password': {
    synopsis: '<login>',
    description: `Sets a new password for the user <login> (or email), read from stdin or asked for at the
      terminal, never from the command line; the password policy applies. Lifts the login lockout of
      the account from every address and revokes all its sessions. For a locked-out admin.`,
    options: [],
    validate: (args) => onlyLogin('reset-password', args),
    async run(services, args) {
      const user = await findHumanUser(services, args.positional[0]!);
      const passwordHash = await acceptableHash(await readNewPassword(), user);
      const now = services.clock.now();
      const { revoked, lockouts } = await services.transact(async (tx) => {
        await setUserPassword(tx.db, user.id, passwordHash, now);
        const cleared = await clearAttemptsOfUser(tx.db, user.id);
        await recordAudit(
          tx.db,
          SYSTEM_ACTOR,
          { action: 'user.password_changed', target: userTarget(user), metadata: { by: 'cli', lockoutCleared: cleared > 0 } },
          now,
        );
        return { revoked: await revokeAllSessionsOf(tx, SYSTEM_ACTOR, user, 'password reset with the admin CLI', now), lockouts: cleared };
      });
      return `password of ${user.login} reset; ${plural(revoked, 'session')} revoked; ${lockouts > 0 ? 'login lockout lifted' : 'no login lockout to lift'}`;
    },
  },
  'create-admin': {
    synopsis: '<login> [--email <email>] [--name <name>]',
    description: `Creates a server admin (Admin of the default org) with the password read from stdin or
      asked for at the terminal. Fails if a user has that login or email. --name defaults to the login.`,
    options: ['--email', '--name'],
    runsOnFreshDatabase: true,
    validate(args) {
      const login = onlyLogin('create-admin', args);
      assertField(login, loginSchema, 'the login');
      if (args.options['--email'] !== undefined) assertField(args.options['--email'], emailSchema, '--email');
      assertField(args.options['--name'] ?? login, nameSchema, '--name');
    },
    async run(services, args) {
      const login = args.positional[0]!;
      const email = args.options['--email'] ?? null;
      const name = args.options['--name'] ?? login;
      const passwordHash = await acceptableHash(await readNewPassword(), { login, email });
      const userId = await services.transact(async (tx) => {
        await assertNoClash(tx, email ? [login, email] : [login]);
        return insertServerAdmin(tx, { login, email, name, passwordHash }, SYSTEM_ACTOR, 'cli', services.clock.now());
      });
      return `created server admin ${login.toLowerCase()} (${userId})`;
    },
  },
  'revoke-sessions': {
    synopsis: '<login>',
    description: 'Signs the user <login> (or email) out everywhere: revokes every session and says how many.',
    options: [],
    validate: (args) => onlyLogin('revoke-sessions', args),
    async run(services, args) {
      const user = await findHumanUser(services, args.positional[0]!);
      const revoked = await services.transact((tx) =>
        revokeAllSessionsOf(tx, SYSTEM_ACTOR, user, 'revoked with the admin CLI', services.clock.now(), { alwaysRecord: true }),
      );
      return `revoked ${plural(revoked, 'session')} of ${user.login}`;
    },
  },
  'import-legacy-acl': {
    synopsis: '--org <orgId> <file.json>',
    description: `Replaces the org's legacy dashboard ACL with the export in <file.json> (format: policies/README.md,
      "Legacy dashboard ACL"). The policy reads it as a fallback unless LEGACY_ACL_ENABLED=false.`,
    options: ['--org'],
    validate(args) {
      requiredOrg(args);
      if (args.positional.length !== 1) throw new UsageError('import-legacy-acl needs exactly one file');
    },
    async run(services, args) {
      const org = requiredOrg(args);
      let text: string;
      try {
        text = readFileSync(args.positional[0]!, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read ${args.positional[0]}: ${(err as Error).message}`);
      }
      const imported = await importLegacyAcl(services, SYSTEM_ACTOR, org, parseLegacyAclExport(text));
      return `imported ${imported} legacy ACL entries into org ${org}`;
    },
  },
  'migrate-legacy-acl': {
    synopsis: '--org <orgId>',
    description: `Turns the org's legacy ACL entries into managed grants of the same level and empties the
      legacy ACL. Running it again changes nothing.`,
    options: ['--org'],
    validate(args) {
      requiredOrg(args);
      if (args.positional.length > 0) throw new UsageError('migrate-legacy-acl takes no file');
    },
    async run(services, args) {
      const org = requiredOrg(args);
      const migrated = await migrateLegacyAcl(services, SYSTEM_ACTOR, org);
      return `migrated ${migrated} legacy ACL entries of org ${org} into managed grants`;
    },
  },
  'export-policy-data': {
    synopsis: '--org <orgId> [--out <file>]',
    description: `Writes the org's policy data document, exactly as the policy evaluates it, as JSON to
      <file> (else to stdout): \`opa eval -d policies/authz -d <file> -i <input.json>
      data.authz.decision\` reproduces the service's decisions (policies/README.md, "Reproducing a decision").`,
    options: ['--org', '--out'],
    validate(args) {
      requiredOrg(args);
      if (args.positional.length > 0) throw new UsageError('export-policy-data takes no positional argument');
    },
    async run(services, args) {
      const org = await existingOrg(services, args);
      const json = JSON.stringify(await services.engine.document(org), null, 2);
      const out = args.options['--out'];
      if (!out) return json;
      writeFileSync(out, `${json}\n`);
      return `wrote the policy data of org ${org} to ${out}`;
    },
  },
  explain: {
    synopsis: '--org <orgId> --user <login> --action <action> [--resource <kind>:<uid> | <scope>]',
    description: `Prints the policy's decision for that user (or service account) and its reasons, in
      English and as the policy gives them (data), and the input that reproduces it with opa eval. A resource is <kind>:<uid>, e.g.
      dashboards:d1, or a scope such as teams:id:<teamId>.`,
    options: ['--org', '--user', '--action', '--resource'],
    validate(args) {
      requiredOrg(args);
      if (!args.options['--user']) throw new UsageError('--user <login> is required');
      const action = args.options['--action'];
      if (!action || !isAction(action)) throw new UsageError(`--action must be a catalogued action, got "${action ?? ''}"`);
      if (args.options['--resource'] !== undefined) resourceOption(args.options['--resource']);
    },
    async run(services, args) {
      const org = await existingOrg(services, args);
      const login = args.options['--user']!;
      const action = args.options['--action']!;
      const resource = args.options['--resource'];
      const user = await findUserByLoginOrEmail(services.db, login);
      if (!user || !(await isOrgMember(services.db, org, user.id))) throw new NotFoundError(`user ${login} not found in org ${org}`);
      const input: AuthzInput = { subject: subjectOfUser(user), org_id: org, action };
      if (resource) input.resource = resourceOption(resource);
      const decision = await services.engine.explain(input);
      return [
        `${decision.allow ? 'allowed' : 'denied'}: ${user.login} ${action}${resource ? ` on ${resource}` : ''} in org ${org}`,
        ...renderReasons(decision.reasons).map((reason) => `  - ${reason}`),
        `reasons: ${JSON.stringify(decision.reasons)}`,
        `input: ${JSON.stringify(input)}`,
      ].join('\n');
    },
  },
  'policy-diff': {
    synopsis: '--candidate <dir | file.wasm | bundle.tar.gz> [--decisions <file>] [--org <orgId> [--limit <n>]] [--json]',
    description: `Evaluates a candidate policy build beside the current one (POLICY_WASM_PATH, policies/build)
      and lists every decision that flips, with both builds' reasons. A directory is Rego, compiled by
      tools/policy-build.sh as the committed build is (it needs the pinned opa); a file is a build (.wasm) or
      an opa build bundle (.tar.gz). Compared: the decision log's entries (--decisions <file>, else
      DECISION_LOG_PATH when DECISION_LOG=file), each against the data document of its org, and with --org
      every member x catalogued action x resource of the org's document, at most --limit of them.
      --json prints the report as JSON. Exit codes: 3 when a decision flips, 0 when none does, 2 on bad arguments.`,
    options: ['--candidate', '--decisions', '--org', '--limit'],
    flags: ['--json'],
    validate(args) {
      if (!args.options['--candidate']) throw new UsageError('--candidate <dir | file.wasm | bundle.tar.gz> is required');
      if (args.positional.length > 0) throw new UsageError('policy-diff takes no positional argument');
      if (args.options['--limit'] !== undefined && args.options['--org'] === undefined)
        throw new UsageError('--limit bounds the sweep of --org <orgId>: give both');
      sweepLimit(args);
    },
    async run(services, args) {
      const { decisionLog } = services.config;
      const logFile = args.options['--decisions'] ?? (decisionLog?.target === 'file' ? decisionLog.path : undefined);
      if (logFile === undefined && args.options['--org'] === undefined) {
        throw new UsageError('nothing to compare: give --org <orgId> to sweep an org, or --decisions <file> (or DECISION_LOG=file)');
      }
      const recorded = logFile === undefined ? undefined : await recordedDecisionsOf(logFile);
      let sweep: Sweep | undefined;
      if (args.options['--org'] !== undefined) {
        const org = await existingOrg(services, args);
        const [document, members] = await Promise.all([services.engine.document(org), findOrgMemberUsers(services.db, org)]);
        sweep = sweepOf(document, members.map(subjectOfUser));
      }
      const name = args.options['--candidate']!;
      const candidate = await loadCandidate(candidateBytes(name), name);
      const report = await diffPolicies({
        current: () => services.engine.instantiatePolicy(),
        candidate: candidate.instantiate,
        documentOf: (orgId) => services.engine.document(orgId),
        ...(recorded && { recorded }),
        ...(sweep && { sweep }),
        ...(sweepLimit(args) !== undefined && { sweepLimit: sweepLimit(args) }),
      });
      const output = args.flags.has('--json') ? JSON.stringify(report, null, 2) : renderPolicyDiff(report, name);
      return { output, exitCode: report.allowToDeny + report.denyToAllow > 0 ? FLIPPED : 0 };
    },
  },
};

/**
 * Refuses to act on a database the service has not made its own: a SQLite file that does not
 * exist yet (nothing is created), one never migrated, or one without users unless the command
 * makes sense there. An operator who forgot the service's DATA_DIR or DATABASE_URL would
 * otherwise change a fresh `./data` and see it succeed.
 */
async function assertServiceDatabase(config: Config, logger: Logger, name: string, command: Command): Promise<void> {
  const database = describeDatabase(config);
  const hint = 'set DATA_DIR or DATABASE_URL as the service has them';
  const sqliteFile = sqliteFileOf(config);
  if (sqliteFile && !existsSync(sqliteFile)) throw new UsageError(`no database at ${database} (the service has not run with it): ${hint}; nothing was created`);
  const db = createDb(config);
  try {
    await waitForDatabase(db, config.dbConnectTimeoutMs, logger);
    if (!(await db.schema.hasTable('users'))) throw new UsageError(`${database} has no tables (the service has not run with it): ${hint}`);
    if (!command.runsOnFreshDatabase && !(await anyHumanUserExists(db))) {
      throw new UsageError(`${database} has no users (a fresh installation, not the service's database in use?): ${hint}; ${name} needs users`);
    }
  } finally {
    await db.destroy();
  }
}

const describe = (name: string, command: Command) => `  ${name} ${command.synopsis}\n      ${command.description}`;

const USAGE = `usage: npm run cli -- <command> [options]      (npm run cli -- <command> --help: that command only)

commands:
${Object.entries(commands)
  .map(([name, command]) => describe(name, command))
  .join('\n')}
  help
      Shows this text.

The CLI uses the service's environment (DATABASE_URL, DATA_DIR, JWT_SECRET, SECRET_KEY, ...) and
names the database it opened on stderr. It refuses a database the service has not used: a SQLite
file that does not exist (it creates none), one with no tables, or one with no users (but for
create-admin, which makes the first admin of a fresh installation).
Exit codes: 0 done, 2 usage or configuration error, input refused, or a name unknown or taken; 1 any other failure;
3 policy-diff found a decision that flips.`;

async function run(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command ${name} (npm run cli -- help lists them)`);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: npm run cli -- ${name} ${command.synopsis}\n\n${command.description.replace(/\n\s+/g, '\n')}`);
    return 0;
  }
  const parsed = parseArgs(args, command.options, command.flags);
  command.validate(parsed);
  const config = loadConfig();
  const logger = pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel });
  await assertServiceDatabase(config, logger, name, command);
  // On stderr, so that what the command prints (a document, for export-policy-data) stays its own.
  console.error(`database: ${describeDatabase(config)}`);
  const services = await startServices(config, logger);
  try {
    const outcome = await command.run(services, parsed);
    console.log(typeof outcome === 'string' ? outcome : outcome.output);
    return typeof outcome === 'string' ? 0 : outcome.exitCode;
  } finally {
    services.engine.stopChangePoll();
    await services.db.destroy();
  }
}

/** Usage, configuration, refused input and unknown or taken names are the operator's to fix (2); anything else is a failure (1). */
function exitCodeOf(err: unknown): number {
  const refused = err instanceof ServiceError && err.status >= 400 && err.status < 500;
  return err instanceof UsageError || err instanceof ConfigError || refused ? 2 : 1;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`error: ${message.replace(/\s*\n\s*/g, ' ')}`);
    process.exit(exitCodeOf(err));
  },
);
