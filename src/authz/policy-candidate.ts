/**
 * A candidate policy build, as an auditor hands it over: the WebAssembly module itself
 * (policies/build/authz.wasm, or `opa build -t wasm`'s policy.wasm) or the bundle `opa build`
 * writes (a .tar.gz holding /policy.wasm). Anything else is refused with a message that says
 * what it is not, before a byte of it runs.
 */
import { gunzipSync } from 'node:zlib';
import { BadRequestError } from '../errors.ts';
import { ENTRYPOINTS, PolicyModule, type PolicyInstance } from './wasm.ts';

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const GZIP_MAGIC = [0x1f, 0x8b];
const TAR_BLOCK = 512;

/** The largest policy.wasm a bundle may unpack to: far above a real build (about 230 KB), far below what would hurt. */
const MAX_UNPACKED_BYTES = 64 * 1024 * 1024;

/** A candidate's linear memory ceiling (64 KiB pages, 256 MiB): a build that allocates without end traps instead. */
const CANDIDATE_MAX_MEMORY_PAGES = 4096;

const startsWith = (bytes: Uint8Array, magic: number[]) => magic.every((byte, i) => bytes[i] === byte);

const notABuild = (name: string, why: string) => new BadRequestError(`${name} is not a policy build: ${why}`);

/** A NUL-terminated text field of a tar header. */
function field(block: Uint8Array, offset: number, length: number): string {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return Buffer.from(end < 0 ? raw : raw.subarray(0, end)).toString('utf8');
}

/** The member `policy.wasm` of a tar archive (ustar, as `opa build` writes it; `/policy.wasm` or `policy.wasm`). */
function policyWasmOf(tar: Uint8Array, name: string): Uint8Array {
  let offset = 0;
  while (offset + TAR_BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + TAR_BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(field(header, 124, 12).trim() || '0', 8);
    if (!Number.isSafeInteger(size) || size < 0) throw notABuild(name, 'the bundle has a malformed tar header');
    const prefix = field(header, 345, 155);
    const member = (prefix ? `${prefix}/` : '') + field(header, 0, 100);
    const type = String.fromCharCode(header[156] ?? 0);
    const body = offset + TAR_BLOCK;
    if ((type === '0' || type === '\0') && member.replace(/^\/+/, '') === 'policy.wasm') {
      if (body + size > tar.length) throw notABuild(name, 'the bundle is truncated');
      return tar.subarray(body, body + size);
    }
    offset = body + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
  }
  throw notABuild(name, 'the bundle holds no /policy.wasm (build it with opa build -t wasm)');
}

/** The WebAssembly bytes of a candidate: the module itself, or the policy.wasm of a gzipped bundle. */
function candidateWasm(bytes: Uint8Array, name: string): Uint8Array {
  if (startsWith(bytes, WASM_MAGIC)) return bytes;
  if (!startsWith(bytes, GZIP_MAGIC)) throw notABuild(name, 'neither a WebAssembly module nor a gzipped bundle (.tar.gz)');
  let tar: Uint8Array;
  try {
    tar = gunzipSync(bytes, { maxOutputLength: MAX_UNPACKED_BYTES });
  } catch (err) {
    const tooLarge = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
    throw notABuild(name, tooLarge ? `the bundle unpacks to more than ${MAX_UNPACKED_BYTES} bytes` : 'the gzip data is corrupt');
  }
  const wasm = policyWasmOf(tar, name);
  if (!startsWith(wasm, WASM_MAGIC)) throw notABuild(name, "the bundle's policy.wasm is not a WebAssembly module");
  return wasm;
}

/** A candidate build compiled and tried once: it must load as OPA's wasm with every entry point the engine calls. */
export interface CandidateBuild {
  /** An instance to compare with, its memory capped. */
  instantiate(): Promise<PolicyInstance>;
}

/** The candidate compiled, which checks its form without running any of its code. */
export async function compileCandidate(bytes: Uint8Array, name: string): Promise<PolicyModule> {
  const wasm = candidateWasm(bytes, name);
  try {
    return await PolicyModule.fromBytes(wasm);
  } catch (err) {
    throw notABuild(name, `the WebAssembly module does not compile (${(err as Error).message})`);
  }
}

/** The candidate compiled and instantiated once: loading runs its code (OPA's exports), so a build nobody vetted is loaded in a thread that can be stopped. */
export async function loadCandidate(bytes: Uint8Array, name: string): Promise<CandidateBuild> {
  const module = await compileCandidate(bytes, name);
  const instantiate = async () => {
    try {
      return await module.instantiate(CANDIDATE_MAX_MEMORY_PAGES);
    } catch (err) {
      const message = (err as Error).message;
      const lacks = /lacks entrypoints/.test(message);
      throw notABuild(name, lacks ? `${message} (the engine calls ${ENTRYPOINTS.join(', ')})` : `it does not load as an OPA policy (${message})`);
    }
  };
  await instantiate();
  return { instantiate };
}
