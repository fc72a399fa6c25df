/**
 * The response schemas of what connectors answer beyond their own fields (presenter.ts):
 * connectivity tests, query results (which the chat tools answer too) and change entries.
 */
import { CHANGE_KINDS } from './changes.ts';
import { listPageSchema } from '../http/responses.ts';

/**
 * A connectivity test: label names when it worked; when it did not, the backend's status and its
 * own error, or the content type of what answered when that was not the API.
 */
export const connectivitySchema = (status: 'OK' | 'ERROR') =>
  ({
    type: 'object',
    properties: {
      status: { const: status },
      message: { type: 'string' },
      details: {
        type: 'object',
        properties: {
          labels: { type: 'array', items: { type: 'string' } },
          status: { type: 'integer' },
          error: { type: 'string' },
          contentType: { type: 'string' },
          // a kubernetes connector: the cluster's version, and what its identity may not list
          version: { type: 'string' },
          denied: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    required: ['status', 'message', 'details'],
  }) as const;

const labelMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** Prometheus' results (and Loki's metric queries, VictoriaLogs' stats queries) as series of `[unix seconds, value]`, NaN and ±Inf as null. */
export const SERIES_RESULT_PROPERTIES = {
  resultType: { type: 'string' },
  series: {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        labels: labelMap,
        values: { type: 'array', items: { type: 'array', items: { type: ['number', 'null'] }, minItems: 2, maxItems: 2 } },
      },
      required: ['labels', 'values'],
    },
  },
} as const;

/** Log lines (Loki's, VictoriaLogs'): streams of `[timestamp in nanoseconds, line]`, both strings. */
export const STREAMS_RESULT_PROPERTIES = {
  resultType: { const: 'streams' },
  streams: {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        labels: labelMap,
        entries: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } },
      },
      required: ['labels', 'entries'],
    },
  },
} as const;

export const QUERY_RESULT_SCHEMA = {
  anyOf: [
    { type: 'object', properties: SERIES_RESULT_PROPERTIES, required: ['resultType', 'series'] },
    { type: 'object', properties: STREAMS_RESULT_PROPERTIES, required: ['resultType', 'streams'] },
  ],
} as const;

const nullableText = { type: ['string', 'null'] } as const;

/** What presentChange sends: times in ms since the epoch. */
export const CHANGE_ENTRY_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    connectorUid: { type: 'string' },
    time: { type: 'integer' },
    kind: { enum: [...CHANGE_KINDS] },
    title: { type: 'string' },
    service: nullableText,
    environment: nullableText,
    labels: labelMap,
    url: nullableText,
    createdBy: nullableText,
    created: { type: 'integer' },
  },
  required: ['id', 'connectorUid', 'time', 'kind', 'title', 'service', 'environment', 'labels', 'url', 'createdBy', 'created'],
} as const;

/** One page of a changes connector's entries (`GET …/changes`). */
export const CHANGE_PAGE_SCHEMA = listPageSchema('changes', CHANGE_ENTRY_SCHEMA);
