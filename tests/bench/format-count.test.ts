import { describe, expect, it } from 'vitest';
import { formatCount, plural } from '../../src/ui/shell/format.ts';

// formatCount replaced toLocaleString('en') on the explorer's first render (a benchmark finding:
// the first Intl call of a page delays a reopened run's first rows); it must write the same text.
describe('formatCount', () => {
  it('writes integers as toLocaleString("en") does', () => {
    const values = [
      0,
      1,
      7,
      42,
      999,
      1000,
      1034,
      9999,
      10_000,
      99_999,
      100_000,
      123_456,
      1_000_000,
      12_345_678,
      2 ** 31,
      Number.MAX_SAFE_INTEGER,
    ];
    for (const v of [...values, ...values.filter((x) => x > 0).map((x) => -x)])
      expect(formatCount(v), String(v)).toBe(v.toLocaleString('en'));
  });

  it('leaves other numbers to toLocaleString("en")', () => {
    for (const v of [1.5, 1234.5678, -0.25, 1e21, Infinity, NaN])
      expect(formatCount(v), String(v)).toBe(v.toLocaleString('en'));
  });

  it('is what plural() writes', () => {
    expect(plural(1, 'item')).toBe('1 item');
    expect(plural(10_000, 'item')).toBe('10,000 items');
  });
});
