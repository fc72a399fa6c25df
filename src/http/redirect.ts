/**
 * Where to send a browser after login: only a path of this service. A target is refused (and
 * `/` used) unless it stays a local path however many times it is percent-decoded: one leading
 * `/` and never `//`, no backslash (browsers read `/\host` as `//host`), no control
 * character, and no `..` segment (`/..%2f..%2fevil.example` climbs out of the path).
 */
const MAX_DECODING_ROUNDS = 4;
const isUnsafeCharacter = (char: string) => char === '\\' || char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f;

function isLocalPath(path: string): boolean {
  if (!path.startsWith('/') || path.startsWith('//') || [...path].some(isUnsafeCharacter)) return false;
  const [pathname = ''] = path.split(/[?#]/, 1);
  return !pathname.split('/').some((segment) => segment === '..' || segment === '.');
}

export function safeRedirect(target: unknown): string {
  if (typeof target !== 'string' || target.length > 2048) return '/';
  let current = target;
  for (let round = 0; round <= MAX_DECODING_ROUNDS; round++) {
    if (!isLocalPath(current)) return '/';
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return '/';
    }
    if (decoded === current) return target;
    current = decoded;
  }
  // Still encoded after that many rounds: no page of ours needs it.
  return '/';
}
