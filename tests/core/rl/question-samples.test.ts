import { describe, expect, it } from 'vitest';
import { questionSamples } from '../../../src/core/rl/question-samples.ts';
import { question, sample } from './fixtures.ts';

describe('questionSamples (the per-question samples view)', () => {
  it('groups samples by result signature, largest first, and votes with majority.ts rules', () => {
    // s0, s2, s5 return a wrong result X; s1, s4 the gold result R; s3 fails; s6 another result Y.
    const q = questionSamples(question(7, ['X', 'R', 'X', null, 'R', 'X', 'Y']).reverse());
    expect(q.samples.map((s) => s.sample)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(q.groups.map((g) => [g.label, g.samples, g.ex, g.top])).toEqual([
      ['A', [0, 2, 5], 0, true],
      ['B', [1, 4], 1, false],
      ['C', [6], 0, false],
    ]);
    expect(q.abstain).toEqual([3]);
    expect([q.tied, q.majority, q.right, q.scored]).toEqual([1, 0, 2, true]);
    expect(q.groupOf.get(4)).toBe('B');
    expect(q.groupOf.has(3)).toBe(false);
  });

  it('a tie between t groups gives each 1/t (the expectation maj@n reports)', () => {
    const q = questionSamples(question(1, ['R', 'X', 'R', 'X']));
    expect(q.tied).toBe(2);
    expect(q.majority).toBe(0.5);
  });

  it('nobody votes when no sample returned a result, and a sample without SQL abstains', () => {
    const q = questionSamples([
      ...question(2, [null, null]),
      sample({ index: 2, sample: 2, resultKey: 'key-empty', format: 0 }),
    ]);
    expect(q.groups).toEqual([]);
    expect(q.abstain).toEqual([0, 1, 2]);
    expect([q.tied, q.majority]).toEqual([0, 0]);
  });

  it('a question whose database is missing is not scored: no majority, never counted as wrong', () => {
    const q = questionSamples(
      [0, 1].map((n) => sample({ index: 3, sample: n, status: 'missing-db', error: 'database missing' })),
    );
    expect(q.scored).toBe(false);
    expect(q.majority).toBeNull();
  });
});
