/**
 * Signed OPA bundles (POLICY_BUNDLE_PATH, POLICY_VERIFICATION_KEY): the tar.gz `opa build
 * --bundle --signing-key` writes, checked as OPA checks it before its wasm is compiled. The
 * one JWT of `.signatures.json` must verify with the key; its `files` claim must list every
 * file of the bundle but `.signatures.json`, and nothing else, each with the SHA-256 of its
 * content (of a JSON file's canonical encoding: keys sorted, no spaces, as OPA hashes it).
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';

/** Why a policy was refused; its message names the cause (the boot's exit-2 line, the reload's answer). */
export class PolicyLoadError extends Error {}

export interface VerifiedBundle {
  /** The wasm module the manifest names. */
  wasm: Buffer;
  /** The manifest's revision (tools/policy-build.sh writes the Rego source hash). */
  revision: string;
  /** The key that signed it: `sha256:` and the first 16 hex digits of the SHA-256 of its DER SubjectPublicKeyInfo. */
  signer: string;
}

/** The JWS algorithms accepted, with the digest and signature encoding node:crypto verifies them with. */
const ALGORITHMS: Record<string, { digest: string; dsaEncoding?: 'ieee-p1363'; keyType: string }> = {
  RS256: { digest: 'sha256', keyType: 'rsa' },
  RS384: { digest: 'sha384', keyType: 'rsa' },
  RS512: { digest: 'sha512', keyType: 'rsa' },
  ES256: { digest: 'sha256', dsaEncoding: 'ieee-p1363', keyType: 'ec' },
  ES384: { digest: 'sha384', dsaEncoding: 'ieee-p1363', keyType: 'ec' },
  ES512: { digest: 'sha512', dsaEncoding: 'ieee-p1363', keyType: 'ec' },
};

/** Bundles larger than this (compressed or not) are refused: the committed one is about 90 KiB. */
const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;

/** The public key of POLICY_VERIFICATION_KEY, read from its PEM file. */
export function readVerificationKey(file: string): KeyObject {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new PolicyLoadError(`POLICY_VERIFICATION_KEY ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return createPublicKey(pem);
  } catch {
    throw new PolicyLoadError(`POLICY_VERIFICATION_KEY ${file} holds no PEM public key`);
  }
}

/** The regular files of a tar archive by name, a leading `/` dropped (OPA writes `/policy.wasm`). */
export function untar(archive: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const prefix = field(0x159, 155);
    const name = (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100)).replace(/^(\.?\/)+/, '');
    if (!Number.isSafeInteger(size) || size < 0 || offset + 512 + size > archive.length) throw new PolicyLoadError('the bundle is not a well-formed tar.gz');
    if (type === '0') {
      if (files.has(name)) throw new PolicyLoadError(`the bundle holds ${name} twice`);
      files.set(name, archive.subarray(offset + 512, offset + 512 + size));
    } else if (type !== '5') {
      throw new PolicyLoadError(`the bundle holds ${name}, which is no regular file (tar type ${type})`);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** JSON as OPA hashes it: object keys sorted, no whitespace. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function fileDigest(name: string, content: Buffer): string {
  const hash = createHash('sha256');
  if (name.endsWith('.json') || name === '.manifest' || name.endsWith('/.manifest')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(content.toString('utf8'));
    } catch {
      throw new PolicyLoadError(`${name} in the bundle is not JSON`);
    }
    hash.update(canonicalJson(parsed));
  } else {
    hash.update(content);
  }
  return hash.digest('hex');
}

function decodeSegment(segment: string, what: string): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new PolicyLoadError(`the bundle's signature has no readable JWT ${what}`);
}

/** Checks the JWT of `.signatures.json` with `key`; returns its `files` claim as name -> SHA-256. */
function verifySignature(signatures: Buffer | undefined, key: KeyObject): Map<string, string> {
  if (!signatures) throw new PolicyLoadError('the bundle is not signed: it has no .signatures.json');
  let parsed: { signatures?: unknown };
  try {
    parsed = JSON.parse(signatures.toString('utf8')) as { signatures?: unknown };
  } catch {
    throw new PolicyLoadError('the bundle is not signed: .signatures.json is not JSON');
  }
  const list = parsed.signatures;
  if (!Array.isArray(list) || list.length === 0) throw new PolicyLoadError('the bundle is not signed: .signatures.json lists no signature');
  if (list.length > 1) throw new PolicyLoadError('.signatures.json lists more than one signature');
  const token = list[0];
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (parts.length !== 3 || !parts[2]) throw new PolicyLoadError('the bundle is not signed: its signature is no JWS compact token');
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = decodeSegment(encodedHeader, 'header');
  const algorithm = typeof header.alg === 'string' ? ALGORITHMS[header.alg] : undefined;
  if (!algorithm) throw new PolicyLoadError(`the bundle is signed with ${String(header.alg)}, which is not accepted (${Object.keys(ALGORITHMS).join(', ')})`);
  if (key.asymmetricKeyType !== algorithm.keyType) {
    throw new PolicyLoadError(`the bundle is signed with ${String(header.alg)}, and POLICY_VERIFICATION_KEY is a ${key.asymmetricKeyType} key`);
  }
  const valid = verify(
    algorithm.digest,
    Buffer.from(`${encodedHeader}.${encodedPayload}`),
    { key, ...(algorithm.dsaEncoding && { dsaEncoding: algorithm.dsaEncoding }) },
    Buffer.from(encodedSignature, 'base64url'),
  );
  if (!valid)
    throw new PolicyLoadError('the bundle signature does not verify with POLICY_VERIFICATION_KEY (another key signed it, or the signature was altered)');
  const payload = decodeSegment(encodedPayload, 'payload');
  if (!Array.isArray(payload.files)) throw new PolicyLoadError("the bundle signature's payload lists no files");
  const hashes = new Map<string, string>();
  for (const entry of payload.files as Array<Record<string, unknown>>) {
    if (typeof entry?.name !== 'string' || typeof entry.hash !== 'string')
      throw new PolicyLoadError("the bundle signature's files list an entry without name or hash");
    if (entry.algorithm !== 'SHA-256')
      throw new PolicyLoadError(`the bundle signature hashes ${entry.name} with ${String(entry.algorithm)}; only SHA-256 is accepted`);
    hashes.set(entry.name.replace(/^\/+/, ''), entry.hash.toLowerCase());
  }
  return hashes;
}

/**
 * The verified wasm, revision and signer of the bundle at `file`, or a PolicyLoadError naming what
 * is wrong: unreadable, not signed, signed by another key, a file altered, added or removed, or a
 * manifest that names no wasm module.
 */
export function verifyBundle(file: string, key: KeyObject): VerifiedBundle {
  let compressed: Buffer;
  try {
    compressed = fs.readFileSync(file);
  } catch (err) {
    throw new PolicyLoadError(`POLICY_BUNDLE_PATH ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let archive: Buffer;
  try {
    archive = gunzipSync(compressed, { maxOutputLength: MAX_BUNDLE_BYTES });
  } catch {
    throw new PolicyLoadError(`POLICY_BUNDLE_PATH ${file} is not a gzip-compressed bundle`);
  }
  const files = untar(archive);
  const hashes = verifySignature(files.get('.signatures.json'), key);
  for (const [name, content] of files) {
    if (name === '.signatures.json') continue;
    const signed = hashes.get(name);
    if (signed === undefined) throw new PolicyLoadError(`the bundle holds ${name}, which its signature does not list`);
    if (fileDigest(name, content) !== signed) throw new PolicyLoadError(`${name} in the bundle does not match its signed hash (the file was altered)`);
  }
  for (const name of hashes.keys()) if (!files.has(name)) throw new PolicyLoadError(`the bundle lacks ${name}, which its signature lists`);

  const manifest = JSON.parse(files.get('.manifest')?.toString('utf8') ?? 'null') as { revision?: unknown; wasm?: Array<{ module?: unknown }> } | null;
  if (!manifest) throw new PolicyLoadError('the bundle has no .manifest');
  const modules = new Set((manifest.wasm ?? []).map((entry) => String(entry.module).replace(/^\/+/, '')));
  if (modules.size !== 1) throw new PolicyLoadError(`the bundle's .manifest names ${modules.size} wasm modules; one is expected`);
  const wasm = files.get([...modules][0]!);
  if (!wasm) throw new PolicyLoadError(`the bundle lacks the wasm module its .manifest names`);
  const der = key.export({ type: 'spki', format: 'der' });
  return {
    wasm,
    revision: typeof manifest.revision === 'string' ? manifest.revision : '',
    signer: `sha256:${createHash('sha256').update(der).digest('hex').slice(0, 16)}`,
  };
}
