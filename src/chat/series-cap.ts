/**
 * An agent reads every series it is given, so an answer of series holds at most
 * DEFAULT_MAX_SERIES unless the call asks for more (`maxSeries`, up to MAX_SERIES), and says when
 * some were left out. The query cuts them where it reads the answer (connectors/backends/answers.ts).
 */
import { SERIES_RESULT_PROPERTIES } from '../connectors/responses.ts';

export const DEFAULT_MAX_SERIES = 20;
export const MAX_SERIES = 1000;

export const maxSeriesSchema = { type: 'integer', minimum: 1, maximum: MAX_SERIES } as const;

/** What capSeries answers, beside the query's resultType. */
export const CAPPED_SERIES_PROPERTIES = {
  series: SERIES_RESULT_PROPERTIES.series,
  truncated: { type: 'boolean' },
  totalSeries: { type: 'integer' },
} as const;
