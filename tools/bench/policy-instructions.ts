/**
 * What an authz/enforce evaluation costs, counted rather than timed: the WebAssembly instructions
 * it executes, over the realistic mix of questions at org scale S (bench:authorize's). A count
 * does not drift with the machine's load or its caches, so two policy builds compare exactly
 * where timings on a shared machine differ by tens of percent from one minute to the next.
 *
 * Each build is rewritten with wabt: every straight-line run of instructions adds its length to
 * a counter of the Rego function it belongs to (the OPA runtime's own functions count to the
 * innermost Rego function that called them, or to "outside the policy": the input's parsing and
 * the result's JSON). With --by-function every wasm function, the runtime's too, counts its own
 * instructions apart. Counts are not time: a lookup in memory the caches no longer hold costs
 * more than its instructions, so bench:authorize stays the measure of item 3.
 *
 *   npm run bench:policy-instructions                                  # policies/build/authz.wasm
 *   npm run bench:policy-instructions -- old.wasm policies/build/authz.wasm --by-rule
 *   npm run bench:policy-instructions -- --by-function                 # the runtime's functions apart
 *   npm run bench:policy-instructions -- --scale 0.1
 *   npm run bench:policy-instructions -- --by-rule --top 60           # more of them (25 by default)
 */
import fs from 'node:fs';
import path from 'node:path';
import wabt from 'wabt';
import { buildOrgDocument } from '../../src/authz/document.ts';
import { PolicyModule } from '../../src/authz/wasm.ts';
import { inProcessServices } from './in-process.ts';
import { fillOrg, questionPool, scaled } from './scale-org.ts';

const ORG = 'org_main';
const POOL_SIZE = 20_000;
const OUTSIDE = '(outside the policy)';
/** An instruction that ends a straight-line run: control flow, or a call (whose callee counts on its own). */
const ENDS_RUN = /^(block|loop|if|else|end|br|br_if|br_table|return|call|call_indirect|unreachable)\b/;

/**
 * The wasm text with a counter (`rule:<name>` exports) per function whose name ownCounter
 * matches, one more for OUTSIDE. A counted function adds its runs to its own counter; any other
 * adds them to `$__current`'s, the innermost counted function running, which each counted one
 * sets on entry and restores on every way out.
 */
function instrumentText(text: string, ownCounter: RegExp): string {
  const lines = text.split('\n');
  const functions = lines.flatMap((line) => /^ {2}\(func (\S+)/.exec(line)?.[1] ?? []);
  const rules = functions.filter((name) => ownCounter.test(name));
  const outside = rules.length;
  // with every function counting apart nothing calls $__count, and wabt takes minutes over its 400 nested blocks
  const someUncounted = rules.length < functions.length;
  const out: string[] = [];
  let inFunction = false;
  let inBody = false;
  let rule = -1;
  let run = 0;
  let runAt = -1;
  const countRun = (n: number) =>
    rule >= 0 ? `    global.get $__c${rule} i64.const ${n} i64.add global.set $__c${rule}` : `    i64.const ${n} global.get $__current call $__count`;
  const closeRun = () => {
    if (runAt >= 0) out[runAt] = countRun(run);
    run = 0;
    runAt = -1;
  };
  const openRun = () => {
    out.push('');
    runAt = out.length - 1;
  };
  const counters = () => {
    const declarations = [...rules, `$${OUTSIDE}`].flatMap((name, i) => [
      `  (global $__c${i} (mut i64) (i64.const 0))`,
      `  (export ${JSON.stringify(`rule:${name.slice(1)}`)} (global $__c${i}))`,
      `  (global $__n${i} (mut i64) (i64.const 0))`,
      `  (export ${JSON.stringify(`calls:${name.slice(1)}`)} (global $__n${i}))`,
    ]);
    const dispatch = [
      '  (func $__count (param i64 i32)',
      ...Array.from({ length: outside + 1 }, () => '    block'),
      `    local.get 1\n    br_table ${Array.from({ length: outside + 1 }, (_, i) => i).join(' ')} ${outside}`,
      ...Array.from({ length: outside + 1 }, (_, i) => `    end\n    global.get $__c${i} local.get 0 i64.add global.set $__c${i} return`),
      '  )',
    ];
    return [`  (global $__current (mut i32) (i32.const ${outside}))`, ...declarations, ...(someUncounted ? dispatch : [])];
  };
  let declared = false;
  for (const line of lines) {
    const header = /^ {2}\(func (\S+)/.exec(line);
    if (header) {
      inFunction = true;
      inBody = false;
      rule = rules.indexOf(header[1]!);
      out.push(line);
      continue;
    }
    if (inFunction && !inBody && /^\s+\(local /.test(line)) {
      out.push(line);
      continue;
    }
    if (inFunction && /^ {2}\(/.test(line)) inFunction = false;
    if (!inFunction) {
      if (!declared && /^ {2}\(export /.test(line)) {
        out.push(...counters());
        declared = true;
      }
      out.push(line);
      continue;
    }
    if (!inBody) {
      inBody = true;
      if (rule >= 0) {
        out.push(
          '    (local $__caller i32)',
          `    global.get $__current local.set $__caller i32.const ${rule} global.set $__current`,
          `    global.get $__n${rule} i64.const 1 i64.add global.set $__n${rule}`,
        );
      }
      openRun();
    }
    const instruction = line.replace(/\(;[^;]*;\)/g, '').trim();
    const lastOfFunction = instruction.endsWith(')');
    const op = instruction.replace(/\)+$/, '').split(/\s+/)[0]!;
    run++;
    if (lastOfFunction || op === 'return') {
      closeRun();
      if (rule >= 0) out.push('    local.get $__caller global.set $__current');
      out.push(line);
      if (lastOfFunction) inFunction = false;
      else openRun();
      continue;
    }
    out.push(line);
    if (ENDS_RUN.test(op)) {
      closeRun();
      openRun();
    }
  }
  return out.join('\n');
}

async function instrumented(file: string, dir: string, ownCounter: RegExp): Promise<PolicyModule> {
  const tools = await wabt();
  const module = tools.readWasm(fs.readFileSync(file), { readDebugNames: true });
  module.applyNames();
  const text = instrumentText(module.toText({ foldExprs: false, inlineExport: false }), ownCounter);
  const { buffer } = tools.parseWat(`${file}.wat`, text).toBinary({});
  const out = path.join(dir, `${path.basename(file)}.${Date.now()}.counted.wasm`);
  fs.writeFileSync(out, buffer);
  return PolicyModule.fromFile(out);
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const thousands = (n: number) => `${(n / 1000).toFixed(1)}k`;

interface Counted {
  file: string;
  perQuestion: number[];
  answers: string[];
  /** per counted function: its instructions, and how many times it was entered, per allowed and per denied question */
  byRule: Map<string, { allowed: number; denied: number; allowedCalls: number; deniedCalls: number }>;
}

function summary(values: number[]): string {
  const sorted = values.slice().sort((a, b) => a - b);
  const mean = sum(values) / values.length;
  return `mean ${thousands(mean)}, p50 ${thousands(percentile(sorted, 50))}, p97 ${thousands(percentile(sorted, 97))}, max ${thousands(sorted[sorted.length - 1]!)}`;
}

async function main(): Promise<void> {
  const factor = Number(arg('scale') ?? '1');
  const byFunction = process.argv.includes('--by-function');
  const byRule = byFunction || process.argv.includes('--by-rule');
  const ownCounter = byFunction ? /./ : /^\$g0\./;
  const top = Number(arg('top') ?? '25');
  const valued = new Set(['--scale', '--top']);
  const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !valued.has(all[i - 1]!));
  if (files.length === 0) files.push('policies/build/authz.wasm');

  const { services, dir } = await inProcessServices('gatehouse-instructions-');
  const org = await fillOrg(services.db, ORG, scaled(factor));
  const document = await buildOrgDocument(services.db, ORG, { legacyAclEnabled: true });
  services.engine.stopChangePoll();
  await services.db.destroy();
  const inputs = questionPool(ORG, org, POOL_SIZE).pool.map((input) => JSON.stringify(input));
  console.log(`scale ${factor}: ${inputs.length} questions of bench:authorize's mix, authz/enforce, wasm instructions per evaluation`);

  const results: Counted[] = [];
  for (const file of files) {
    const instance = await (await instrumented(file, dir, ownCounter)).instantiate();
    instance.setData(document);
    const exports = (instance as unknown as { policy: { wasmInstance: WebAssembly.Instance } }).policy.wasmInstance.exports;
    const counters = Object.entries(exports).filter(([name]) => name.startsWith('rule:')) as Array<[string, WebAssembly.Global]>;
    const calls = counters.map(([name]) => exports[`calls:${name.slice('rule:'.length)}`] as WebAssembly.Global | undefined);
    // setData parsed the document in the same instance: only what the evaluations add counts;
    // per function its instructions, then how many times it was entered
    const read = () => [
      ...counters.map(([, counter]) => Number(counter.value as bigint)),
      ...calls.map((counter) => Number((counter?.value as bigint | undefined) ?? 0n)),
    ];
    const allowedSums = new Float64Array(counters.length * 2);
    const deniedSums = new Float64Array(counters.length * 2);
    const perQuestion: number[] = [];
    const answers: string[] = [];
    let before = read();
    for (const input of inputs) {
      const answer = JSON.stringify(instance.evaluateJson('authz/enforce', input));
      const after = read();
      const sums = answer === 'true' ? allowedSums : deniedSums;
      let total = 0;
      for (let i = 0; i < after.length; i++) {
        sums[i]! += after[i]! - before[i]!;
        if (i < counters.length) total += after[i]! - before[i]!;
      }
      answers.push(answer);
      perQuestion.push(total);
      before = after;
    }
    const allowedCount = Math.max(1, answers.filter((answer) => answer === 'true').length);
    const deniedCount = Math.max(1, answers.length - allowedCount);
    const rules = new Map(
      counters.map(([name], i) => [
        name.slice('rule:'.length),
        {
          allowed: allowedSums[i]! / allowedCount,
          denied: deniedSums[i]! / deniedCount,
          allowedCalls: allowedSums[counters.length + i]! / allowedCount,
          deniedCalls: deniedSums[counters.length + i]! / deniedCount,
        },
      ]),
    );
    results.push({ file, perQuestion, answers, byRule: rules });
  }
  fs.rmSync(dir, { recursive: true, force: true });

  const [first] = results;
  for (const result of results) {
    const allowed = result.perQuestion.filter((_, i) => result.answers[i] === 'true');
    const denied = result.perQuestion.filter((_, i) => result.answers[i] !== 'true');
    console.log(`\n${result.file}`);
    console.log(`  all:     ${summary(result.perQuestion)}`);
    console.log(`  allowed: ${summary(allowed)} (${allowed.length})`);
    console.log(`  denied:  ${summary(denied)} (${denied.length})`);
    if (result !== first) {
      const differ = result.answers.filter((answer, i) => answer !== first!.answers[i]).length;
      console.log(`  / ${first!.file}: ${(sum(result.perQuestion) / sum(first!.perQuestion)).toFixed(2)}x the instructions; ${differ} answers differ`);
    }
    if (byRule) {
      for (const answer of ['allowed', 'denied'] as const) {
        console.log(`  per ${answer} question, the ${byFunction ? 'functions' : 'rules'} that cost most, and how many times each was entered:`);
        const costliest = [...result.byRule].sort((a, b) => b[1][answer] - a[1][answer]).slice(0, top);
        for (const [name, counts] of costliest) {
          const entered = answer === 'allowed' ? counts.allowedCalls : counts.deniedCalls;
          console.log(`    ${thousands(counts[answer]).padStart(7)}  ${entered.toFixed(1).padStart(5)}×  ${name.replace(/^g0\.data\./, '')}`);
        }
      }
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
