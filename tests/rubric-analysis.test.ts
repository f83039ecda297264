import { describe, expect, it } from 'vitest';
import { agreement, exMatrix, histogram } from '../src/ui/rubric/analysis.ts';

describe('rubric screen analysis', () => {
  it('bins scores in tenths, 1.0 in the last bin, nulls left out', () => {
    expect(histogram([0, 0.05, 0.1, 0.55, 0.999, 1, null, -0.2, 1.3])).toEqual([3, 1, 0, 0, 0, 1, 0, 0, 0, 3]);
  });

  it('agreement: Pearson r, mean |difference| and the share on the same side of the threshold', () => {
    const a = agreement([0, 0.5, 1, null], [0.2, 0.4, 1, 0.3]);
    expect(a.n).toBe(3);
    // x = 0, .5, 1 (mean .5); y = .2, .4, 1 (mean 8/15)
    const r =
      (-0.5 * (0.2 - 8 / 15) + 0 + 0.5 * (1 - 8 / 15)) /
      Math.sqrt(0.5 * ((0.2 - 8 / 15) ** 2 + (0.4 - 8 / 15) ** 2 + (1 - 8 / 15) ** 2));
    expect(a.pearson).toBeCloseTo(r, 12);
    expect(a.meanAbsDiff).toBeCloseTo((0.2 + 0.1 + 0) / 3, 12);
    expect(a.passAgreement).toBeCloseTo(2 / 3, 12);
    expect(agreement([1, 1], [0.2, 0.9]).pearson).toBeNull();
    expect(agreement([null], [1])).toEqual({ n: 0, pearson: null, meanAbsDiff: null, passAgreement: null });
  });

  it('judge-vs-EX matrix lists the samples where the judge rewards a wrong answer', () => {
    const m = exMatrix([
      { key: '0.0', ex: 1, score: 0.9 },
      { key: '1.0', ex: 0, score: 0.5 },
      { key: '2.0', ex: 0, score: 0.1 },
      { key: '3.0', ex: 1, score: 0.2 },
      { key: '4.0', ex: 0, score: null },
      { key: '5.0', ex: 0, score: 1 },
      // Not scored (database missing): never a wrong answer, even with a passing score.
      { key: '6.0', ex: 0, score: 1, unscored: true },
    ]);
    expect(m).toEqual({
      passRight: 1,
      passWrong: 2,
      failRight: 1,
      failWrong: 1,
      noScore: 1,
      rewardedWrong: ['1.0', '5.0'],
      unscored: 1,
    });
  });
});
