import { describe, expect, it } from 'vitest';
import { isWorkbenchError } from '../../../src/core/errors.ts';
import { grpoGroup } from '../../../src/core/rl/grpo.ts';
import { advantageHistogram, MAX_ADVANTAGE_BINS } from '../../../src/core/rl/histogram.ts';
import { expectedMajCurve, MajCurveTooLarge, voteGroups } from '../../../src/core/rl/majority.ts';
import { maxOf, meanOf, minOf } from '../../../src/core/util/numbers.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { computeRunStats } from '../../../src/core/rl/run-stats.ts';
import { question } from './fixtures.ts';

/** C(n, 0..n) in BigInt. */
function binomRow(n: number): bigint[] {
  const row = [1n];
  for (let i = 0; i < n; i++) row.push((row[i]! * BigInt(n - i)) / BigInt(i + 1));
  return row;
}

/** maj@k of R (right, size r) against one wrong result A (size a) and f failed samples, counted in BigInt. */
function majTwoGroupsExact(r: number, a: number, f: number, k: number): number {
  const [R, A, F, N] = [binomRow(r), binomRow(a), binomRow(f), binomRow(r + a + f)];
  let twice = 0n; // a win counts 2, a tie (t = x) counts 1
  for (let t = 1; t <= Math.min(r, k); t++) {
    for (let x = Math.max(0, k - t - f); x <= Math.min(a, k - t, t); x++) {
      const ways = R[t]! * A[x]! * F[k - t - x]!;
      twice += x < t ? 2n * ways : ways;
    }
  }
  const scale = 10n ** 30n;
  return Number((twice * scale) / (2n * N[k]!)) / 1e30;
}

describe('statistics on inputs of any size: no argument spreading, no overflow, no unbounded loop', () => {
  it('min, max and mean of 1,000,000 values (Math.min(...values) overflows the stack here)', () => {
    const values = Array.from({ length: 1_000_000 }, (_, i) => (i * 7919) % 1_000_003);
    expect(() => Math.min(...values)).toThrow(RangeError);
    expect(minOf(values)).toBe(values.reduce((a, v) => (v < a ? v : a)));
    expect(maxOf(values)).toBe(values.reduce((a, v) => (v > a ? v : a)));
    expect(meanOf([1e308, 1e308, -1e308])).toBeCloseTo(1e308 / 3, -300);
    expect(minOf([])).toBe(0);
  });

  it('maj@k for 2,000 samples of one question equals the exact count in BigInt (was a RangeError past 1,000)', () => {
    const spec = [...Array(1100).fill('R'), ...Array(800).fill('A'), ...Array(100).fill(null)] as Array<string | null>;
    const samples = question(0, spec);
    const { groups, abstain } = voteGroups(samples);
    const curve = expectedMajCurve(groups, abstain);
    expect(curve).toHaveLength(2000);
    for (const k of [1, 2, 3, 10, 101, 500, 1000, 1999]) {
      // ln k! summed over 2,000 terms: agreement to 1e-10 (n <= 1,000 is checked to 1e-12 in majority.test.ts)
      expect(curve[k - 1], `k=${k}`).toBeCloseTo(majTwoGroupsExact(1100, 800, 100, k), 10);
    }
    const stats = computeRunStats(samples, { rng: mulberry32(0), ks: [1, 5, 2000] });
    expect(stats.overall.passAtK[1]).toBeCloseTo(1100 / 2000, 12);
    expect(stats.overall.majAtK[5]).toBeCloseTo(majTwoGroupsExact(1100, 800, 100, 5), 10);
    expect(stats.overall.majAtK[2000]).toBe(1);
  });

  it('refuses, naming the question and --k, an exact maj@k that would take minutes (1,000 distinct results)', () => {
    const spec = [...Array(1000).fill('R'), ...Array.from({ length: 1000 }, (_, i) => `w${i}`)];
    const samples = question(3, spec);
    const { groups, abstain } = voteGroups(samples);
    expect(() => expectedMajCurve(groups, abstain)).toThrow(MajCurveTooLarge);
    let err: unknown;
    try {
      computeRunStats(samples, { rng: mulberry32(0) });
    } catch (e) {
      err = e;
    }
    expect(isWorkbenchError(err)).toBe(true);
    expect((err as Error).message).toMatch(/question 3 has 2000 samples in 1001 distinct results.*--k 2000/);
    // maj@n alone needs no expectation over subsets and still works
    expect(computeRunStats(samples, { rng: mulberry32(0), ks: [2000] }).overall.majAtK[2000]).toBe(1);
  });

  it('GRPO statistics of a group with a reward of 1e300 stay finite and exact (the squares used to overflow)', () => {
    const g = grpoGroup([1e300, 0, 0, 0]);
    expect(g.mean).toBeCloseTo(2.5e299, -290);
    // sample std of [1, 0, 0, 0] is 0.5, scaled
    expect(g.std / 5e299).toBeCloseTo(1, 12);
    expect(g.advantages[0]).toBeCloseTo(0.75 / 0.5, 9);
    expect(g.advantages[1]).toBeCloseTo(-0.25 / 0.5, 9);
    expect(g.noGradient).toBe(false);
    // scaling leaves ordinary rewards exactly as before
    expect(grpoGroup([1, 0, 0, 0]).advantages).toEqual([1, 0, 0, 0].map((r) => (r - 0.25) / (0.5 + 1e-6)));
  });

  it('the advantage histogram has at most MAX_ADVANTAGE_BINS bins whatever the values (1e300 used to loop to out-of-memory)', () => {
    const values = [1e300 / (1 + 1e-6), 1, -0.5, 0, 0.7];
    const bins = advantageHistogram(values);
    expect(bins.length).toBeLessThanOrEqual(MAX_ADVANTAGE_BINS + 1);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(values.length);
    const top = bins[bins.length - 1]!;
    expect(top.count).toBe(1);
    expect(top.hi).toBeGreaterThanOrEqual(values[0]!);
    expect(advantageHistogram([-1e308, 1e308]).reduce((a, b) => a + b.count, 0)).toBe(2);
  });

  it('computeRunStats of one question with reward 1e300 finishes with finite numbers', () => {
    const samples = [...question(0, ['R', 'A']), ...question(1, ['R']), ...question(2, ['A'])];
    samples[0]!.reward = 1e300;
    const stats = computeRunStats(samples, { rng: mulberry32(0) });
    expect(Number.isFinite(stats.overall.meanReward)).toBe(true);
    expect(Number.isFinite(stats.overall.meanAbsAdvantage)).toBe(true);
    expect(stats.overall.advantageHistogram.length).toBeLessThanOrEqual(MAX_ADVANTAGE_BINS + 1);
  });
});
