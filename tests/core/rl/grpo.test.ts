import { describe, expect, it } from 'vitest';
import { grpoGroup } from '../../../src/core/rl/grpo.ts';
import { advantageHistogram, passRateHistogram } from '../../../src/core/rl/histogram.ts';

describe('GRPO group statistics as verl computes them', () => {
  it('uses the mean, the unbiased std and (r - mean) / (std + 1e-6)', () => {
    // rewards 1, 0, 0, 0: mean 0.25, std = sqrt((0.5625 + 3 * 0.0625) / 3) = 0.5
    const g = grpoGroup([1, 0, 0, 0]);
    expect(g.mean).toBe(0.25);
    expect(g.std).toBeCloseTo(0.5, 15);
    expect(g.advantages[0]).toBeCloseTo(0.75 / 0.500001, 12);
    expect(g.advantages[1]).toBeCloseTo(-0.25 / 0.500001, 12);
    expect(g).toMatchObject({ zeroVariance: false, noGradient: false });
  });

  it('computes a two-sample group: 1 and 0 give std sqrt(0.5) and advantages of about +-0.7071', () => {
    const g = grpoGroup([1, 0]);
    expect(g.std).toBeCloseTo(Math.SQRT1_2, 15);
    expect(g.advantages[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 12);
    expect(g.advantages[1]).toBeCloseTo(-0.5 / (Math.SQRT1_2 + 1e-6), 12);
  });

  it('handles a non-binary reward (ex + 0.1 * format)', () => {
    const g = grpoGroup([1.1, 0.1, 0, 0.1]);
    const mean = 1.3 / 4;
    const std = Math.sqrt([1.1, 0.1, 0, 0.1].reduce((a, r) => a + (r - mean) ** 2, 0) / 3);
    expect(g.mean).toBeCloseTo(mean, 15);
    expect(g.std).toBeCloseTo(std, 15);
    expect(g.advantages[2]).toBeCloseTo((0 - mean) / (std + 1e-6), 12);
  });

  it('gives zero advantages and no gradient when every reward is the same', () => {
    for (const r of [0, 1, 0.1]) {
      const g = grpoGroup([r, r, r, r]);
      expect(g).toMatchObject({ mean: r, std: 0, advantages: [0, 0, 0, 0], zeroVariance: true, noGradient: true });
    }
  });

  it('gives a single-sample group mean 0 and std 1, as verl does', () => {
    expect(grpoGroup([1])).toMatchObject({ mean: 0, std: 1, zeroVariance: false, noGradient: false });
    expect(grpoGroup([1]).advantages[0]).toBeCloseTo(1 / (1 + 1e-6), 15);
    expect(grpoGroup([0])).toMatchObject({ advantages: [0], zeroVariance: false, noGradient: true });
  });
});

describe('histograms', () => {
  it('puts pass rates 0 and 1 in bins of their own', () => {
    const bins = passRateHistogram([0, 0, 0.25, 0.2, 0.5, 0.75, 0.8, 0.9, 1]);
    expect(bins.map((b) => [b.label, b.count])).toEqual([
      ['0 (all wrong)', 2],
      ['(0, 0.2]', 1],
      ['(0.2, 0.4]', 1],
      ['(0.4, 0.6]', 1],
      ['(0.6, 0.8]', 2],
      ['(0.8, 1)', 1],
      ['1 (all right)', 1],
    ]);
  });

  it('bins advantages by 0.5 with exact zeros apart', () => {
    const bins = advantageHistogram([-0.7, -0.2, 0, 0, 0.2, 1.5]);
    expect(bins.map((b) => [b.label, b.count])).toEqual([
      ['[-1, -0.5)', 1],
      ['[-0.5, 0)', 1],
      ['0 (no gradient)', 2],
      ['[0, 0.5)', 1],
      ['[0.5, 1)', 0],
      ['[1, 1.5]', 1],
    ]);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(6);
    expect(advantageHistogram([0, 0]).map((b) => [b.label, b.count])).toEqual([['0 (no gradient)', 2]]);
  });
});
