/**
 * The compiled policy: one WebAssembly.Module compiled once per process, one instance per
 * org holding that org's data document. Evaluation uses the SDK's ABI 1.2 single-call path.
 */
import fs from 'node:fs';
import { loadPolicy, type LoadedPolicy } from '@open-policy-agent/opa-wasm';

export const ENTRYPOINTS = ['authz/decision', 'authz/permissions', 'authz/filter'] as const;
export type Entrypoint = (typeof ENTRYPOINTS)[number];

export class PolicyModule {
  private constructor(private readonly module: WebAssembly.Module) {}

  static async fromFile(file: string): Promise<PolicyModule> {
    return new PolicyModule(await WebAssembly.compile(fs.readFileSync(file)));
  }

  async instantiate(): Promise<PolicyInstance> {
    return new PolicyInstance(await loadPolicy(this.module));
  }
}

export class PolicyInstance {
  private readonly entrypointIds: Record<Entrypoint, number>;

  constructor(private readonly policy: LoadedPolicy) {
    const ids = policy.entrypoints as Record<string, number>;
    const missing = ENTRYPOINTS.filter((name) => typeof ids[name] !== 'number');
    if (missing.length > 0) throw new Error(`policy build lacks entrypoints: ${missing.join(', ')}`);
    this.entrypointIds = Object.fromEntries(ENTRYPOINTS.map((name) => [name, ids[name]])) as Record<Entrypoint, number>;
  }

  /** Replaces the whole data document. Synchronous, so no evaluation can see half of it. */
  setData(document: object | ArrayBuffer): void {
    this.policy.setData(document);
  }

  /** Evaluates one entrypoint; returns its value, or undefined when the policy produced none. */
  evaluate(entrypoint: Entrypoint, input: unknown): unknown {
    const resultSet = this.policy.evaluate(input, this.entrypointIds[entrypoint]) as Array<{ result: unknown }>;
    return resultSet[0]?.result;
  }

  /** Bytes of wasm linear memory this instance holds. */
  get memoryBytes(): number {
    return this.policy.mem.buffer.byteLength;
  }
}
