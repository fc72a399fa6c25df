/**
 * Metrics recorded on every request: a count and a latency histogram per series (one value for
 * each label name), kept in one map keyed by a string and read by the registry at scrape time
 * like any other metric of it. prom-client's Counter and Histogram check and hash their labels on
 * each call, which cost a request more than the serialization of its log line. What a scrape
 * shows is what they showed: the same names, labels and buckets (a test compares the text).
 */
import type { Metric, MetricValue, Registry } from 'prom-client';

type Labels = Record<string, string>;

interface Entry {
  labels: Labels;
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative: the last one counts those above every bound. */
  perBucket: number[];
}

export interface Described {
  name: string;
  help: string;
}

/** A `_bucket` line as prom-client writes it: `le` first, then the series' labels (its shared labels). */
function bucketLine(name: string, le: number | '+Inf', value: number, labels: Labels): MetricValue<string> {
  return { metricName: `${name}_bucket`, labels: { le }, sharedLabels: labels, value } as unknown as MetricValue<string>;
}

export class Series {
  private readonly entries = new Map<string, Entry>();

  /** Registers `count` (a counter), `duration` (a histogram over `bounds`) or both, read from the same series. */
  constructor(
    registry: Registry,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
    metrics: { count?: Described; duration?: Described },
  ) {
    if (metrics.count) this.register(registry, metrics.count, 'counter', () => this.counts());
    if (metrics.duration) {
      const name = metrics.duration.name;
      this.register(registry, metrics.duration, 'histogram', () => this.histogram(name));
    }
  }

  /** One observation in the series of `labelValues` (in the order of the label names). */
  record(labelValues: readonly string[], seconds = 0): void {
    const key = labelValues.join('\u0000');
    let entry = this.entries.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = labelValues[i]!));
      entry = { labels, count: 0, sum: 0, perBucket: new Array<number>(this.bounds.length + 1).fill(0) };
      this.entries.set(key, entry);
    }
    entry.count += 1;
    entry.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    entry.perBucket[bucket]! += 1;
  }

  private counts(): MetricValue<string>[] {
    return [...this.entries.values()].map((entry) => ({ labels: entry.labels, value: entry.count }));
  }

  /** prom-client's histogram exposition: cumulative `_bucket` lines up to `+Inf`, then `_sum` and `_count`. */
  private histogram(name: string): MetricValue<string>[] {
    const values: MetricValue<string>[] = [];
    for (const entry of this.entries.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, bucket) => {
        cumulative += entry.perBucket[bucket]!;
        values.push(bucketLine(name, bound, cumulative, entry.labels));
      });
      values.push(
        bucketLine(name, '+Inf', entry.count, entry.labels),
        { metricName: `${name}_sum`, labels: entry.labels, value: entry.sum } as MetricValue<string>,
        { metricName: `${name}_count`, labels: entry.labels, value: entry.count } as MetricValue<string>,
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
      reset: () => this.entries.clear(),
    };
    registry.registerMetric(metric as unknown as Metric);
  }
}
