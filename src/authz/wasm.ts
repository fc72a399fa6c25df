/**
 * The compiled policy: one WebAssembly.Module compiled once per process, one instance per
 * org holding that org's data document. Evaluation uses the SDK's ABI 1.2 single-call path.
 */
import fs from 'node:fs';
import { loadPolicy, type LoadedPolicy } from '@open-policy-agent/opa-wasm';

/**
 * The entry points this engine calls. The Rego declares them (`entrypoint: true` in a rule's
 * METADATA) and tools/policy-build.sh builds exactly those; a build lacking one is refused.
 */
export const ENTRYPOINTS = [
  'authz/enforce',
  'authz/decision',
  'authz/permissions',
  'authz/filter',
  'authz/active_org',
  'authz/label_rules',
  'authz/visible',
] as const;
export type Entrypoint = (typeof ENTRYPOINTS)[number];

export class PolicyModule {
  private constructor(private readonly module: WebAssembly.Module) {}

  static async fromFile(file: string): Promise<PolicyModule> {
    return PolicyModule.fromBytes(fs.readFileSync(file));
  }

  /** A build given as bytes (a candidate to compare); WebAssembly.compile refuses what is not a module. */
  static async fromBytes(bytes: Uint8Array): Promise<PolicyModule> {
    return new PolicyModule(await WebAssembly.compile(new Uint8Array(bytes)));
  }

  /** `maxMemoryPages`: a ceiling on the instance's linear memory (64 KiB pages), for a build nobody vetted. */
  async instantiate(maxMemoryPages?: number): Promise<PolicyInstance> {
    return new PolicyInstance(await loadPolicy(this.module, maxMemoryPages === undefined ? undefined : { initial: 5, maximum: maxMemoryPages }));
  }
}

/** The SDK's instance internals that a partial data update needs (opa-wasm 1.x, ABI 1.2+). */
interface LoadedPolicyInternals {
  wasmInstance: WebAssembly.Instance;
  mem: WebAssembly.Memory;
  dataAddr: number;
  dataHeapPtr: number;
}

interface OpaExports {
  opa_eval(reserved: number, entrypoint: number, data: number, input: number, inputLength: number, heapPtr: number, format: number): number;
  opa_malloc(size: number): number;
  opa_json_parse(addr: number, len: number): number;
  opa_heap_ptr_get(): number;
  opa_heap_ptr_set(addr: number): void;
  opa_value_add_path(base: number, path: number, value: number): number;
  opa_value_remove_path(base: number, path: number): number;
}

const OPA_EXPORTS = [
  'opa_eval',
  'opa_malloc',
  'opa_json_parse',
  'opa_heap_ptr_get',
  'opa_heap_ptr_set',
  'opa_value_add_path',
  'opa_value_remove_path',
] as const;

/**
 * This module is the only code that reads the SDK's instance beyond its public API (patching data
 * in place and the single-call evaluation need its memory, data address and heap pointer), so the
 * SDK is pinned to an exact version. An instance whose internals differ is refused here, at start,
 * rather than misread at the first decision; test/wasm-contract.test.ts pins the contract.
 */
export function checkInternals(policy: LoadedPolicy): void {
  const internals = policy as unknown as Partial<LoadedPolicyInternals>;
  const problems: string[] = [];
  if (!(internals.wasmInstance instanceof WebAssembly.Instance)) problems.push('wasmInstance is no WebAssembly.Instance');
  if (!(internals.mem instanceof WebAssembly.Memory)) problems.push('mem is no WebAssembly.Memory');
  for (const field of ['dataAddr', 'dataHeapPtr'] as const) if (typeof internals[field] !== 'number') problems.push(`${field} is no number`);
  const exports = (internals.wasmInstance?.exports ?? {}) as Record<string, unknown>;
  for (const name of OPA_EXPORTS) if (typeof exports[name] !== 'function') problems.push(`the module exports no ${name}`);
  if (problems.length > 0) throw new Error(`@open-policy-agent/opa-wasm's loaded policy is not what src/authz/wasm.ts reads: ${problems.join('; ')}`);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const WASM_PAGE = 64 * 1024;

/** The result set of an entry point whose value is true (authz/enforce's allow, the most common answer), NUL-terminated as opa_eval writes it. */
const TRUE_RESULT = encoder.encode('[{"result":true}]\0');

/** Whether the result at `address` is TRUE_RESULT: compared byte by byte, it needs no decoding and no JSON.parse. */
function isTrueResult(memory: Uint8Array, address: number): boolean {
  for (let i = 0; i < TRUE_RESULT.length; i++) if (memory[address + i] !== TRUE_RESULT[i]) return false;
  return true;
}

export class PolicyInstance {
  private readonly entrypointIds: Record<Entrypoint, number>;
  /** Bytes that patches left behind in the data area since the last setData. */
  private patchedBytes = 0;

  constructor(private readonly policy: LoadedPolicy) {
    const ids = policy.entrypoints as Record<string, number>;
    const missing = ENTRYPOINTS.filter((name) => typeof ids[name] !== 'number');
    if (missing.length > 0) throw new Error(`policy build lacks entrypoints: ${missing.join(', ')}`);
    this.entrypointIds = Object.fromEntries(ENTRYPOINTS.map((name) => [name, ids[name]])) as Record<Entrypoint, number>;
    if ((policy as unknown as { minorVersion: number }).minorVersion < 2) throw new Error('the policy build needs OPA wasm ABI 1.2 or later (opa_eval)');
    checkInternals(policy);
  }

  /** Replaces the whole data document. Synchronous, so no evaluation can see half of it. */
  setData(document: object | ArrayBuffer): void {
    this.policy.setData(document);
    this.patchedBytes = 0;
  }

  /**
   * Sets (or, with `undefined`, removes) one value inside the loaded data document, in place:
   * the cost is that of the value, not of the document. The replaced value stays behind in
   * the data area until the next setData(), which `patchedBytes` lets the engine schedule.
   */
  patch(path: string[], value: unknown): void {
    const internals = this.policy as unknown as LoadedPolicyInternals;
    const exports = internals.wasmInstance.exports as unknown as OpaExports;
    exports.opa_heap_ptr_set(internals.dataHeapPtr);
    const pathAddr = this.loadJson(internals, exports, path);
    const status =
      value === undefined
        ? exports.opa_value_remove_path(internals.dataAddr, pathAddr)
        : exports.opa_value_add_path(internals.dataAddr, pathAddr, this.loadJson(internals, exports, value));
    const heapPtr = exports.opa_heap_ptr_get();
    this.patchedBytes += heapPtr - internals.dataHeapPtr;
    internals.dataHeapPtr = heapPtr;
    // remove_path reports a missing path as an error; for us that is "already absent".
    if (status !== 0 && value !== undefined) throw new Error(`opa_value_add_path failed with ${status} at ${path.join('.')}`);
  }

  get bytesLeftByPatches(): number {
    return this.patchedBytes;
  }

  private loadJson(internals: LoadedPolicyInternals, exports: OpaExports, value: unknown): number {
    const bytes = encoder.encode(JSON.stringify(value));
    const raw = exports.opa_malloc(bytes.length);
    new Uint8Array(internals.mem.buffer).set(bytes, raw);
    const parsed = exports.opa_json_parse(raw, bytes.length);
    if (parsed === 0) throw new Error('opa_json_parse failed');
    return parsed;
  }

  /** Evaluates one entrypoint; returns its value, or undefined when the policy produced none. */
  evaluate(entrypoint: Entrypoint, input: unknown): unknown {
    return this.evaluateJson(entrypoint, JSON.stringify(input));
  }

  /**
   * The SDK's ABI 1.2 single call (opa_eval), without its per-call allocations: the input is
   * encoded straight into wasm memory above the data, and the result's end is found natively.
   */
  evaluateJson(entrypoint: Entrypoint, inputJson: string): unknown {
    const internals = this.policy as unknown as LoadedPolicyInternals;
    const exports = internals.wasmInstance.exports as unknown as OpaExports;
    const inputAddr = internals.dataHeapPtr;
    // UTF-8 takes at most 3 bytes per UTF-16 unit
    const needed = inputAddr + inputJson.length * 3 - internals.mem.buffer.byteLength;
    if (needed > 0) internals.mem.grow(Math.ceil(needed / WASM_PAGE));
    const { written } = encoder.encodeInto(inputJson, new Uint8Array(internals.mem.buffer, inputAddr));
    const resultAddr = exports.opa_eval(0, this.entrypointIds[entrypoint], internals.dataAddr, inputAddr, written, inputAddr + written, 0);
    const memory = new Uint8Array(internals.mem.buffer);
    if (isTrueResult(memory, resultAddr)) return true;
    const resultSet = JSON.parse(decoder.decode(memory.subarray(resultAddr, memory.indexOf(0, resultAddr)))) as Array<{ result: unknown }>;
    return resultSet[0]?.result;
  }

  /** Bytes of wasm linear memory this instance holds. */
  get memoryBytes(): number {
    return this.policy.mem.buffer.byteLength;
  }
}
