import { describe, expect, it } from 'vitest';
import { rowDiff } from '../../../src/core/compare/row-diff.ts';

describe('rowDiff', () => {
  it('marks the rows that have no equal row on the other side, with EX equality (1 == 1.0)', () => {
    const d = rowDiff(
      [
        [1, 'a'],
        [2, 'b'],
        [3, null],
      ],
      [
        [1.0, 'a'],
        [3, null],
        [4, 'd'],
      ],
    );
    expect(d.predOnly).toEqual([false, true, false]);
    expect(d.goldOnly).toEqual([false, false, true]);
  });
  it('tells text from numbers, as Python does', () => {
    expect(rowDiff([['1']], [[1]])).toEqual({ predOnly: [true], goldOnly: [true] });
  });
  it('handles empty sides', () => {
    expect(rowDiff([], [[1]])).toEqual({ predOnly: [], goldOnly: [true] });
  });
});
