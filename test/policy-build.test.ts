import { expect } from 'chai';
import { readManifest, regoSourceHash } from '../src/authz/manifest.ts';
import { ENTRYPOINTS } from '../src/authz/wasm.ts';
import { REPO_ROOT } from './helpers/opa.ts';

describe('committed policy build', () => {
  it('was built from the current Rego sources (run `npm run policy:build` when this fails)', () => {
    const manifest = readManifest(REPO_ROOT);
    expect(manifest.sourceHash, 'policies/build is stale').to.equal(regoSourceHash(REPO_ROOT));
  });

  it('exports every entry point the engine calls, as the Rego annotates them, and names the pinned OPA version', () => {
    const manifest = readManifest(REPO_ROOT);
    expect(manifest.entrypoints).to.have.members([...ENTRYPOINTS]);
    expect(manifest.opaVersion).to.match(/^v\d+\.\d+\.\d+$/);
  });
});
