/**
 * The committed policy build carries the SHA-256 of the Rego sources it was built from
 * (tools/policy-build.sh writes it). Recomputing it tells whether the build is stale.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface PolicyManifest {
  opaVersion: string;
  sourceHash: string;
  entrypoints: string[];
}

function regoSources(repoRoot: string, dir: string): string[] {
  return fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'build' ? [] : regoSources(repoRoot, relative);
    return entry.name.endsWith('.rego') && !entry.name.endsWith('_test.rego') ? [relative] : [];
  });
}

/** SHA-256 over `<relative path>\n<contents>\n` of every non-test .rego under policies/, in byte order. */
export function regoSourceHash(repoRoot: string): string {
  const hash = createHash('sha256');
  const files = regoSources(repoRoot, 'policies').sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const file of files) {
    hash.update(`${file}\n`);
    hash.update(fs.readFileSync(path.join(repoRoot, file)));
    hash.update('\n');
  }
  return hash.digest('hex');
}

export function readManifest(repoRoot: string): PolicyManifest {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, 'policies/build/manifest.json'), 'utf8')) as PolicyManifest;
}
