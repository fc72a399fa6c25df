/**
 * How a batch of streamed audit entries is written for each kind of sink: VictoriaLogs' JSON
 * lines, Loki's push API, or a signed JSON array for a webhook.
 */
import { createHmac } from 'node:crypto';
import { AUDIT_SIGNATURE_HEADER, type AuditStreamKind } from '../config/sections/audit.ts';
import type { StreamedEntry } from './stream.store.ts';

export interface SinkRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** The label or stream field of an entry's org: `-` for entries of no org, as in the outbox. */
const orgLabel = (entry: StreamedEntry) => entry.orgId ?? '-';

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes under AUDIT_STREAM_SECRET. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** `base` with `suffix` appended to its path (a base URL may carry a path prefix of its own). */
function under(base: string, suffix: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${suffix}`;
  return url;
}

/**
 * VictoriaLogs: one JSON line per entry through /insert/jsonline. Each org and action is a log
 * stream (`_stream_fields=org,action`), the entry's time is its `timestamp`, and `_msg` says
 * what happened in a few words; every other field is searchable as itself (`metadata.*` flattened).
 */
function victoriaLogs(base: string, entries: readonly StreamedEntry[]): SinkRequest {
  const url = under(base, '/insert/jsonline');
  url.searchParams.set('_stream_fields', 'org,action');
  url.searchParams.set('_time_field', 'timestamp');
  url.searchParams.set('_msg_field', 'message');
  const lines = entries.map((entry) =>
    JSON.stringify({ ...entry, org: orgLabel(entry), message: `${entry.action} ${entry.outcome}${entry.actorName ? ` by ${entry.actorName}` : ''}` }),
  );
  return { url, headers: { 'content-type': 'application/stream+json' }, body: lines.join('\n') };
}

/**
 * Loki: one stream per org (labels `service_name="gatehouse"`, `source="audit"`, `org`), each
 * entry a JSON line at its time in nanoseconds, in sequence order.
 */
function loki(base: string, entries: readonly StreamedEntry[]): SinkRequest {
  const streams = new Map<string, Array<[string, string]>>();
  for (const entry of entries) {
    const values = streams.get(orgLabel(entry)) ?? [];
    values.push([`${Date.parse(entry.timestamp)}000000`, JSON.stringify(entry)]);
    streams.set(orgLabel(entry), values);
  }
  const body = {
    streams: [...streams].map(([org, values]) => ({ stream: { service_name: 'gatehouse', source: 'audit', org }, values })),
  };
  return { url: under(base, '/loki/api/v1/push'), headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A webhook: the entries as one JSON array, signed with AUDIT_STREAM_SECRET. */
function webhook(target: string, entries: readonly StreamedEntry[], secret: string): SinkRequest {
  const body = JSON.stringify(entries);
  return { url: new URL(target), headers: { 'content-type': 'application/json', [AUDIT_SIGNATURE_HEADER.toLowerCase()]: signature(secret, body) }, body };
}

export function sinkRequest(kind: AuditStreamKind, target: string, entries: readonly StreamedEntry[], secret: string | null): SinkRequest {
  if (kind === 'victorialogs') return victoriaLogs(target, entries);
  if (kind === 'loki') return loki(target, entries);
  return webhook(target, entries, secret ?? '');
}
