/**
 * Several instances booting at once on one empty database all come up, and what boot seeds (the
 * default org, its roles and the global one, the seed admin) is there once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Knex } from 'knex';
import pino from 'pino';
import { BASIC_ROLES, FIXED_ROLES } from '../src/accesscontrol/builtin-roles.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { createDb } from '../src/db/knex.ts';
import type { Services } from '../src/services.ts';
import { startServices } from '../src/startup.ts';
import { createTestDatabase, TestClock, testConfig, type Database } from './helpers/app.ts';
import { requireDatabase } from './helpers/peers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const INSTANCES = 3;
const SECRETS = { SECRET_KEY: 'bootstrap-test-secret-key-0123456789abcdef', JWT_SECRET: 'bootstrap-test-jwt-secret-0123456789abcdef' };
const SEED_ADMIN = { SEED_ADMIN_LOGIN: 'root', SEED_ADMIN_EMAIL: 'root@example.test', SEED_ADMIN_PASSWORD: 'a long seed password 42' };

/** Everything boot seeds is there once. */
async function expectSeededOnce(db: Knex): Promise<void> {
  const count = async (table: string, where: Record<string, unknown>) => Number((await db(table).where(where).count({ n: '*' }))[0]!.n);
  expect(await count('orgs', {})).to.equal(1);
  expect(await count('orgs', { id: 'org_main' })).to.equal(1);
  expect(await count('users', {})).to.equal(1);
  expect(await count('users', { login: 'root', is_svc_admin: true })).to.equal(1);
  const orgRoles: Array<{ uid: string }> = await db('roles').where({ org_id: 'org_main' }).select('uid');
  expect(orgRoles.map((role) => role.uid).sort()).to.deep.equal([...BASIC_ROLES, ...FIXED_ROLES].map((role) => role.uid).sort());
  expect(await count('roles', { org_id: null })).to.equal(1);
  expect(await count('roles', { org_id: null, uid: 'basic:server_admin' })).to.equal(1);
  for (const action of ['org.created', 'role.seeded', 'setup.admin_created']) expect(await count('audit_log', { action }), action).to.equal(1);
}

/** A process that boots an instance (test/helpers/boot-instance.ts) up to its seeding, which `go()` starts. */
function startInstance(databaseUrl: string, dataDir: string) {
  const env = { ...process.env };
  for (const name of ['TEST_DB', 'LOG_LEVEL']) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/boot-instance.ts'], {
    cwd: ROOT,
    env: { ...env, ...SEED_ADMIN, NODE_ENV: 'test', DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...SECRETS },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: Array<() => void> = [];
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const said = async (word: string) => {
    while (!output.split('\n').includes(word)) {
      const gone = await Promise.race([new Promise<boolean>((resolve) => waiters.push(() => resolve(false))), exited.then(() => true)]);
      if (gone && !output.split('\n').includes(word)) throw new Error(`exited without saying ${word}:\n${output}`);
    }
  };
  return {
    ready: () => said('ready'),
    go: () => child.stdin!.end('go\n'),
    /** `bootstrapped`, or what went wrong. */
    async outcome(): Promise<string> {
      const code = await exited;
      return code === 0 && output.split('\n').includes('bootstrapped') ? 'bootstrapped' : `exit ${code}: ${output.trim()}`;
    },
    kill: () => child.exitCode === null && child.kill(),
  };
}

describe('concurrent bootstrap', function () {
  this.timeout(180_000);
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  // In one process, SQLite's connections would wait for each other's write lock by blocking the
  // event loop the other needs to finish; instances on one SQLite file are separate processes,
  // as in the test below.
  it(`${INSTANCES} bootstraps started at the same moment in one process all succeed, each seed once`, async function () {
    requireDatabase(this, 'mysql');
    const logger = pino({ level: 'silent' });
    const config = testConfig(database.url, SEED_ADMIN);
    const instances: Services[] = [];
    try {
      // each opens and migrates the database (migrations take turns: test/concurrent-migrations.test.ts) …
      for (let i = 0; i < INSTANCES; i++) instances.push(await startServices(config, logger, new TestClock()));
      // … then all seed at once
      const outcomes = await Promise.allSettled(instances.map((services) => bootstrap(services)));
      expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'ok'))).to.deep.equal(Array(INSTANCES).fill('ok'));
      await expectSeededOnce(instances[0]!.db);
      // a later boot finds it all in place
      await bootstrap(instances[0]!);
      await expectSeededOnce(instances[0]!.db);
    } finally {
      for (const services of instances) {
        services.engine.stopChangePoll();
        await services.db.destroy();
      }
    }
  });

  it(`${INSTANCES} instances (processes) seeding at the same moment on a fresh database all succeed, each seed once`, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-boot-'));
    const instances = Array.from({ length: INSTANCES }, () => startInstance(database.url, dataDir));
    try {
      // each opens and migrates the database, then all seed at once
      await Promise.all(instances.map((instance) => instance.ready()));
      for (const instance of instances) instance.go();
      expect(await Promise.all(instances.map((instance) => instance.outcome()))).to.deep.equal(Array(INSTANCES).fill('bootstrapped'));
    } finally {
      for (const instance of instances) instance.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    const db = createDb({ databaseUrl: database.url, sqliteFile: '' });
    try {
      await expectSeededOnce(db);
    } finally {
      await db.destroy();
    }
  });
});
