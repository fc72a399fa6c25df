/**
 * src/metrics/series.ts keeps the metrics recorded on every request itself: a scrape must read
 * exactly what prom-client's Counter and Histogram would have shown for the same observations.
 */
import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { Series } from '../src/metrics/series.ts';

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const COUNT = { name: 'requests_total', help: 'requests by method, route and status' };
const DURATION = { name: 'request_duration_seconds', help: 'time to answer' };

describe('metric series', () => {
  it('scrapes as prom-client does: counts, cumulative buckets up to +Inf (bounds included), sums; reset clears them', async () => {
    const expected = new Registry();
    const counter = new Counter({ ...COUNT, labelNames: ['method', 'route', 'status'], registers: [expected] });
    const histogram = new Histogram({ ...DURATION, labelNames: ['method', 'route', 'status'], buckets: BOUNDS, registers: [expected] });
    const actual = new Registry();
    const series = new Series(actual, ['method', 'route', 'status'], BOUNDS, { count: COUNT, duration: DURATION });

    const requests: [string, string, number, number][] = [
      ['GET', '/api/user', 200, 0.0004],
      ['GET', '/api/user', 200, 0.005],
      ['GET', '/api/user', 200, 0.0051],
      ['GET', '/api/user', 200, 10],
      ['POST', '/api/teams', 400, 12],
      ['GET', 'unmatched', 404, 0.3],
    ];
    for (const [method, route, status, seconds] of requests) {
      const labels = { method, route, status: String(status) };
      counter.inc(labels);
      histogram.observe(labels, seconds);
      series.record([method, route, String(status)], seconds);
    }
    expect(await actual.metrics()).to.equal(await expected.metrics());
    expect(await actual.metrics()).to.include('request_duration_seconds_bucket{le="0.005",method="GET",route="/api/user",status="200"} 2');

    actual.resetMetrics();
    expect(await actual.metrics()).not.to.include('route=');
  });

  it('scrapes a counter alone and a histogram without labels as prom-client does', async () => {
    const expected = new Registry();
    const counter = new Counter({ ...COUNT, labelNames: ['outcome'], registers: [expected] });
    const histogram = new Histogram({ ...DURATION, buckets: [0.00001, 0.001, 1], registers: [expected] });
    const actual = new Registry();
    const counts = new Series(actual, ['outcome'], [], { count: COUNT });
    const durations = new Series(actual, [], [0.00001, 0.001, 1], { duration: DURATION });

    for (const [outcome, seconds] of [
      ['allow', 0.000004],
      ['deny', 0.00002],
      ['allow', 2],
    ] as const) {
      counter.inc({ outcome });
      histogram.observe(seconds);
      counts.record([outcome]);
      durations.record([], seconds);
    }
    expect(await actual.metrics()).to.equal(await expected.metrics());
  });
});
