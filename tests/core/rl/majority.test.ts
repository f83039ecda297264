import { describe, expect, it } from 'vitest';
import { expectedMajCurve, majorityVote, voteGroups, type VoteGroup } from '../../../src/core/rl/majority.ts';
import { mulberry32, type Rng } from '../../../src/core/util/rng.ts';
import { question, subsets } from './fixtures.ts';

/**
 * Brute force: for every k-subset, count votes per result, and score the mean value of the
 * groups tied for the most votes (the expectation of a uniform tie-break); 0 when nobody votes.
 */
function bruteForceMaj(results: ReadonlyArray<string | null>, values: Record<string, number>, k: number): number {
  const all = subsets(results.length, k);
  let total = 0;
  for (const s of all) {
    const votes = new Map<string, number>();
    for (const i of s) if (results[i] !== null) votes.set(results[i]!, (votes.get(results[i]!) ?? 0) + 1);
    if (votes.size === 0) continue;
    const max = Math.max(...votes.values());
    const top = [...votes].filter(([, v]) => v === max).map(([key]) => values[key] ?? 0);
    total += top.reduce((a, v) => a + v, 0) / top.length;
  }
  return total / all.length;
}

const spec = (s: string) => [...s].map((c) => (c === '.' ? null : c));

describe('maj@k: exact expectation over subsets', () => {
  it.each([
    'RRRR',
    'R...',
    'RAAB',
    'RRAA',
    'RABC',
    'RAB.',
    'RRAAB.',
    'RRRAAAB',
    'RABCDEF',
    'RR..AA..',
    'RAAAAAAAR',
    'R.R.A.A.B.',
  ])('matches brute force for every k on %s (R right, letters other results, . failed)', (s) => {
    const results = spec(s);
    const { groups, abstain } = voteGroups(question(0, results));
    const curve = expectedMajCurve(groups, abstain);
    for (let k = 1; k <= results.length; k++) {
      expect(curve[k - 1], `k=${k}`).toBeCloseTo(bruteForceMaj(results, { R: 1 }, k), 12);
    }
  });

  it('matches brute force on 200 random small cases, with several groups of non-zero value', () => {
    const rng = mulberry32(7);
    const letters = ['R', 'A', 'B', 'C', null];
    for (let t = 0; t < 200; t++) {
      const n = 1 + Math.floor(rng.next() * 9);
      const results = Array.from({ length: n }, () => letters[Math.floor(rng.next() * letters.length)]!);
      const values: Record<string, number> = { R: 1, A: 0, B: 0.5, C: 0 };
      const groups: VoteGroup[] = [];
      let abstain = 0;
      results.forEach((r, i) => {
        if (r === null) abstain++;
        else {
          const g = groups.find((x) => x.resultKey === r);
          if (g) g.size++;
          else groups.push({ resultKey: r, size: 1, value: values[r]!, first: i });
        }
      });
      const curve = expectedMajCurve(groups, abstain);
      for (let k = 1; k <= n; k++)
        expect(curve[k - 1], `${results.join('')} k=${k}`).toBeCloseTo(bruteForceMaj(results, values, k), 12);
    }
  });

  it('handles 64 samples quickly and stays a probability', () => {
    const results = spec('R'.repeat(20) + 'A'.repeat(20) + 'BCDEFGHIJK' + '.'.repeat(14));
    const { groups, abstain } = voteGroups(question(0, results));
    const curve = expectedMajCurve(groups, abstain);
    expect(curve).toHaveLength(64);
    for (const v of curve) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1 + 1e-12);
    }
    expect(curve[0]).toBeCloseTo(20 / 64, 12);
  });
});

describe('maj@n: one vote with a seeded tie-break', () => {
  const counting = (values: number[]): Rng & { calls: number } => {
    const r = { calls: 0, next: () => values[r.calls++ % values.length]! };
    return r;
  };

  it('takes the largest group without drawing when there is no tie', () => {
    const rng = counting([0.99]);
    const { groups } = voteGroups(question(0, spec('ARRB.R')));
    expect(majorityVote(groups, rng)).toMatchObject({ winner: { resultKey: 'key-R', size: 3 }, tied: 1, score: 1 });
    expect(rng.calls).toBe(0);
  });

  it('breaks a tie between groups in order of first appearance with one draw', () => {
    const { groups } = voteGroups(question(0, spec('AARRB')));
    expect(groups.map((g) => g.resultKey)).toEqual(['key-A', 'key-R', 'key-B']);
    expect(majorityVote(groups, counting([0.2])).winner!.resultKey).toBe('key-A');
    expect(majorityVote(groups, counting([0.7])).winner!.resultKey).toBe('key-R');
  });

  it('gives the same vote for the same seed, and both tied answers across seeds', () => {
    const { groups } = voteGroups(question(0, spec('RA')));
    const seeded = (seed: number) => majorityVote(groups, mulberry32(seed)).score;
    expect(seeded(42)).toBe(seeded(42));
    const scores = new Set(Array.from({ length: 20 }, (_, s) => seeded(s)));
    expect(scores).toEqual(new Set([0, 1]));
  });

  it('scores 0 when no sample executed', () => {
    const { groups, abstain } = voteGroups(question(0, spec('...')));
    expect(abstain).toBe(3);
    expect(majorityVote(groups, mulberry32(1))).toEqual({ winner: null, tied: 0, score: 0 });
    expect(expectedMajCurve(groups, abstain)).toEqual([0, 0, 0]);
  });
});

describe('who votes', () => {
  it('leaves out samples that did not execute and samples without SQL (format 0)', () => {
    const samples = question(0, spec('RAA')).map((s, i) => (i > 0 ? { ...s, format: 0 as const } : s));
    expect(voteGroups(samples)).toEqual({ groups: [{ resultKey: 'key-R', size: 1, value: 1, first: 0 }], abstain: 2 });
  });
});
