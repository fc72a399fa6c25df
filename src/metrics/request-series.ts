/**
 * The HTTP request metrics: a count and a latency histogram per series (method, route template,
 * status), kept in one map keyed by a string and read by the registry at scrape time like any
 * other metric of it. Every request records one observation; prom-client's Counter and Histogram
 * check and hash their labels on each call, which cost a request more than the serialization of
 * its log line. What a scrape shows is what they showed: the same names, labels and buckets.
 */
import type { Metric, MetricValue, Registry } from 'prom-client';

type RequestLabels = { method: string; route: string; status: string };

interface Series {
  labels: RequestLabels;
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative: the last one counts those above every bound. */
  perBucket: number[];
}

interface Described {
  name: string;
  help: string;
}

/** A `_bucket` line as prom-client writes it: `le` first, then the series' labels (its shared labels). */
function bucketLine(name: string, le: number | '+Inf', value: number, labels: RequestLabels): MetricValue<string> {
  return { metricName: `${name}_bucket`, labels: { le }, sharedLabels: labels, value } as unknown as MetricValue<string>;
}

export class RequestSeries {
  private readonly series = new Map<string, Series>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
    count: Described,
    duration: Described,
  ) {
    this.register(registry, count, 'counter', () => this.counts());
    this.register(registry, duration, 'histogram', () => this.histogram(duration.name));
  }

  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, perBucket: new Array<number>(this.bounds.length + 1).fill(0) };
      this.series.set(key, series);
    }
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    series.perBucket[bucket]! += 1;
  }

  private counts(): MetricValue<string>[] {
    return [...this.series.values()].map((series) => ({ labels: series.labels, value: series.count }));
  }

  /** prom-client's histogram exposition: cumulative `_bucket` lines up to `+Inf`, then `_sum` and `_count`. */
  private histogram(name: string): MetricValue<string>[] {
    const values: MetricValue<string>[] = [];
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, bucket) => {
        cumulative += series.perBucket[bucket]!;
        values.push(bucketLine(name, bound, cumulative, series.labels));
      });
      values.push(
        bucketLine(name, '+Inf', series.count, series.labels),
        { metricName: `${name}_sum`, labels: series.labels, value: series.sum } as MetricValue<string>,
        { metricName: `${name}_count`, labels: series.labels, value: series.count } as MetricValue<string>,
      );
    }
    return values;
  }

  /** A metric as the registry reads one: its description, and its values when scraped. */
  private register(registry: Registry, { name, help }: Described, type: 'counter' | 'histogram', values: () => MetricValue<string>[]): void {
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => this.series.clear(),
    };
    registry.registerMetric(metric as unknown as Metric);
  }
}
