/**
 * Where the running policy comes from and what it is: the committed build (POLICY_WASM_PATH and
 * the manifest.json beside it), or a signed OPA bundle (POLICY_BUNDLE_PATH) verified with
 * POLICY_VERIFICATION_KEY. Read at boot and again by each policy reload.
 */
import { PolicyLoadError, readVerificationKey, verifyBundle } from './bundle.ts';
import { readPolicyBuildInfo } from './decision-log.ts';
import { PolicyModule } from './wasm.ts';

export interface PolicyProvenance {
  source: 'build' | 'bundle';
  /** The file the policy was read from. */
  file: string;
  /** The bundle's .manifest revision, or the build's source hash; null for a build without a manifest. */
  revision: string | null;
  /** The signing key's fingerprint (`sha256:…`) for a bundle; null for the unsigned build. */
  signer: string | null;
  /** The OPA version of the manifest.json beside the file, when there is one. */
  opaVersion: string | null;
}

export interface PolicySourceSettings {
  policyWasmPath: string;
  policyBundle: { path: string; verificationKey: string } | null;
}

export interface LoadedPolicySource {
  module: PolicyModule;
  provenance: PolicyProvenance;
}

/**
 * The policy the settings name, compiled and, for a bundle, verified. A PolicyLoadError says why it
 * was refused (unreadable, unsigned, another key, a file altered, added or removed, no wasm).
 */
export async function loadPolicySource(settings: PolicySourceSettings): Promise<LoadedPolicySource> {
  const bundle = settings.policyBundle;
  if (!bundle) {
    const build = readPolicyBuildInfo(settings.policyWasmPath);
    const module = await compile(() => PolicyModule.fromFile(settings.policyWasmPath), `POLICY_WASM_PATH ${settings.policyWasmPath}`);
    return {
      module,
      provenance: { source: 'build', file: settings.policyWasmPath, revision: build.sourceHash, signer: null, opaVersion: build.opaVersion },
    };
  }
  const verified = verifyBundle(bundle.path, readVerificationKey(bundle.verificationKey));
  const module = await compile(() => PolicyModule.fromBytes(verified.wasm), `the wasm of POLICY_BUNDLE_PATH ${bundle.path}`);
  return {
    module,
    provenance: {
      source: 'bundle',
      file: bundle.path,
      revision: verified.revision,
      signer: verified.signer,
      opaVersion: readPolicyBuildInfo(bundle.path).opaVersion,
    },
  };
}

async function compile(load: () => Promise<PolicyModule>, what: string): Promise<PolicyModule> {
  try {
    return await load();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new PolicyLoadError(`${what} cannot be read (${code}): run npm run policy:build, or point POLICY_WASM_PATH at a built authz.wasm`);
    if (err instanceof WebAssembly.CompileError) throw new PolicyLoadError(`${what} is not a compiled policy (${err.message})`);
    throw err;
  }
}
