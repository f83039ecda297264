/**
 * The aggregation registry against direct computations written out in the test, on hand-built
 * verdicts: every category, negative and positive pitfalls, unresolved verdicts, a rubric without
 * Essentials, one of Pitfalls only, ties in a group and a group of one.
 */
import { describe, expect, it } from 'vitest';
import { aggregateExplicit } from '../../src/core/rubric/aggregate.ts';
import {
  AGGREGATION_IDS,
  AGGREGATION_REGISTRY,
  aggregateByGroup,
  aggregateGroup,
  aggregateOne,
  judgingsFor,
  parseAggregationIds,
  summarizeAggregations,
  type AggregationSample,
} from '../../src/core/rubric/aggregations.ts';
import { JsonReader } from '../../src/core/formats/validate.ts';
import type { Category } from '../../src/core/rubric/model.ts';
import { readRubricScores } from '../../src/core/rubric/read-scores.ts';
import { DEFAULT_EXPLICIT_OPTIONS, type CriterionVerdict, type ScaleJudgement } from '../../src/core/rubric/scores.ts';

type Spec = [id: string, category: Category, weight: number, met: boolean | null | 'n/a'];

function verdict(id: string, met: boolean | null | 'n/a'): CriterionVerdict {
  const status = met === 'n/a' ? 'not-applicable' : met === null ? 'unparseable' : 'ok';
  return {
    id,
    met: met === 'n/a' ? null : met,
    explanation: '',
    raw: null,
    status,
    source: 'judge',
    attempts: 1,
    cached: false,
  };
}

const scale = (s: number | null): ScaleJudgement => ({
  status: s === null ? 'unparseable' : 'ok',
  rawScore: s,
  score: s === null ? null : (s - 1) / 9,
  explanation: '',
  raw: null,
  attempts: 1,
  cached: false,
});

function sample(specs: Spec[], o: { rule?: number | null; implicit?: number | null } = {}): AggregationSample {
  const items = specs.map(([id, category, weight]) => ({ id, category, weight }));
  const criteria = specs.map(([id, , , met]) => verdict(id, met));
  return {
    items,
    scores: {
      criteria,
      explicit: aggregateExplicit(items, criteria, DEFAULT_EXPLICIT_OPTIONS),
      implicit: o.implicit === undefined ? null : scale(o.implicit),
      likert: scale(7),
    },
    rule: o.rule ?? null,
  };
}

/** Direct computations, written apart from the registry's code. */
function direct(specs: Spec[]) {
  const used = specs.filter(([, , , m]) => m !== 'n/a') as Array<[string, Category, number, boolean]>;
  const num = used.reduce((a, [, , w, m]) => a + (m ? w : 0), 0);
  const pos = used.reduce((a, [, , w]) => a + (w > 0 ? w : 0), 0);
  const abs = used.reduce((a, [, , w]) => a + Math.abs(w), 0);
  const clip = (x: number) => Math.min(1, Math.max(0, x));
  // A pitfall is triggered when met if it describes the fault (w < 0), when not met if phrased "avoids" (w ≥ 0).
  const bad = ([, c, w, m]: [string, Category, number, boolean]) => (c === 'pitfall' ? (w < 0 ? m : !m) : !m);
  return {
    explicit: clip(num / pos),
    abs: clip(num / abs),
    unclipped: num / pos,
    vetoed: used.some((s) => (s[1] === 'essential' || s[1] === 'pitfall') && bad(s)),
    min: Math.min(...used.map((s) => (bad(s) ? 0 : 1))),
    allPass: used.filter((s) => s[1] !== 'optional').every((s) => !bad(s)) ? 1 : 0,
  };
}

const get = (s: AggregationSample, id: (typeof AGGREGATION_IDS)[number]) => aggregateOne(id, s);

const MIXED: Spec[] = [
  ['e1', 'essential', 5, true],
  ['e2', 'essential', 5, true],
  ['i1', 'important', 4, false],
  ['o1', 'optional', 2, true],
  ['p-fault', 'pitfall', -2, false],
  ['p-avoid', 'pitfall', 0.9, true],
];

describe('each aggregation equals a direct computation on hand-built verdicts', () => {
  it('a mixed rubric: explicit variants, veto (not vetoed), minimum and all-must-pass (an Important fails)', () => {
    const s = sample(MIXED, { implicit: 8 });
    const d = direct(MIXED);
    expect(d.vetoed).toBe(false);
    expect(get(s, 'explicit').score).toBeCloseTo(d.explicit, 12);
    expect(get(s, 'explicit').score).toBeCloseTo(12.9 / 16.9, 12);
    expect(get(s, 'explicit-abs').score).toBeCloseTo(d.abs, 12);
    expect(get(s, 'explicit-abs').score).toBeCloseTo(12.9 / 18.9, 12);
    expect(get(s, 'explicit-unclipped').score).toBeCloseTo(d.unclipped, 12);
    expect(get(s, 'veto').score).toBeCloseTo(d.explicit, 12);
    expect(get(s, 'minimum')).toMatchObject({ score: d.min, status: 'ok' });
    expect(d.min).toBe(0);
    expect(get(s, 'all-must-pass')).toMatchObject({ score: d.allPass, status: 'ok' });
    expect(d.allPass).toBe(0);
    expect(get(s, 'implicit').score).toBeCloseTo(7 / 9, 12);
    expect(get(s, 'likert').score).toBeCloseTo(6 / 9, 12);
  });

  it('veto: a failed Essential, a triggered fault pitfall, or a not-avoided pitfall each set the reward to 0', () => {
    const cases: Spec[][] = [
      MIXED.map((x) => (x[0] === 'e2' ? ['e2', 'essential', 5, false] : x)),
      MIXED.map((x) => (x[0] === 'p-fault' ? ['p-fault', 'pitfall', -2, true] : x)),
      MIXED.map((x) => (x[0] === 'p-avoid' ? ['p-avoid', 'pitfall', 0.9, false] : x)),
    ];
    for (const specs of cases) {
      const s = sample(specs);
      expect(direct(specs).vetoed).toBe(true);
      expect(get(s, 'veto')).toMatchObject({ score: 0, status: 'ok' });
      // The explicit score of the same verdicts is not 0: the veto is what makes it 0.
      expect(get(s, 'explicit').score).toBeGreaterThan(0);
    }
  });

  it('Optional counts in minimum but not in all-must-pass', () => {
    const specs: Spec[] = [
      ['e', 'essential', 1, true],
      ['i', 'important', 0.7, true],
      ['o', 'optional', 0.3, false],
      ['p', 'pitfall', -1, false],
    ];
    const s = sample(specs);
    expect(direct(specs)).toMatchObject({ min: 0, allPass: 1 });
    expect(get(s, 'minimum').score).toBe(0);
    expect(get(s, 'all-must-pass').score).toBe(1);
    const allMet = sample(specs.map(([id, c, w]) => [id, c, w, c !== 'pitfall']));
    expect(get(allMet, 'minimum').score).toBe(1);
  });

  it('no Essential: veto only looks at pitfalls; all-must-pass at Important and pitfalls', () => {
    const specs: Spec[] = [
      ['i', 'important', 4, true],
      ['o', 'optional', 2, false],
      ['p', 'pitfall', -2, false],
    ];
    const s = sample(specs);
    const d = direct(specs);
    expect(get(s, 'veto').score).toBeCloseTo(d.explicit, 12);
    expect(get(s, 'veto').score).toBeCloseTo(4 / 6, 12);
    expect(get(s, 'all-must-pass').score).toBe(d.allPass);
    expect(d.allPass).toBe(1);
    expect(get(s, 'minimum').score).toBe(0);
  });

  it('pitfalls only: fault-phrased pitfalls have no positive weight (explicit null, never 0) unless one is triggered', () => {
    const clean: Spec[] = [
      ['p1', 'pitfall', -2, false],
      ['p2', 'pitfall', -1, false],
    ];
    const s = sample(clean);
    expect(get(s, 'explicit')).toMatchObject({ score: null, status: 'no-positive-weight' });
    expect(get(s, 'veto')).toMatchObject({ score: null, status: 'no-positive-weight' });
    expect(get(s, 'minimum')).toMatchObject({ score: 1, status: 'ok' });
    expect(get(s, 'all-must-pass')).toMatchObject({ score: 1, status: 'ok' });
    expect(get(s, 'explicit-abs')).toMatchObject({ score: 0, status: 'ok' });
    const hit = sample([clean[0]!, ['p2', 'pitfall', -1, true]]);
    expect(get(hit, 'veto')).toMatchObject({ score: 0, status: 'ok' });
    expect(get(hit, 'minimum').score).toBe(0);
    expect(get(hit, 'all-must-pass').score).toBe(0);
    expect(get(hit, 'explicit-unclipped')).toMatchObject({ score: null, status: 'no-positive-weight' });
    // Avoidance-phrased pitfalls only: Σw·c/Σw as usual.
    const avoid: Spec[] = [
      ['a1', 'pitfall', 0.9, true],
      ['a2', 'pitfall', 0.9, true],
    ];
    expect(get(sample(avoid), 'veto').score).toBe(1);
  });

  it('an unresolved verdict gives null unless the resolved ones decide; not-applicable criteria are left out', () => {
    const specs: Spec[] = [
      ['e1', 'essential', 5, null],
      ['e2', 'essential', 5, true],
      ['o', 'optional', 2, 'n/a'],
    ];
    const s = sample(specs);
    for (const id of ['explicit', 'veto', 'minimum', 'all-must-pass', 'rule-x-judge'] as const)
      expect(aggregateOne(id, { ...s, rule: 1 })).toMatchObject({ score: null, status: 'incomplete' });
    const decided = sample([...specs, ['p', 'pitfall', -2, true]]);
    expect(get(decided, 'explicit').score).toBeNull();
    expect(get(decided, 'veto')).toMatchObject({ score: 0, status: 'ok' });
    expect(get(decided, 'minimum')).toMatchObject({ score: 0, status: 'ok' });
    expect(get(decided, 'all-must-pass')).toMatchObject({ score: 0, status: 'ok' });
    // The explicit options' `skip` leaves unresolved criteria out of every aggregation.
    const skip = { ...DEFAULT_EXPLICIT_OPTIONS, unresolved: 'skip' as const };
    expect(aggregateOne('minimum', s, skip)).toMatchObject({ score: 1, status: 'ok' });
    expect(aggregateOne('explicit', s, skip).score).toBe(1);
    // Only optional criteria: all-must-pass has nothing to require.
    expect(get(sample([['o', 'optional', 1, true]]), 'all-must-pass')).toMatchObject({
      score: null,
      status: 'no-criteria',
    });
  });

  it('rule × judge: the rule reward times explicit; no rule gives null, a rule of 0 gives 0', () => {
    const d = direct(MIXED);
    expect(aggregateOne('rule-x-judge', sample(MIXED, { rule: 0.5 })).score).toBeCloseTo(0.5 * d.explicit, 12);
    expect(aggregateOne('rule-x-judge', sample(MIXED, { rule: 1 })).score).toBeCloseTo(d.explicit, 12);
    expect(aggregateOne('rule-x-judge', sample(MIXED, { rule: 0 }))).toMatchObject({ score: 0, status: 'ok' });
    expect(aggregateOne('rule-x-judge', sample(MIXED))).toMatchObject({ score: null, status: 'no-rule' });
    expect(() => aggregateOne('rule-x-judge', sample(MIXED, { rule: 2 }))).toThrow('in [0, 1], got 2');
  });

  it('implicit and Likert read the judgements; aggregations over criteria that were not judged are `not-judged`', () => {
    const s = sample(MIXED, { implicit: null });
    expect(get(s, 'implicit')).toMatchObject({ score: null, status: 'no-judgement' });
    expect(get(sample(MIXED), 'implicit')).toMatchObject({ score: null, status: 'not-judged' });
    const noCriteria: AggregationSample = { ...s, scores: { ...s.scores, criteria: [], explicit: null } };
    for (const id of ['explicit', 'veto', 'minimum', 'group-rank'] as const)
      expect(get(noCriteria, id)).toMatchObject({ score: null, status: 'not-judged' });
  });
});

describe('group-relative ranking', () => {
  /** A sample whose explicit score is `k` of 4 equal-weight essentials met (null: one unresolved). */
  const withScore = (k: number | null): AggregationSample =>
    sample([0, 1, 2, 3].map((i) => [`e${i}`, 'essential', 1, k === null ? (i === 0 ? null : true) : i < k] as Spec));
  /** Direct: ascending rank with ties averaged, (rank − 1) / (n − 1). */
  function ranks(xs: number[]): number[] {
    const sorted = [...xs].sort((a, b) => a - b);
    return xs.map((x) => {
      const first = sorted.indexOf(x);
      const last = sorted.lastIndexOf(x);
      return (first + last) / 2 / (xs.length - 1);
    });
  }

  it('distinct scores and ties: each sample’s averaged rank in [0, 1]', () => {
    const ks = [3, 1, 4, 1, 2];
    const got = aggregateGroup(ks.map(withScore), ['group-rank']).map((v) => v[0]!.score);
    expect(got).toEqual(ranks(ks.map((k) => k / 4)));
    expect(got).toEqual([0.75, 0.125, 1, 0.125, 0.5]);
    const tied = aggregateGroup([2, 2, 2].map(withScore), ['group-rank']).map((v) => v[0]!.score);
    expect(tied).toEqual([0.5, 0.5, 0.5]);
  });

  it('a group of one, and samples without an explicit score, get null; the others rank among themselves', () => {
    expect(aggregateGroup([withScore(2)], ['group-rank'])[0]![0]).toMatchObject({
      score: null,
      status: 'group-of-one',
    });
    const mixed = aggregateGroup([withScore(1), withScore(null), withScore(3)], ['group-rank']).map((v) => v[0]);
    expect(mixed.map((v) => v!.score)).toEqual([0, null, 1]);
    expect(mixed[1]!.status).toBe('no-score');
    const alone = aggregateGroup([withScore(null), withScore(3)], ['group-rank']).map((v) => v[0]!.status);
    expect(alone).toEqual(['no-score', 'group-of-one']);
  });

  it('aggregateByGroup ranks within each question and keeps the samples’ order', () => {
    const rows = [
      { q: 0, k: 1 },
      { q: 1, k: 4 },
      { q: 0, k: 3 },
      { q: 1, k: 0 },
      { q: 2, k: 2 },
    ];
    const got = aggregateByGroup(
      rows,
      (r) => r.q,
      (r) => withScore(r.k),
      ['explicit', 'group-rank'],
    );
    expect(got.map((v) => v.map((x) => x.score))).toEqual([
      [0.25, 0],
      [1, 1],
      [0.75, 1],
      [0, 0],
      [0.5, null],
    ]);
    const summary = summarizeAggregations(got, ['explicit', 'group-rank']);
    expect(summary[1]).toMatchObject({ id: 'group-rank', version: 1, n: 4, missing: 1, mean: 0.5 });
    expect(summary[0]!.mean).toBeCloseTo((0.25 + 1 + 0.75 + 0 + 0.5) / 5, 12);
  });
});

describe('the registry', () => {
  it('every id has one entry with a version and a formula; `all` and lists parse; an unknown id is named', () => {
    expect(AGGREGATION_REGISTRY.map((d) => d.id)).toEqual([...AGGREGATION_IDS]);
    for (const d of AGGREGATION_REGISTRY) {
      expect(d.version).toBeGreaterThanOrEqual(1);
      expect(d.formula.length).toBeGreaterThan(10);
    }
    expect(parseAggregationIds(['all'], '--aggregation')).toEqual([...AGGREGATION_IDS]);
    expect(parseAggregationIds(['veto', 'explicit', 'veto'], '--aggregation')).toEqual(['explicit', 'veto']);
    expect(() => parseAggregationIds(['vibes'], '--aggregation')).toThrow(
      '--aggregation: unknown aggregation "vibes"; use all or any of explicit,',
    );
    expect(judgingsFor(['likert', 'group-rank'])).toEqual(['explicit', 'likert']);
    expect(judgingsFor(['implicit'])).toEqual(['implicit']);
  });

  it('stored values round-trip through readRubricScores; a bad id is named with its path', () => {
    const s = sample(MIXED, { implicit: 8 });
    const values = aggregateGroup([s], [...AGGREGATION_IDS])[0]!;
    const rubric = {
      version: 1,
      rubricId: 'r',
      weights: {},
      judge: null,
      ...s.scores,
      promptInjection: { flagged: false, matches: [] },
      aggregations: values,
    };
    const o = JSON.parse(JSON.stringify({ rubric })) as Record<string, unknown>;
    const r = new JsonReader('run.json');
    expect(r.optional(o, 'rubric', 'samples[0]', readRubricScores)?.aggregations).toEqual(values);
    (o.rubric as { aggregations: Array<{ id: string }> }).aggregations[2]!.id = 'vibes';
    expect(() => r.optional(o, 'rubric', 'samples[0]', readRubricScores)).toThrow(
      'samples[0].rubric.aggregations[2].id must be one of',
    );
  });
});
