/**
 * Two builds' authorize() compared question by question, in one process: each build's engine
 * and policy (from its own checkout, e.g. a `git worktree` of the base commit) answer the same
 * stream of bench:authorize's mix at scale S against one database, the two taking turns on every
 * question (which goes first alternates). On a shared 2-core machine whose speed drifts by tens
 * of percent within minutes, timings of one build from one run and of the other from the next do
 * not compare; these do. Both engines keep their own answers, so each sees the same repeats as it
 * would alone, but together they hold twice the memory: the figures are higher than
 * bench:authorize's, and it is the ratios that tell.
 *
 *   git worktree add /tmp/base <commit> && ln -s $PWD/node_modules /tmp/base/node_modules
 *   npx tsx tools/bench/authorize-ab.ts /tmp/base . [--rounds 3] [--scale 0.1]
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { AuthzEngine } from '../../src/authz/engine.ts';
import type { AuthzInput } from '../../src/authz/types.ts';
import { arg } from './service-process.ts';
import { inProcessServices } from './in-process.ts';
import { fillOrg, questionPool, scaled } from './scale-org.ts';

const ORG = 'org_main';
const SAMPLES = 200_000;

/** The engine of the checkout in `dir`, with that checkout's compiled policy. */
async function engineOf(dir: string, db: ConstructorParameters<typeof AuthzEngine>[0]): Promise<AuthzEngine> {
  const root = path.resolve(dir);
  const { AuthzEngine: Engine } = (await import(path.join(root, 'src/authz/engine.ts'))) as typeof import('../../src/authz/engine.ts');
  const { PolicyModule } = (await import(path.join(root, 'src/authz/wasm.ts'))) as typeof import('../../src/authz/wasm.ts');
  const policy = await PolicyModule.fromFile(path.join(root, 'policies/build/authz.wasm'));
  return new Engine(db, policy, { legacyAclEnabled: true, maxLoadedOrgs: 256 }, pino({ level: 'warn' }));
}

const percentile = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! / 1000;

async function main(): Promise<void> {
  const dirs = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (dirs.length !== 2) throw new Error('usage: authorize-ab.ts <checkout A> <checkout B> [--rounds N] [--scale F]');
  const rounds = Number(arg('rounds', '3'));
  const factor = Number(arg('scale', '1'));
  const { services, dir: tmp } = await inProcessServices('gatehouse-authorize-ab-');
  services.engine.stopChangePoll();
  const org = await fillOrg(services.db, ORG, scaled(factor));
  const engines = [await engineOf(dirs[0]!, services.db), await engineOf(dirs[1]!, services.db)] as const;
  const { pool, skewed } = questionPool(ORG, org, Math.round(100_000 * factor));
  const stream: AuthzInput[] = Array.from({ length: SAMPLES }, () => skewed(pool));
  for (const engine of engines) for (let i = 0; i < 20_000; i++) await engine.authorize(stream[i]!);

  console.log(`scale ${factor}: ${SAMPLES} questions of bench:authorize's mix per round, A = ${dirs[0]}, B = ${dirs[1]}, taking turns`);
  for (let round = 1; round <= rounds; round++) {
    const timings = [new Float64Array(SAMPLES), new Float64Array(SAMPLES)];
    for (let i = 0; i < SAMPLES; i++) {
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = process.hrtime.bigint();
        await engines[k]!.authorize(stream[i]!);
        timings[k]![i] = Number(process.hrtime.bigint() - started);
      }
    }
    const [a, b] = timings.map((t) => t.slice().sort()) as [Float64Array, Float64Array];
    const figures = (p: number) =>
      `p${p} ${percentile(a, p).toFixed(1)} / ${percentile(b, p).toFixed(1)} µs (${(percentile(b, p) / percentile(a, p)).toFixed(2)}×)`;
    console.log(`round ${round}: A / B: ${[50, 90, 99].map(figures).join(', ')}`);
  }
  await services.db.destroy();
  fs.rmSync(tmp, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
