/** The pinned `opa` binary for tests: PATH or .tools/bin (tools/opa.sh installs it; CI runs that first). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

export function findOpa(): string | null {
  const local = path.join(REPO_ROOT, '.tools/bin/opa');
  if (fs.existsSync(local)) return local;
  try {
    return execFileSync('bash', ['-c', 'command -v opa'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}
