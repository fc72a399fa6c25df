import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { loadPolicy, type LoadedPolicy } from '@open-policy-agent/opa-wasm';
import { ENTRYPOINTS, PolicyInstance, PolicyModule } from '../src/authz/wasm.ts';
import { generateOrg } from './helpers/generated-org.ts';

/**
 * src/authz/wasm.ts reads the SDK's loaded policy beyond its public API (in-place data patches,
 * the single-call evaluation). These tests pin that contract: its answers equal the SDK's own
 * public evaluate(), a patched document answers as the same document set whole, the SDK is pinned
 * to an exact version, and a loaded policy whose internals differ is refused at instantiation.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const WASM = path.join(ROOT, 'policies/build/authz.wasm');

describe('the opa-wasm contract of src/authz/wasm.ts', () => {
  const org = generateOrg(7, 120);

  async function sdkPolicy(document: object): Promise<LoadedPolicy> {
    const policy = await loadPolicy(fs.readFileSync(WASM));
    policy.setData(document);
    return policy;
  }

  /** The SDK's public evaluation of one entry point: its result set's first value. */
  function sdkAnswer(policy: LoadedPolicy, entrypoint: string, input: unknown): unknown {
    const resultSet = policy.evaluate(input, entrypoint) as Array<{ result: unknown }>;
    return resultSet[0]?.result;
  }

  it("answers every entry point as the SDK's public evaluate() does", async () => {
    const instance = await (await PolicyModule.fromFile(WASM)).instantiate();
    instance.setData(org.document);
    const sdk = await sdkPolicy(org.document);
    let allowed = 0;
    for (const input of org.inputs) {
      const decision = instance.evaluate('authz/decision', input) as { allow: boolean };
      expect(decision, JSON.stringify(input)).to.deep.equal(sdkAnswer(sdk, 'authz/decision', input));
      expect(instance.evaluate('authz/enforce', input), JSON.stringify(input)).to.deep.equal(sdkAnswer(sdk, 'authz/enforce', input));
      if (decision.allow) allowed++;
    }
    expect(allowed, 'the generated cases mix allows and denies').to.be.within(org.inputs.length * 0.1, org.inputs.length * 0.9);
    for (const subject of org.subjects) {
      const input = { subject, org_id: 'org_gen' };
      expect(instance.evaluate('authz/permissions', input)).to.deep.equal(sdkAnswer(sdk, 'authz/permissions', input));
    }
    for (const input of org.filters) expect(instance.evaluate('authz/filter', input)).to.deep.equal(sdkAnswer(sdk, 'authz/filter', input));
  });

  it('a document patched in place answers as the same document set whole through the SDK', async () => {
    const instance = await (await PolicyModule.fromFile(WASM)).instantiate();
    instance.setData(org.document);
    const changed = JSON.parse(JSON.stringify(org.document)) as Record<string, Record<string, unknown>>;
    const [firstMember, secondMember] = Object.keys(changed.members!);
    const [firstRole] = Object.keys(changed.roles!);
    // an org role raised, a member gone, a role emptied: set, removed and replaced values
    const raised = { ...(changed.members![firstMember!] as object), role: 'Admin' };
    changed.members![firstMember!] = raised;
    delete changed.members![secondMember!];
    changed.roles![firstRole!] = {};
    instance.patch(['members', firstMember!], raised);
    instance.patch(['members', secondMember!], undefined);
    instance.patch(['roles', firstRole!], {});
    expect(instance.bytesLeftByPatches).to.be.greaterThan(0);
    const sdk = await sdkPolicy(changed);
    const before = await sdkPolicy(org.document);
    let moved = 0;
    for (const input of org.inputs) {
      const answer = sdkAnswer(sdk, 'authz/decision', input);
      expect(instance.evaluate('authz/decision', input), JSON.stringify(input)).to.deep.equal(answer);
      if (JSON.stringify(answer) !== JSON.stringify(sdkAnswer(before, 'authz/decision', input))) moved++;
    }
    expect(moved, 'the patches change some answers').to.be.greaterThan(0);
  });

  it('pins the SDK to an exact version', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies['@open-policy-agent/opa-wasm']).to.match(/^\d+\.\d+\.\d+$/);
  });

  it('refuses a loaded policy whose internals differ, naming what differs', async () => {
    const policy = await loadPolicy(fs.readFileSync(WASM));
    const renamed = Object.assign(Object.create(Object.getPrototypeOf(policy) as object), policy, { dataHeapPtr: undefined, heapPointer: 0 }) as LoadedPolicy;
    expect(() => new PolicyInstance(renamed)).to.throw(
      "@open-policy-agent/opa-wasm's loaded policy is not what src/authz/wasm.ts reads: dataHeapPtr is no number",
    );
    expect(ENTRYPOINTS.every((name) => typeof (policy.entrypoints as Record<string, number>)[name] === 'number')).to.equal(true);
  });
});
