import { describe, expect, it } from 'vitest';
import { passAtK, passAtKCurve } from '../../../src/core/rl/pass-at-k.ts';
import { subsets } from './fixtures.ts';

/** Share of k-subsets of n samples (the first c correct) that contain a correct one. */
function bruteForce(n: number, c: number, k: number): number {
  const all = subsets(n, k);
  return all.filter((s) => s.some((i) => i < c)).length / all.length;
}

describe('pass@k', () => {
  it('equals the share of k-subsets with a correct sample, for every n <= 10, c and k', () => {
    for (let n = 1; n <= 10; n++) {
      for (let c = 0; c <= n; c++) {
        for (let k = 1; k <= n; k++)
          expect(passAtK(n, c, k), `n=${n} c=${c} k=${k}`).toBeCloseTo(bruteForce(n, c, k), 12);
      }
    }
  });

  it('stays finite and exact in edge cases where binomial coefficients would overflow', () => {
    expect(passAtK(2000, 0, 1000)).toBe(0);
    expect(passAtK(2000, 1, 1000)).toBeCloseTo(0.5, 12);
    expect(passAtK(2000, 1500, 1)).toBeCloseTo(0.75, 12);
    expect(passAtK(2000, 1001, 1000)).toBe(1);
    expect(Number.isFinite(passAtK(5000, 3, 2500))).toBe(true);
  });

  it('gives a curve from pass@1 = c/n up to pass@n = 1 when c > 0', () => {
    const curve = passAtKCurve(8, 2);
    expect(curve).toHaveLength(8);
    expect(curve[0]).toBeCloseTo(0.25, 12);
    expect(curve[7]).toBe(1);
    for (let i = 1; i < 8; i++) expect(curve[i]!).toBeGreaterThanOrEqual(curve[i - 1]!);
  });

  it.each([
    [0, 0, 1],
    [4, 5, 1],
    [4, 2, 5],
    [4, 2, 0],
    [4, 1.5, 1],
  ])('rejects n=%s c=%s k=%s', (n, c, k) => {
    expect(() => passAtK(n, c, k)).toThrow(/pass@k needs integers/);
  });
});
