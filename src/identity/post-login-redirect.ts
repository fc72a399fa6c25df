/**
 * Where a browser goes after login. Only a path on this site is followed, and it must stay one
 * however many times a browser, a proxy or the next page percent-decodes it: `/%2F%5Cevil.example`
 * decodes to `//\evil.example`, which a browser reads as another host.
 */

/** Beyond this many layers of percent-encoding a target is refused: nobody encodes a path twice by accident. */
const MAX_DECODING_ROUNDS = 3;

/** `//` and `\\` name another host; controls are refused because browsers drop tabs and newlines, turning `/\t/x` into `//x`. */
function hasUnsafeCharacter(path: string): boolean {
  if (path.includes('//') || path.includes('\\')) return true;
  return [...path].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f);
}

function climbsAboveRoot(path: string): boolean {
  let depth = 0;
  for (const segment of path.split(/[?#]/, 1)[0]!.split('/').slice(1)) {
    if (segment === '..') depth -= 1;
    else if (segment !== '.' && segment !== '') depth += 1;
    if (depth < 0) return true;
  }
  return false;
}

function isLocalPath(path: string): boolean {
  return path.startsWith('/') && !hasUnsafeCharacter(path) && !climbsAboveRoot(path);
}

function staysLocal(target: string): boolean {
  let current = target;
  for (let round = 0; round <= MAX_DECODING_ROUNDS; round += 1) {
    if (!isLocalPath(current)) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return false;
    }
    if (decoded === current) return true;
    current = decoded;
  }
  return false;
}

/** `target` if it is a path on this site at every decoding, else "/". */
export function safeRedirect(target: unknown): string {
  return typeof target === 'string' && staysLocal(target) ? target : '/';
}
