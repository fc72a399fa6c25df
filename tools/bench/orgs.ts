/**
 * Many small orgs: 10,000 orgs (each seeded with its basic and fixed roles, one Editor, a folder
 * and a dashboard) each answering a decision. The engine keeps at most AUTHZ_MAX_LOADED_ORGS
 * documents loaded (one wasm instance each, least recently used dropped first), so this prints:
 * the RSS with the default bound after every org was asked, the cost of a cold org's first
 * decision (document built from SQL, instance made, data set), a warm decision for comparison,
 * and what keeping every org loaded would cost per org.
 *
 *   npm run bench:orgs                    # 10,000 orgs on a temporary SQLite file
 *   npm run bench:orgs -- --orgs 2000
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { seedOrgRoles } from '../../src/accesscontrol/seed.ts';
import type { AuthzInput } from '../../src/authz/types.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { siblingKeys } from '../../src/folders/store.ts';
import { insertOrg } from '../../src/orgs/store.ts';
import { startServices } from '../../src/startup.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const count = Number(arg('orgs', '10000'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-orgs-'));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    DATA_DIR: dir,
    DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${path.join(dir, 'orgs.sqlite')}`,
    JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123456789',
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
    LOG_LEVEL: 'warn',
  });
  const services = await startServices(config, pino({ level: 'warn' }));
  await bootstrap(services);
  const now = Date.now();

  let started = performance.now();
  const orgs = Array.from({ length: count }, (_, i) => ({ org: `org_bench${i}`, user: `usr_orgbench${i}` }));
  for (let i = 0; i < orgs.length; i += 100) {
    const batch = orgs.slice(i, i + 100);
    await services.transact(async (tx) => {
      for (const { org } of batch) await insertOrg(tx.db, { id: org, name: org }, now);
      for (const { org } of batch) await seedOrgRoles(tx, org, now);
      await tx.db('users').insert(
        batch.map(({ org, user }) => ({
          id: user,
          login: user,
          email: `${user}@example.test`,
          name: user,
          password_hash: null,
          is_svc_admin: false,
          is_disabled: false,
          is_service_account: false,
          default_org_id: org,
          created_at: now,
          updated_at: now,
        })),
      );
      await tx.db('org_members').insert(batch.map(({ org, user }) => ({ org_id: org, user_id: user, role: 'Editor', created_at: now })));
      const folders = batch.map(({ org }) => ({
        org_id: org,
        uid: 'f1',
        title: 'Folder',
        description: '',
        parent_uid: null,
        ...siblingKeys(null, 'Folder'),
        created_at: now,
        updated_at: now,
      }));
      await tx.db('folders').insert(folders);
      await tx
        .db('dashboards')
        .insert(
          batch.map(({ org }) => ({ org_id: org, uid: 'd1', title: 'Dashboard', folder_uid: 'f1', data: '{}', version: 1, created_at: now, updated_at: now })),
        );
    });
  }
  console.log(`${count} orgs seeded in ${(performance.now() - started) / 1000} s (${os.availableParallelism()} cores, ${services.db.client.config.client})`);

  const ask = (i: number): AuthzInput => ({
    subject: { id: orgs[i]!.user, kind: 'user', server_admin: false, disabled: false },
    org_id: orgs[i]!.org,
    action: 'dashboards:write',
    resource: { kind: 'dashboards', uid: 'd1' },
  });
  const rssBefore = process.memoryUsage().rss;
  const cold: number[] = [];
  let allowed = 0;
  for (let i = 0; i < count; i += 1) {
    started = performance.now();
    if ((await services.engine.authorize(ask(i))).allow) allowed += 1;
    cold.push(performance.now() - started);
  }
  const warm: number[] = [];
  const bound = config.authzMaxLoadedOrgs;
  for (let round = 0; round < 20; round += 1) {
    for (let i = count - Math.min(bound, count); i < count; i += 1) {
      started = performance.now();
      await services.engine.authorize(ask(i));
      warm.push(performance.now() - started);
    }
  }
  const stats = services.engine.stats();
  const rss = process.memoryUsage().rss;
  console.log(`every org asked once:   ${allowed}/${count} allowed; ${stats.orgs} documents loaded (AUTHZ_MAX_LOADED_ORGS ${bound})`);
  console.log(`cold first decision:    p50 ${ms(percentile(cold, 50))}, p99 ${ms(percentile(cold, 99))}, max ${ms(Math.max(...cold))}   (target ≤ 5 ms)`);
  console.log(`warm decision:          p50 ${ms(percentile(warm, 50))}, p99 ${ms(percentile(warm, 99))}`);
  console.log(`process RSS:            ${mib(rss)} with ${stats.orgs} loaded (${mib(rssBefore)} before any was; wasm ${mib(stats.wasmBytes)})`);
  const perOrg = stats.orgs > 0 ? stats.wasmBytes / stats.orgs : 0;
  console.log(
    `all ${count} loaded:       would take about ${mib(perOrg * count)} of wasm memory alone (${(perOrg / 1024).toFixed(0)} KiB per org): hence the bound`,
  );
  services.engine.stopChangePoll();
  await services.db.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
