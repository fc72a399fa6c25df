/**
 * How long a query's parse may hold the event loop. Wall time alone would refuse a query whose
 * parse the scheduler paused (another process on the core) or a collector pause held up, so the
 * budget is spent in two halves: once the first half has passed on the wall clock, the second is
 * measured in the time this thread ran, where the system tells it (Linux's per-thread schedstat);
 * elsewhere the wall clock decides.
 */
import { readFileSync } from 'node:fs';

/** The share of a half a thread must have run in it for the half to count: the rest is the collector's and the scheduler's. */
const RUN_SHARE = 0.75;

/** Milliseconds this thread has run, or null where the system does not tell (read only when a half ends, about 50 µs). */
function threadRunMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]) / 1e6;
  } catch {
    return null;
  }
}

export class ParseBudget {
  private readonly half: number;
  private deadline: number;
  /** The thread's run time when the second half began; undefined during the first. */
  private ranAtHalf: number | null | undefined = undefined;

  constructor(budgetMs: number) {
    this.half = budgetMs / 2;
    this.deadline = performance.now() + this.half;
  }

  /** Whether the budget is spent: the first half gone by the wall clock, then a half of it run by this thread. */
  spent(): boolean {
    const now = performance.now();
    if (now <= this.deadline) return false;
    const ran = threadRunMs();
    if (this.ranAtHalf !== undefined && (ran === null || this.ranAtHalf === null || ran - this.ranAtHalf >= this.half * RUN_SHARE)) return true;
    this.ranAtHalf = ran;
    this.deadline = now + this.half;
    return false;
  }
}
