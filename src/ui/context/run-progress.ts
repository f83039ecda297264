/**
 * What a run's progress line may claim. Items whose database is missing are
 * settled at once, and a resumed run starts with its stored samples done: neither is work, so
 * the rate counts executed items only, over the time since the first one started; skipped ones
 * are counted apart. When every item left is already in a worker, the rate says nothing about
 * when they end: no time is promised, and the item that holds the tail is named instead.
 */
export interface ProgressCounts {
  done: number;
  total: number;
  /** Items finished by a worker in this job (not skipped, not stored before). */
  executed: number;
  /** Milliseconds from the first item handed to a worker to the last executed one finishing. */
  executedSpanMs: number;
  /** Items in a worker right now. */
  running: number;
}

export type Estimate =
  | { kind: 'estimating' }
  | { kind: 'eta'; ms: number }
  /** Every item left is running: the run ends when they do. */
  | { kind: 'tail'; left: number };

/** Executed items per second, or null before one finished. */
export function executedRate(c: Pick<ProgressCounts, 'executed' | 'executedSpanMs'>): number | null {
  return c.executed > 0 && c.executedSpanMs > 0 ? c.executed / (c.executedSpanMs / 1000) : null;
}

export function estimate(c: ProgressCounts): Estimate {
  const left = c.total - c.done;
  if (left > 0 && left <= c.running) return { kind: 'tail', left };
  const rate = executedRate(c);
  // A few items are not a rate yet (the first ones include opening the databases).
  if (rate === null || c.executed < 3) return { kind: 'estimating' };
  return { kind: 'eta', ms: (left / rate) * 1000 };
}
