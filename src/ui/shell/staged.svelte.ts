/**
 * Drawing a large view in steps, one task each, so the page keeps answering (no
 * main-thread task over 50 ms at 500,000 samples). A count that starts at `start` and grows by
 * `step` per task up to `limit()`; a view draws what the count allows (panels up to a stage,
 * rows up to a number). Whenever `reset()`'s dependencies change (a new result, another filter)
 * the count goes back to `start`. Create it while a component initialises (it owns effects).
 */
import { untrack } from 'svelte';

/**
 * Resolves in a later task. Charts that wait for the same lazily loaded module would otherwise
 * all be built in the one task that resolves it (three bar charts: one long task of 50-80 ms on
 * a loaded 2-core machine); a large result received from a worker is drawn in the tasks after
 * the one that received it.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export interface StagedOptions {
  /** The count before the first step (default 0). */
  start?: number;
  /** Added per task (default 1). */
  step?: number;
  /** Read for its dependencies only: a change sets the count back to `start`. */
  reset?: () => unknown;
  /** Wait for a frame between steps, so each step is painted before the next is drawn. */
  afterFrame?: boolean;
}

export class Staged {
  #count = $state(0);

  constructor(limit: () => number, options: StagedOptions = {}) {
    const start = options.start ?? 0;
    const step = options.step ?? 1;
    this.#count = start;
    $effect.pre(() => {
      options.reset?.();
      untrack(() => (this.#count = start));
    });
    $effect(() => {
      if (this.#count >= limit()) return;
      let frame = 0;
      const grow = () => (this.#count += step);
      const t = setTimeout(() => (options.afterFrame ? (frame = requestAnimationFrame(grow)) : grow()), 0);
      return () => {
        clearTimeout(t);
        cancelAnimationFrame(frame);
      };
    });
  }

  /** How far drawing may go now. */
  get count(): number {
    return this.#count;
  }
  /** Every step is drawn. */
  reached(limit: number): boolean {
    return this.#count >= limit;
  }
}
