import { describe, expect, it } from 'vitest';
import { compareFilter, keepCompareFilter, neighbours } from '../../../src/ui/rl/compare-filter.ts';

/** Compare keeps its filter for Back, and the side-by-side view steps through the listed questions. */
describe('the comparison filter kept per pair of runs', () => {
  it('is found again for the same pair (in this order), not for another', () => {
    keepCompareFilter('a', 'b', {
      category: 'all',
      bucket: { kind: 'database', name: 'superhero' },
      listed: [4, 9, 2],
    });
    expect(compareFilter('a', 'b')).toEqual({
      category: 'all',
      bucket: { kind: 'database', name: 'superhero' },
      listed: [4, 9, 2],
    });
    expect(compareFilter('b', 'a')).toBeNull();
  });
  it('steps to the previous and next listed question, none past either end or for a question not listed', () => {
    const f = { category: 'fixed' as const, bucket: null, listed: [4, 9, 2] };
    expect(neighbours(f, 4)).toEqual({ prev: null, next: 9, at: 0, of: 3 });
    expect(neighbours(f, 9)).toEqual({ prev: 4, next: 2, at: 1, of: 3 });
    expect(neighbours(f, 2)).toEqual({ prev: 9, next: null, at: 2, of: 3 });
    expect(neighbours(f, 7)).toBeNull();
    expect(neighbours(null, 4)).toBeNull();
  });
});
