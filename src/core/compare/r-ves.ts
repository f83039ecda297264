/**
 * R-VES as the current official `evaluation_ves.py` (mini_dev): only for items whose EX is 1,
 * each query pair is timed `iterations` times (official: 100), ratios gold/pred outside
 * mean ± 3·std (population std) are dropped, and the mean ratio maps to a stepped reward.
 * Timings are machine-dependent: the score is not reproducible across machines, and ours
 * times sql.js (WebAssembly) on one connection rather than native SQLite on fresh ones.
 */
/** `clean_abnormal` then mean. Returns null where the official code divides by zero (error -> reward 0). */
export function timeRatio(ratios: readonly number[]): number | null {
  if (ratios.length === 0 || ratios.some((r) => !Number.isFinite(r))) return null;
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const variance = ratios.reduce((a, r) => a + (r - mean) * (r - mean), 0) / ratios.length;
  const std = Math.sqrt(variance);
  const kept = ratios.filter((x) => x < mean + 3 * std && x > mean - 3 * std);
  if (kept.length === 0) return null;
  return kept.reduce((a, b) => a + b, 0) / kept.length;
}

/** `compute_reward`: the stepped reward of a time ratio (0 for incorrect items). */
export function vesReward(ratio: number): number {
  if (ratio === 0) return 0;
  if (ratio >= 2) return 1.25;
  if (ratio >= 1) return 1;
  if (ratio >= 0.5) return 0.75;
  if (ratio >= 0.25) return 0.5;
  return 0.25;
}

/**
 * How far R-VES moves between two runs of the same predictions on one machine. The
 * official reward is a step function of a measured time ratio, and a correct item whose ratio sits
 * near a step (most often at 1.0: the prediction is the gold, or runs the gold's plan) lands on
 * either side of it from one run to the next, in the official script as here. An item timed within
 * NEAR_STEP (2 %) of a step is taken as a fair coin between the step's two rewards; the others as
 * fixed. On 16 CLI runs of gpt-4o's mini-dev file (loaded and quiet, 2026-12-04) this predicted a
 * standard deviation of 0.36 for the total against 0.32 measured, and 0.66 / 0.58 / 0.59 against
 * 0.67 / 0.52 / 0.32 per database (docs/r-ves-timing.md, "How far a rerun moves R-VES").
 */
export const NEAR_STEP = 0.02;

/** The time ratios at which `vesReward` changes. */
const REWARD_STEPS = [0.25, 0.5, 1, 2] as const;

/**
 * For a correct item's time ratio within NEAR_STEP of a reward step: the step and the reward on
 * its other side (what a rerun may give instead); null for any other ratio or none.
 */
export function nearStep(ratio: number | null | undefined): { step: number; otherReward: number } | null {
  if (ratio === null || ratio === undefined || !(ratio > 0) || !Number.isFinite(ratio)) return null;
  const near = Math.log1p(NEAR_STEP);
  for (const step of REWARD_STEPS) {
    if (Math.abs(Math.log(ratio / step)) < near) {
      return { step, otherReward: ratio >= step ? vesReward(step / (1 + NEAR_STEP)) : vesReward(step) };
    }
  }
  return null;
}

/** How much sqrt(reward) (what R-VES averages) changes between the two sides of a step the ratio is near; 0 if none. */
export function stepFlip(ratio: number | null | undefined): number {
  const n = nearStep(ratio);
  return n === null ? 0 : Math.abs(Math.sqrt(vesReward(ratio!)) - Math.sqrt(n.otherReward));
}

/**
 * Timing that does not depend on the clock's resolution (docs/r-ves-timing.md). A page that is
 * not cross-origin isolated sees `performance.now()` in steps of 100 µs (Chromium), so a query
 * of 30 µs times as 0 or 100 µs and its ratio is 0/0 or ∞. Each of the official timings is
 * therefore taken as a block: the query runs again and again until the block spans at least
 * `blockSpanMs(tick)` — MIN_SPAN_MS on every host whose clock steps by 0.1 ms or less, so the
 * CLI (Node), an isolated page and a coarse one time the same way — and the timing is the
 * block's span divided by its runs. A query slower than the span runs once, as officially.
 */
export const MIN_SPAN_MS = 2;
const MIN_SPAN_TICKS = 20;

/** The span of a timing's block on a clock of step `tickMs`: MIN_SPAN_MS, or 20 steps of a coarser clock. */
export function blockSpanMs(tickMs: number): number {
  return Math.max(MIN_SPAN_MS, MIN_SPAN_TICKS * tickMs);
}

/** Most runs of one block: beyond them the clock is taken as stopped and the item is not timed. */
export const MAX_BLOCK_RUNS = 100_000;

/** The smallest step the clock shows (milliseconds), from a few successive changes of it. */
export function clockTick(now: () => number, samples = 5): number {
  let tick = Infinity;
  for (let s = 0; s < samples; s++) {
    const t0 = now();
    let t = t0;
    for (let spins = 0; t === t0 && spins < 10_000_000; spins++) t = now();
    if (t > t0) tick = Math.min(tick, t - t0);
  }
  return tick;
}

/** One timing: milliseconds per run and the runs it took; null when the clock never moved. */
export interface BlockTiming {
  ms: number;
  runs: number;
}

/**
 * How many blocks a timing of a query faster than the span takes: the least of them is the
 * timing. A block of 2 ms is shorter than one time slice of the operating system's scheduler, so
 * when the machine is busy a block now and then holds a preemption (the other process's slice,
 * several ms) and reads 2–5 times too long; the official mean of ratios with its 3-sigma filter
 * keeps most of those, and R-VES rose with the load (gpt-4o's file in the CLI: 73.6 at load 0.7,
 * 82.5 at load 5.9). The least of three blocks is the query's own time unless all three were
 * interrupted (docs/r-ves-timing.md). A query slower than the span runs once per timing, as
 * officially: a preemption is a small part of it.
 */
export const BLOCKS_PER_TIMING = 3;

/**
 * Runs `run` until `minSpanMs` have passed on `now` (at least once) and returns the time per run;
 * when that took more than one run (a query faster than the span), `blocks - 1` more blocks of as
 * many runs follow and the least time per run is the timing. Null when the clock showed no time
 * after `maxRuns` runs.
 */
export function timeBlock(
  run: () => void,
  now: () => number,
  minSpanMs: number,
  maxRuns = MAX_BLOCK_RUNS,
  blocks = BLOCKS_PER_TIMING,
): BlockTiming | null {
  const t0 = now();
  let runs = 0;
  let span: number;
  do {
    run();
    runs++;
    span = now() - t0;
  } while (span < minSpanMs && runs < maxRuns);
  if (span <= 0) return null;
  let ms = span / runs;
  if (runs > 1) {
    for (let b = 1; b < blocks; b++) {
      const start = now();
      for (let r = 0; r < runs; r++) run();
      const took = now() - start;
      if (took > 0) ms = Math.min(ms, took / runs);
    }
  }
  return { ms, runs };
}

/**
 * What the timings of one item gave: the official time ratio and reward, or why the item could
 * not be timed (then it is left out of R-VES and counted apart, never given reward 0).
 */
export type VesOutcome = { ratio: number; reward: number } | { notTimed: string };

export function vesOutcome(ratios: readonly number[]): VesOutcome {
  if (ratios.length === 0) return { notTimed: 'no repetition was timed' };
  const ratio = timeRatio(ratios);
  if (ratio === null) {
    return {
      notTimed: `all ${ratios.length} repetitions gave the same ratio ${ratios[0]}: the official 3-sigma filter keeps none (it divides by zero)`,
    };
  }
  return { ratio, reward: vesReward(ratio) };
}
