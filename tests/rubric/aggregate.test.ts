import { describe, expect, it } from 'vitest';
import { aggregateExplicit, reaggregate, scaleToUnit, summarizeRubricScores } from '../../src/core/rubric/aggregate.ts';
import { applyWeighting, validateRubric, WEIGHTINGS, type Rubric } from '../../src/core/rubric/model.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import type { CriterionVerdict, ExplicitOptions } from '../../src/core/rubric/scores.ts';

function v(
  id: string,
  met: boolean | null,
  status: CriterionVerdict['status'] = met === null ? 'unparseable' : 'ok',
): CriterionVerdict {
  return { id, met, explanation: '', raw: null, status, source: 'judge', attempts: 1, cached: false };
}
const opts = (o: Partial<ExplicitOptions> = {}): ExplicitOptions => ({
  normalization: 'positive',
  clip: true,
  unresolved: 'null',
  ...o,
});

/** One item per category, weights from a weighting. */
function rubricWith(weighting: 'paper' | 'rar-integers'): Rubric {
  return validateRubric(
    {
      id: `r-${weighting}`,
      items: ['essential', 'important', 'optional', 'pitfall'].map((category) => ({
        id: category,
        title: category,
        category,
      })),
    },
    { weighting },
  );
}

describe('explicit aggregation against hand-computed cases', () => {
  it('paper weights (1.0 / 0.7 / 0.3 / 0.9, pitfall phrased "avoids"): Σw·c / Σw', () => {
    const r = rubricWith('paper');
    expect(r.items.map((i) => i.weight)).toEqual([1.0, 0.7, 0.3, 0.9]);
    const s = aggregateExplicit(
      r.items,
      [v('essential', true), v('important', false), v('optional', true), v('pitfall', true)],
      opts(),
    );
    // (1.0 + 0.3 + 0.9) / (1.0 + 0.7 + 0.3 + 0.9) = 2.2 / 2.9
    expect(s.numerator).toBeCloseTo(2.2, 12);
    expect(s.denominator).toBeCloseTo(2.9, 12);
    expect(s.score).toBeCloseTo(2.2 / 2.9, 12);
    expect(s.status).toBe('ok');
    // Absolute normalisation is the same when no weight is negative.
    expect(
      aggregateExplicit(
        r.items,
        [v('essential', true), v('important', false), v('optional', true), v('pitfall', true)],
        opts({ normalization: 'absolute' }),
      ).score,
    ).toBeCloseTo(2.2 / 2.9, 12);
  });

  it('released-data integers (5 / 4 / 2 / −2): a met pitfall subtracts; Σ positive vs Σ|w| denominators', () => {
    const r = rubricWith('rar-integers');
    expect(r.items.map((i) => i.weight)).toEqual([5, 4, 2, -2]);
    const verdicts = [v('essential', true), v('important', true), v('optional', false), v('pitfall', true)];
    // (5 + 4 − 2) / (5 + 4 + 2) = 7 / 11 (HealthBench: positive points only)
    expect(aggregateExplicit(r.items, verdicts, opts()).score).toBeCloseTo(7 / 11, 12);
    // (5 + 4 − 2) / (5 + 4 + 2 + 2) = 7 / 13
    expect(aggregateExplicit(r.items, verdicts, opts({ normalization: 'absolute' })).score).toBeCloseTo(7 / 13, 12);
    // The pitfall not met costs nothing: 9 / 11 and 9 / 13.
    const avoided = [v('essential', true), v('important', true), v('optional', false), v('pitfall', false)];
    expect(aggregateExplicit(r.items, avoided, opts()).score).toBeCloseTo(9 / 11, 12);
    expect(aggregateExplicit(r.items, avoided, opts({ normalization: 'absolute' })).score).toBeCloseTo(9 / 13, 12);
  });

  it('clips to [0, 1] like HealthBench, and keeps the unclipped value', () => {
    const items = [
      { id: 'e', weight: 5 },
      { id: 'p', weight: -2 },
    ];
    const s = aggregateExplicit(items, [v('e', false), v('p', true)], opts());
    expect(s.unclipped).toBeCloseTo(-2 / 5, 12);
    expect(s.score).toBe(0);
    const noClip = aggregateExplicit(items, [v('e', false), v('p', true)], opts({ clip: false }));
    expect(noClip.score).toBeCloseTo(-0.4, 12);
    expect(
      aggregateExplicit(items, [v('e', false), v('p', true)], opts({ normalization: 'absolute', clip: false })).score,
    ).toBeCloseTo(-2 / 7, 12);
  });

  it('an unresolved criterion makes the score null (incomplete), or is left out with unresolved = skip', () => {
    const items = [
      { id: 'a', weight: 3 },
      { id: 'b', weight: 1 },
    ];
    const s = aggregateExplicit(items, [v('a', true), v('b', null)], opts());
    expect(s).toMatchObject({ score: null, status: 'incomplete', unresolved: ['b'] });
    expect(aggregateExplicit(items, [v('a', true), v('b', null)], opts({ unresolved: 'skip' })).score).toBe(1);
    // A verdict that is missing altogether counts as unresolved too.
    expect(aggregateExplicit(items, [v('a', true)], opts()).status).toBe('incomplete');
  });

  it('not-applicable criteria leave numerator and denominator alone', () => {
    const items = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 0.7 },
      { id: 'c', weight: 0.3 },
    ];
    const s = aggregateExplicit(items, [v('a', true), v('b', null, 'not-applicable'), v('c', false)], opts());
    expect(s.score).toBeCloseTo(1 / 1.3, 12);
    expect(s.notApplicable).toEqual(['b']);
  });

  it('a rubric of pitfalls only has no positive weight: null with positive normalisation, a score with Σ|w|', () => {
    const items = [{ id: 'p', weight: -2 }];
    expect(aggregateExplicit(items, [v('p', false)], opts())).toMatchObject({
      score: null,
      status: 'no-positive-weight',
    });
    expect(aggregateExplicit(items, [v('p', false)], opts({ normalization: 'absolute' })).score).toBe(0);
    expect(aggregateExplicit(items, [v('p', true)], opts({ normalization: 'absolute', clip: false })).score).toBe(-1);
  });
});

describe('implicit and Likert scores', () => {
  it('maps s in 1..10 to (s − 1) / 9', () => {
    expect(scaleToUnit(1)).toBe(0);
    expect(scaleToUnit(10)).toBe(1);
    expect(scaleToUnit(7)).toBeCloseTo(6 / 9, 12);
    for (const bad of [0, 11, 7.5, Number.NaN])
      expect(() => scaleToUnit(bad)).toThrow(/a judge score must be an integer in 1..10/);
  });
});

describe('weightings', () => {
  it("re-weighting keeps each pitfall's sign (its phrasing) and takes magnitudes from the table", () => {
    const rar = validateRubric({
      id: 'r',
      items: [
        { id: 'e', title: 'e', category: 'essential', weight: 5 },
        { id: 'fault', title: 'Does not mention X', category: 'pitfall', weight: -1 },
        { id: 'avoid', title: 'Avoids Y', category: 'pitfall', weight: 0.9 },
      ],
    });
    expect(applyWeighting(rar, 'paper').items.map((i) => i.weight)).toEqual([1, -0.9, 0.9]);
    expect(applyWeighting(rar, 'rar-integers').items.map((i) => i.weight)).toEqual([5, -2, 2]);
    expect(WEIGHTINGS.paper).toEqual({ essential: 1, important: 0.7, optional: 0.3, pitfall: 0.9 });
  });

  it('re-aggregation with other weights uses the stored verdicts only', async () => {
    const r = rubricWith('paper');
    const scores = await scoreSample(
      {
        ...r,
        items: r.items.map((i) => ({
          ...i,
          check: {
            kind: 'regex' as const,
            pattern: i.id === 'important' ? 'nope' : '.',
            flags: '',
            target: 'completion' as const,
          },
        })),
      },
      { question: 'q', completion: 'text' },
      { aggregations: ['explicit'] },
    );
    expect(scores.explicit!.score).toBeCloseTo(2.2 / 2.9, 12);
    const ints = applyWeighting(r, 'rar-integers'); // 5, 4, 2, 2 (the avoidance pitfall stays positive)
    const again = reaggregate(scores, ints.items, opts());
    expect(again.explicit!.score).toBeCloseTo((5 + 2 + 2) / 13, 12);
    expect(again.weights).toEqual({ essential: 5, important: 4, optional: 2, pitfall: 2 });
  });

  it('the run summary counts samples without a score apart instead of as 0', async () => {
    const r = validateRubric({ id: 'x', items: [{ title: 't', category: 'essential' }] });
    const judged = await scoreSample(r, { question: 'q', completion: 'c' }); // no judge: skipped
    const summary = summarizeRubricScores([judged]);
    expect(summary.explicit).toEqual({ n: 0, missing: 1, mean: null });
    expect(summary.verdicts.skipped).toBe(1);
    expect(summary.implicitStatus.skipped).toBe(1);
  });
});
