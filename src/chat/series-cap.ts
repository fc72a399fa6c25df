/**
 * An agent reads every series it is given, so an answer of series holds at most
 * DEFAULT_MAX_SERIES unless the call asks for more (`maxSeries`, up to MAX_SERIES), and says when
 * some were left out.
 */
export const DEFAULT_MAX_SERIES = 20;
export const MAX_SERIES = 1000;

export const maxSeriesSchema = { type: 'integer', minimum: 1, maximum: MAX_SERIES } as const;

export function capSeries<T>(series: T[], maxSeries = DEFAULT_MAX_SERIES) {
  return { series: series.slice(0, maxSeries), truncated: series.length > maxSeries, totalSeries: series.length };
}
