import { describe, expect, it } from 'vitest';
import {
  MIN_SPAN_MS,
  blockSpanMs,
  clockTick,
  timeBlock,
  BLOCKS_PER_TIMING,
  MAX_BLOCK_RUNS,
  timeRatio,
  vesOutcome,
  vesReward,
  stepFlip,
  NEAR_STEP,
} from '../../../src/core/compare/r-ves.ts';

describe('official R-VES pieces', () => {
  it.each([
    [0, 0],
    [0.1, 0.25],
    [0.25, 0.5],
    [0.49, 0.5],
    [0.5, 0.75],
    [0.99, 0.75],
    [1, 1],
    [1.99, 1],
    [2, 1.25],
    [10, 1.25],
  ])('a time ratio of %f gives the reward %f', (ratio, reward) => {
    expect(vesReward(ratio)).toBe(reward);
  });
  it('drops ratios outside mean ± 3 std before averaging', () => {
    // mean 5.71, population std 21.1: 100 lies above mean + 3 std (69.0) and is dropped
    expect(timeRatio([...Array(20).fill(1), 100])).toBe(1);
    // with few samples nothing is far enough out: [1, 1, 4] has mean 2, std 1.41 -> all kept
    expect(timeRatio([1, 1, 4])).toBe(2);
    const many = [...Array(200).fill(1), 1.1, 0.9, 1000];
    expect(timeRatio(many)).toBeCloseTo((200 + 1.1 + 0.9) / 202, 12);
  });
  it('fails like the official code (division by zero) when every ratio is identical', () => {
    expect(timeRatio([1, 1, 1])).toBeNull();
  });
  it('fails on an infinite ratio from a zero timing', () => {
    expect(timeRatio([1, Infinity])).toBeNull();
  });
});

describe("timing blocks that do not depend on the clock's resolution", () => {
  /** A simulated clock: each run of the query takes `runMs`; readings are floored to `stepMs` (Chromium's 100 µs when not isolated). */
  const simulated = (runMs: number, stepMs: number) => {
    let t = 1000.0123;
    return { run: () => void (t += runMs), now: () => Math.floor(t / stepMs) * stepMs };
  };

  it('the same span on every host whose clock steps by 0.1 ms or less; 20 steps of a coarser one', () => {
    expect(blockSpanMs(0.0003)).toBe(MIN_SPAN_MS);
    expect(blockSpanMs(0.005)).toBe(MIN_SPAN_MS);
    expect(blockSpanMs(0.1)).toBe(MIN_SPAN_MS);
    expect(blockSpanMs(1)).toBe(20);
  });
  it('a 30 µs query on a 100 µs clock: one run reads 0 (the old 0/0), a block reads 30 µs to within one step in twenty', () => {
    const c = simulated(0.03, 0.1);
    const single = timeBlock(c.run, c.now, 0);
    // One run: the span is 0 or one step, never 30 µs.
    expect(single === null || single.ms === 0.1 || Math.abs(single.ms - 0.1) < 1e-9).toBe(true);
    const block = timeBlock(c.run, c.now, blockSpanMs(0.1))!;
    expect(block.runs).toBeGreaterThanOrEqual(66);
    expect(Math.abs(block.ms - 0.03) / 0.03).toBeLessThanOrEqual(0.05 + 1e-9);
  });
  it('a query slower than the span runs once per timing, exactly as the official script times it', () => {
    const c = simulated(7.5, 0.0003);
    const block = timeBlock(c.run, c.now, blockSpanMs(0.0003))!;
    expect(block.runs).toBe(1);
    expect(block.ms).toBeCloseTo(7.5, 3);
  });
  it("a preemption inside a block (a busy machine) does not lengthen the timing: the least of BLOCKS_PER_TIMING blocks is the query's time", () => {
    // 30 µs a run on a 0.3 µs clock; the first block holds one 4 ms time slice of another process.
    let t = 1000.0123;
    let runs = 0;
    const run = () => {
      runs++;
      t += 0.03 + (runs === 20 ? 4 : 0);
    };
    const now = () => Math.floor(t / 0.0003) * 0.0003;
    const one = timeBlock(run, now, blockSpanMs(0.0003), MAX_BLOCK_RUNS, 1)!;
    expect(one.ms).toBeGreaterThan(0.06); // one block alone reads the slice: 2-3 times too long
    runs = 0;
    const least = timeBlock(run, now, blockSpanMs(0.0003))!;
    expect(BLOCKS_PER_TIMING).toBeGreaterThan(1);
    expect(runs).toBe(least.runs * BLOCKS_PER_TIMING);
    expect(Math.abs(least.ms - 0.03) / 0.03).toBeLessThan(0.01);
  });
  it('a stopped clock gives no timing (the item is "not timed"), never 0', () => {
    expect(
      timeBlock(
        () => undefined,
        () => 5,
        2,
        1000,
      ),
    ).toBeNull();
  });
  it('outcomes: a reward from measured ratios; "not timed" with the reason for none or for identical ratios (never reward 0)', () => {
    expect(vesOutcome([1.1, 0.9, 1.2, 1.05])).toEqual({ ratio: timeRatio([1.1, 0.9, 1.2, 1.05]), reward: 1 });
    expect(vesOutcome([])).toEqual({ notTimed: 'no repetition was timed' });
    expect(vesOutcome([1, 1, 1])).toMatchObject({
      notTimed: expect.stringMatching(/all 3 repetitions gave the same ratio 1/),
    });
  });
  it('the clock step is found from its smallest change', () => {
    let t = 0;
    expect(clockTick(() => ((t += 0.05), Math.floor(t / 0.1) * 0.1))).toBeCloseTo(0.1, 9);
  });
  it('a time ratio within 2 % of a reward step flips sqrt(reward) by the step; others by nothing', () => {
    const d = (hi: number, lo: number) => Math.sqrt(hi) - Math.sqrt(lo);
    expect(stepFlip(1)).toBeCloseTo(d(1, 0.75), 15);
    expect(stepFlip(1.0199)).toBeCloseTo(d(1, 0.75), 15);
    expect(stepFlip(1 / 1.0199)).toBeCloseTo(d(1, 0.75), 15);
    expect(stepFlip(2.03)).toBeCloseTo(d(1.25, 1), 15);
    expect(stepFlip(0.497)).toBeCloseTo(d(0.75, 0.5), 15);
    expect(stepFlip(0.2501)).toBeCloseTo(d(0.5, 0.25), 15);
    for (const far of [1.021, 1 / 1.021, 1.5, 0.7, 3, 0.1, 0, -1, Infinity, NaN, null, undefined])
      expect(stepFlip(far), String(far)).toBe(0);
    expect(NEAR_STEP).toBe(0.02);
  });
});
