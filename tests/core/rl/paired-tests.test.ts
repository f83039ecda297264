import { describe, expect, it } from 'vitest';
import { mcnemarExactP, pairedBootstrapCi, quantile } from '../../../src/core/rl/paired-tests.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { exactMcnemarP } from '../../helpers/reference-stats.ts';

describe('exact McNemar p-value', () => {
  it.each<[number, number, number]>([
    [0, 0, 1],
    [0, 1, 1],
    [3, 3, 1],
    [0, 5, 0.0625], // 2 / 2^5
    [0, 10, 0.001953125], // 2 / 2^10
    [1, 9, 0.021484375], // 2 * (1 + 10) / 2^10
    [2, 8, 0.109375], // 2 * (1 + 10 + 45) / 2^10
    [5, 15, 0.04138946533203125], // 2 * 21700 / 2^20
    [15, 5, 0.04138946533203125],
    [1, 26, 4.172325134277344e-7], // 2 * (1 + 27) / 2^27
  ])('b = %i, c = %i gives %f', (b, c, p) => {
    expect(mcnemarExactP(b, c)).toBeCloseTo(p, 15);
    expect(mcnemarExactP(b, c) / p).toBeCloseTo(1, 10);
  });

  it('agrees with exact BigInt sums for large counts, without overflow or underflow', () => {
    for (const [b, c] of [
      [40, 60],
      [100, 150],
      [480, 520],
      [700, 900],
      [10, 2000],
    ] as const) {
      const want = exactMcnemarP(b, c);
      const got = mcnemarExactP(b, c);
      if (want > 1e-300) expect(got / want, `b=${b} c=${c}`).toBeCloseTo(1, 9);
      else expect(got).toBeLessThan(1e-290);
    }
  });
});

describe('paired bootstrap interval', () => {
  /** The same procedure written out: draw q indices per resample, mean, sort, interpolate. */
  function reference(diffs: number[], resamples: number, seed: number): [number, number] {
    const rng = mulberry32(seed);
    const means: number[] = [];
    for (let r = 0; r < resamples; r++) {
      let s = 0;
      for (let i = 0; i < diffs.length; i++) s += diffs[Math.floor(rng.next() * diffs.length)]!;
      means.push(s / diffs.length);
    }
    means.sort((a, b) => a - b);
    return [quantile(means, 0.025), quantile(means, 0.975)];
  }

  it('is reproducible with a fixed seed and follows the documented procedure', () => {
    const diffs = [100, 0, 0, -100, 100, 100, 0, 0, 0, 100, -100, 0];
    const a = pairedBootstrapCi(diffs, 10_000, mulberry32(123));
    expect(a).toEqual(pairedBootstrapCi(diffs, 10_000, mulberry32(123)));
    expect(a).toEqual(reference(diffs, 10_000, 123));
    // Resampled means of 0/±100 differences sit on a grid; with continuous differences another seed moves the ends.
    const smooth = diffs.map((d, i) => d + i / 7);
    expect(pairedBootstrapCi(smooth, 2_000, mulberry32(124))).not.toEqual(
      pairedBootstrapCi(smooth, 2_000, mulberry32(123)),
    );
    const mean = diffs.reduce((x, y) => x + y, 0) / diffs.length;
    expect(a[0]).toBeLessThan(mean);
    expect(a[1]).toBeGreaterThan(mean);
  });

  it('approaches the exact bootstrap distribution, enumerated over all q^q resamples', () => {
    const diffs = [100, 0, -100, 100, 0];
    const q = diffs.length;
    const all: number[] = [];
    for (let code = 0; code < q ** q; code++) {
      let s = 0;
      for (let i = 0, c = code; i < q; i++, c = Math.floor(c / q)) s += diffs[c % q]!;
      all.push(s / q);
    }
    all.sort((a, b) => a - b);
    const [lo, hi] = pairedBootstrapCi(diffs, 20_000, mulberry32(5));
    // Resampled means live on a grid of 20 points: the estimate is within one step of the exact quantile.
    expect(Math.abs(lo - quantile(all, 0.025))).toBeLessThanOrEqual(20);
    expect(Math.abs(hi - quantile(all, 0.975))).toBeLessThanOrEqual(20);
  });

  it('collapses to the difference when every question moves the same way, and is NaN without questions', () => {
    expect(pairedBootstrapCi([100, 100, 100], 500, mulberry32(1))).toEqual([100, 100]);
    expect(pairedBootstrapCi([], 500, mulberry32(1))).toEqual([NaN, NaN]);
  });

  it('interpolates quantiles linearly like numpy', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([0, 10], 0.025)).toBe(0.25);
    expect(quantile([7], 0.975)).toBe(7);
  });
});
