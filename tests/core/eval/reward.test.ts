import { describe, expect, it } from 'vitest';
import { checkFormulaMetrics, compileRewardFormula, formatReward } from '../../../src/core/eval/reward.ts';
import type { ExtractionRule } from '../../../src/core/types.ts';

describe('rewards per sample', () => {
  it.each<[ExtractionRule, 0 | 1]>([
    ['fenced-sql-last', 1],
    ['answer-tag', 1],
    ['select-fallback', 1],
    ['sql-field', 1],
    ['bird-separator', 1],
    ['bird-no-separator', 1],
    ['none', 0],
    ['bird-non-string', 0],
  ])('gives the format reward of rule %s as %i', (rule, v) => {
    expect(formatReward(rule)).toBe(v);
  });

  it('combines EX, format and Soft-F1 with the formula', () => {
    const f = compileRewardFormula('ex + 0.1 * format');
    expect(f.evaluate({ ex: 1, format: 1, softF1: null })).toBeCloseTo(1.1, 12);
    expect(f.evaluate({ ex: 0, format: 1, softF1: null })).toBeCloseTo(0.1, 12);
    expect(f.evaluate({ ex: 0, format: 0, softF1: null })).toBe(0);
    expect([...f.uses].sort()).toEqual(['ex', 'format']);
    expect(compileRewardFormula('soft_f1').evaluate({ ex: 0, format: 1, softF1: 0.25 })).toBe(0.25);
  });

  it('rejects a formula that needs Soft-F1 when the metric is off, and a reward that is not finite', () => {
    expect(() => checkFormulaMetrics(compileRewardFormula('ex + soft_f1'), ['ex'])).toThrow(
      /uses soft_f1, but Soft-F1 is not among the metrics/,
    );
    expect(() => checkFormulaMetrics(compileRewardFormula('ex + soft_f1'), ['ex', 'soft-f1'])).not.toThrow();
    expect(() => compileRewardFormula('ex / format').evaluate({ ex: 1, format: 0, softF1: null })).toThrow(
      /reward formula "ex \/ format" gives Infinity for ex = 1, format = 0/,
    );
  });
});
