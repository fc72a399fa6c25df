/**
 * How long a query's parse may hold the event loop. Wall time alone would refuse a query whose
 * parse the scheduler paused (another process on the core) or a collector pause held up, so the
 * budget is spent in two halves: the first on the wall clock, the second in the time this thread
 * runs, where the system tells it (Linux's per-thread schedstat), however long the wall clock
 * takes to give it; elsewhere the wall clock decides both.
 */
import { readFileSync } from 'node:fs';

/** Milliseconds this thread has run, or null where the system does not tell (read only when a half may be over, about 50 µs). */
function threadRunMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]) / 1e6;
  } catch {
    return null;
  }
}

export class ParseBudget {
  private readonly half: number;
  /** When to look again: the end of the first half, then when the rest of the second could have run. */
  private deadline: number;
  /** The thread's run time when the second half began (null: the system does not tell); undefined during the first. */
  private secondFrom: number | null | undefined = undefined;

  constructor(budgetMs: number) {
    this.half = budgetMs / 2;
    this.deadline = performance.now() + this.half;
  }

  /** Whether the budget is spent: the first half gone by the wall clock, then a half run by this thread. */
  spent(): boolean {
    const now = performance.now();
    if (now <= this.deadline) return false;
    const ran = threadRunMs();
    if (this.secondFrom === undefined) {
      this.secondFrom = ran;
      this.deadline = now + this.half;
      return false;
    }
    if (ran === null || this.secondFrom === null) return true;
    const left = this.half - (ran - this.secondFrom);
    if (left <= 0) return true;
    this.deadline = now + left;
    return false;
  }
}
