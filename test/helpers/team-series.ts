/**
 * Series of two teams on one metrics backend, for the label-rule tests: checkout's values are
 * small, payments' are above a million, so a foreign value shows in any answer, summed or not.
 */
import type { SeriesSample } from './prometheus.ts';

export const CHECKOUT_SERIES: readonly SeriesSample[] = [
  { metric: 'app_requests', labels: { namespace: 'checkout', pod: 'checkout-1', env: 'prod' }, base: 10 },
  { metric: 'app_requests', labels: { namespace: 'checkout', pod: 'checkout-2', env: 'staging' }, base: 20 },
  { metric: 'checkout_cart_size', labels: { namespace: 'checkout', pod: 'checkout-1', env: 'prod' }, base: 3 },
];

export const PAYMENTS_SERIES: readonly SeriesSample[] = [
  { metric: 'app_requests', labels: { namespace: 'payments', pod: 'payments-1', env: 'prod' }, base: 1_000_100 },
  { metric: 'app_requests', labels: { namespace: 'payments', pod: 'payments-2', env: 'prod' }, base: 1_000_200 },
  { metric: 'app_requests', labels: { namespace: 'payments', pod: 'payments-3', env: 'staging' }, base: 1_000_300 },
  { metric: 'payments_secret', labels: { namespace: 'payments', pod: 'payments-1', env: 'prod' }, base: 5_000_000 },
];

export const TEAM_SERIES: readonly SeriesSample[] = [...CHECKOUT_SERIES, ...PAYMENTS_SERIES];

/** A name only payments' series hold: its pods and its own metric. */
export const FOREIGN_NAMES = /payments-\d|payments_secret/;

/**
 * What of payments an answer holds: its names anywhere, or in a query result (`{series: [{values}]}`)
 * a value of a million or more, which only its series reach (alone, summed or averaged).
 */
export function foreignIn(body: unknown): string[] {
  const found: string[] = [];
  const text = JSON.stringify(body);
  const name = FOREIGN_NAMES.exec(text);
  if (name) found.push(`name ${name[0]}`);
  const series = (body as { series?: Array<{ values?: Array<[number, unknown]> }> } | undefined)?.series ?? [];
  for (const { values = [] } of series)
    for (const [, value] of values) if (typeof value === 'number' && Math.abs(value) >= 1_000_000) found.push(`value ${value}`);
  return found;
}
