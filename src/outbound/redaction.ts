/**
 * What comes back from a backend never carries the credentials the service sent it. A backend
 * may repeat them: vmauth refuses a wrong login with `cannot find the provided auth token "Basic
 * dTY3…"`, a multi-tenant backend names the tenant header it got, a query error quotes a URL.
 * So every form in which a credential of the request can appear in text (as sent, base64 of
 * `user:password`, URL- and form-encoded, escaped in JSON or a Go string, and each of those
 * encoded once more; the password alone too) is replaced by `[redacted]` in every response body,
 * whole or streamed, before any caller sees it.
 */
import type { OutboundAuth } from './auth.ts';

const REDACTED = '[redacted]';
const REDACTED_BYTES = Buffer.from(REDACTED);

/** A shorter value would match ordinary text of the answer (and is no secret worth the name). */
const MIN_SECRET_CHARS = 4;

/** The ways a text can carry `value`: as it is, URL- and form-encoded, escaped in a JSON or Go string. */
function textForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const uri = encodeURIComponent(value);
  return [
    value,
    uri,
    uri.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    new URLSearchParams({ v: value }).toString().slice(2),
    json,
    // Go's encoding/json escapes these for HTML
    json.replace(/[<>&]/g, (char) => `\\u00${char.charCodeAt(0).toString(16)}`),
  ];
}

/** The credentials a request with `auth` sends, as the strings that go on the wire (and the password alone). */
function sentSecrets(auth: OutboundAuth): string[] {
  const secrets: string[] = [];
  if (auth.basic) {
    const encoded = Buffer.from(`${auth.basic.user}:${auth.basic.password}`, 'utf8').toString('base64');
    // a backend may drop the padding, or repeat it in base64url
    secrets.push(auth.basic.password, encoded, encoded.replace(/=+$/, ''), Buffer.from(encoded, 'base64').toString('base64url'));
  }
  if (auth.bearerToken !== undefined) secrets.push(auth.bearerToken);
  for (const header of auth.headers ?? []) secrets.push(header.value);
  return secrets;
}

/** Every byte sequence to redact from the answers to a request with `auth`, longest first. */
export function credentialForms(auth: OutboundAuth): Buffer[] {
  const forms = new Map<string, Buffer>();
  for (const secret of sentSecrets(auth)) {
    if (secret.length < MIN_SECRET_CHARS) continue;
    // twice: a backend quotes a value in its message, then escapes the message in its JSON answer
    for (const form of new Set(textForms(secret).flatMap(textForms))) {
      // a header value goes out as latin1 bytes: a backend may repeat those, or their UTF-8
      for (const bytes of [Buffer.from(form, 'utf8'), Buffer.from(form, 'latin1')]) forms.set(bytes.toString('hex'), bytes);
    }
  }
  return [...forms.values()].sort((a, b) => b.length - a.length);
}

/**
 * Replaces the forms in a stream of chunks. A form may be cut between two chunks, so the last
 * (longest form - 1) bytes of what came are held back until the next chunk or the end decides.
 */
export class Redactor {
  private held: Buffer = Buffer.alloc(0);
  private readonly holdBack: number;

  constructor(private readonly forms: Buffer[]) {
    this.holdBack = Math.max(0, ...forms.map((form) => form.length - 1));
  }

  /** What may be passed on of `chunk` (with what was held back), redacted. */
  push(chunk: Buffer): Buffer {
    return this.scan(this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk, false);
  }

  /** The rest, at the end of the stream. */
  end(): Buffer {
    return this.scan(this.held, true);
  }

  private scan(data: Buffer, final: boolean): Buffer {
    // a form that starts before `decidable` lies wholly in `data`; one that starts later may go on in the next chunk
    const decidable = final ? data.length : data.length - this.holdBack;
    const parts: Buffer[] = [];
    const next = this.forms.map((form) => data.indexOf(form));
    let position = 0;
    for (;;) {
      let found = -1;
      let at = Infinity;
      for (let i = 0; i < this.forms.length; i++) {
        if (next[i]! >= 0 && next[i]! < position) next[i] = data.indexOf(this.forms[i]!, position);
        // the forms are longest first: at the same place the longest one wins
        if (next[i]! >= 0 && next[i]! < at) [found, at] = [i, next[i]!];
      }
      if (found < 0 || at >= decidable) break;
      parts.push(data.subarray(position, at), REDACTED_BYTES);
      position = at + this.forms[found]!.length;
    }
    const passed = Math.max(position, decidable);
    parts.push(data.subarray(position, passed));
    this.held = Buffer.from(data.subarray(passed));
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}
