import { describe, expect, it } from 'vitest';
import { softF1 } from '../../../src/core/compare/soft-f1.ts';
import type { SqlValue } from '../../../src/core/types.ts';

type Rows = SqlValue[][];

describe('official Soft-F1 (evaluation_f1.py after the 2025-06 de-duplication change)', () => {
  it("scores the README's worked example as the code does (2/3), not as the README's prose (0.8)", () => {
    // The README's prose ignores the NULLs; the code counts NULL as a value: row 2 has
    // pred-only 191 and gold-only NULL, row 3 pred-only NULL and gold-only 119 -> P = R = 2/3.
    const gold: Rows = [
      ['Apple', 325],
      ['Orange', null],
      ['Banana', 119],
    ];
    const pred: Rows = [
      [325, 'Apple'],
      [191, 'Orange'],
      [null, 'Banana'],
    ];
    expect(softF1(pred, gold)).toBe(2 / 3);
  });
  const cases: [string, Rows, Rows, number][] = [
    ['both empty score 1', [], [], 1],
    ['only the prediction empty scores 0', [], [[1]], 0],
    ['only the gold empty scores 0', [[1]], [], 0],
    [
      'identical results score 1',
      [
        [1, 'a'],
        [2, 'b'],
      ],
      [
        [1, 'a'],
        [2, 'b'],
      ],
      1,
    ],
    ['column order inside a row does not matter', [['a', 1]], [[1, 'a']], 1],
    // rows are paired by position: swapping rows loses every match
    ['row order matters (paired by position)', [[2], [1]], [[1], [2]], 0],
    // duplicates dropped first: [(1,),(1,),(2,)] -> [(1,),(2,)]
    ['duplicate rows are dropped before pairing', [[1], [1], [2]], [[1], [2]], 1],
    // one extra gold row: tp 1, fn 1 -> P 1, R 0.5 -> F1 2/3
    ['an extra gold row is a false negative', [[1]], [[1], [2]], 2 / 3],
    // one extra predicted row: tp 1, fp 1 -> P 0.5, R 1
    ['an extra predicted row is a false positive', [[1], [2]], [[1]], 2 / 3],
    ['1 and 1.0 are the same value', [[1.0]], [[1]], 1],
    // pred (1,1) vs gold (1,2): matched 2/2 (both 1s are in gold), pred_only 0, gold_only 1/2
    ['each predicted value is counted on its own', [[1, 1]], [[1, 2]], 0.8],
  ];
  it.each(cases)('%s', (_n, pred, gold, f1) => {
    expect(softF1(pred, gold)).toBeCloseTo(f1, 12);
  });
});
