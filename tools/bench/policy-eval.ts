/**
 * Micro-benchmark of the compiled policy alone (no database, no engine): the time one
 * `authz/decision` and `authz/enforce` evaluation takes through the wasm for typical questions over a generated org.
 *
 *   npx tsx tools/bench/policy-eval.ts [path/to/authz.wasm]
 */
import { PolicyModule } from '../../src/authz/wasm.ts';
import { generateOrg } from '../../test/helpers/generated-org.ts';

const wasmPath = process.argv[2] ?? 'policies/build/authz.wasm';
const org = generateOrg(1, 10);
const instance = await (await PolicyModule.fromFile(wasmPath)).instantiate();
instance.setData(org.document);

const viewer = Object.entries(org.document.members).find(([, m]) => m.role === 'Viewer')![0];
const subject = { id: viewer, kind: 'user', server_admin: false, disabled: false };
const depth = (uid: string) => org.document.folders[org.document.dashboards[uid]!.folder]?.scopes.length ?? 0;
const deepest = Object.keys(org.document.dashboards).sort((a, b) => depth(b) - depth(a))[0]!;

const cases: Record<string, object> = {
  'dashboard read, deepest folder': { subject, org_id: 'org_gen', action: 'dashboards:read', resource: { kind: 'dashboards', uid: deepest } },
  'dashboard write, deepest folder': { subject, org_id: 'org_gen', action: 'dashboards:write', resource: { kind: 'dashboards', uid: deepest } },
  'folder read': { subject, org_id: 'org_gen', action: 'folders:read', resource: { kind: 'folders', uid: 'f3' } },
  'connector query (not in its list)': { subject, org_id: 'org_gen', action: 'connectors:query', resource: { kind: 'connectors', uid: 'c1' } },
  'team read': { subject, org_id: 'org_gen', action: 'teams:read', resource: { kind: 'teams', id: 't1' } },
  'no resource': { subject, org_id: 'org_gen', action: 'dashboards:read' },
  anonymous: { subject: { id: '', kind: 'anonymous', server_admin: false, disabled: false }, org_id: 'org_gen', action: 'dashboards:read' },
};

/** µs per evaluation of `entrypoint` on `input`, after a warm-up. */
function timed(entrypoint: 'authz/decision' | 'authz/enforce', input: object): number {
  for (let i = 0; i < 20_000; i++) instance.evaluate(entrypoint, input);
  const runs = 100_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) instance.evaluate(entrypoint, input);
  return Number(process.hrtime.bigint() - started) / runs / 1000;
}

// authz/enforce is what authorize() asks (true for an allow, without its reasons; the refusal for
// a deny); authz/decision what explain() and the decision log ask.
const totals = { decision: 0, enforce: 0 };
console.log(`${''.padEnd(34)} ${'decision'.padStart(9)} ${'enforce'.padStart(9)}`);
for (const [label, input] of Object.entries(cases)) {
  const decisionMicros = timed('authz/decision', input);
  const enforceMicros = timed('authz/enforce', input);
  totals.decision += decisionMicros;
  totals.enforce += enforceMicros;
  const decision = instance.evaluate('authz/decision', input) as { allow: boolean; reasons: string[] };
  const enforced = instance.evaluate('authz/enforce', input);
  if (JSON.stringify(enforced) !== JSON.stringify(decision.allow ? true : decision)) throw new Error(`${label}: enforce and decision disagree`);
  console.log(
    `${label.padEnd(34)} ${decisionMicros.toFixed(2).padStart(6)} µs ${enforceMicros.toFixed(2).padStart(6)} µs  allow=${decision.allow} reasons=${decision.reasons.length}`,
  );
}
const cases_ = Object.keys(cases).length;
console.log(
  `${'mean over the cases'.padEnd(34)} ${(totals.decision / cases_).toFixed(2).padStart(6)} µs ${(totals.enforce / cases_).toFixed(2).padStart(6)} µs`,
);
