import { describe, expect, it } from 'vitest';
import { samplesNote } from '../../../src/core/eval/report.ts';
import { samplesPerQuestion, summarize, summaryTotal } from '../../../src/core/eval/summary.ts';
import { vesReward } from '../../../src/core/compare/r-ves.ts';
import { question, sample, verdicts } from '../rl/fixtures.ts';

describe('the one run summary, with one and with several samples per question', () => {
  it('is the official per-item summary with one sample per question: count = samples = items', () => {
    const results = verdicts([1, 0, 1]);
    const s = summarize(results, ['ex', 'soft-f1']);
    expect(s.byDifficulty.total).toMatchObject({ count: 3, samples: 3, ex: ((1 + 0 + 1) / 3) * 100 });
    expect(s.samplesPerQuestion).toEqual({ min: 1, max: 1, questions: 3 });
    expect(samplesNote(s)).toBeNull();
  });

  it('averages each question over its samples, then over questions, and counts both questions and samples', () => {
    const spec = (s: string) => [...s].map((c) => (c === '.' ? null : c));
    // question 0: 2 of 2 right; question 1: 1 of 4 right (one failed); mean of means = (1 + 0.25) / 2
    const results = [
      ...question(0, spec('RR')),
      ...question(1, spec('RAA.'), { difficulty: 'moderate' }),
      sample({ index: 2, sample: 0, status: 'missing-db' }),
    ];
    const s = summarize(results, ['ex']);
    expect(s.byDifficulty.total).toMatchObject({ count: 2, samples: 6, ex: 62.5, softF1: null, errors: 1 });
    expect(s.byDifficulty.simple).toMatchObject({ count: 1, samples: 2, ex: 100 });
    expect(s.byDifficulty.moderate).toMatchObject({ count: 1, samples: 4, ex: 25 });
    expect(s.byDb.db).toMatchObject({ count: 2, ex: 62.5 });
    expect(s.missingDbs).toEqual({ db: 1 });
    // The total alone (a series' steps) is the summary's, with one sample per question and with several.
    expect(summaryTotal(results, ['ex', 'ts'])).toEqual(summarize(results, ['ex', 'ts']).byDifficulty.total);
    const single = verdicts([1, 0, 1, 1]);
    expect(summaryTotal(single, ['ex', 'soft-f1'])).toEqual(summarize(single, ['ex', 'soft-f1']).byDifficulty.total);
    expect(samplesPerQuestion(results)).toEqual({ min: 2, max: 4, questions: 2 });
    expect(samplesNote(s)).toMatch(
      /^n = 2 to 4 samples per question \(7 samples\): .* averaged over the 2 questions; count = questions\.$/,
    );
  });

  it('finds the smallest and largest n over 300,000 samples without spreading them into arguments', () => {
    const results = Array.from({ length: 300_000 }, (_, i) =>
      sample({ index: Math.floor(i / 3), sample: i % 3, status: 'ok' }),
    );
    expect(samplesPerQuestion(results)).toEqual({ min: 3, max: 3, questions: 100_000 });
  });

  it('R-VES leaves out the correct samples that could not be timed and counts them apart, never as reward 0', () => {
    const timed = (index: number, rves: number) => sample({ index, sample: 0, ex: 1, rves });
    const notTimed = (index: number, s = 0) =>
      sample({ index, sample: s, ex: 1, rves: null, rvesNotTimed: 'the clock did not move' });
    // One sample each: (sqrt(1) + sqrt(0.25) + 0) / 3 over the three timed items; item 3 is left out.
    const one = summarize(
      [timed(0, 1), timed(1, 0.25), sample({ index: 2, sample: 0, ex: 0, rves: 0 }), notTimed(3)],
      ['ex', 'r-ves'],
    );
    expect(one.byDifficulty.total.rves).toBeCloseTo(((1 + 0.5 + 0) / 3) * 100, 12);
    expect(one.byDifficulty.total.rvesNotTimed).toBe(1);
    expect(one.byDifficulty.total.ex).toBe(100 * (3 / 4));
    // Several samples: a question averages its timed samples; one with none timed is left out.
    const many = summarize(
      [
        { ...timed(0, 1), sample: 0 },
        { ...notTimed(0, 1) },
        { ...notTimed(1, 0) },
        { ...notTimed(1, 1) },
        { ...timed(2, 0.25), sample: 0 },
        { ...timed(2, 1), sample: 1 },
      ],
      ['ex', 'r-ves'],
    );
    expect(many.byDifficulty.total.rves).toBeCloseTo(((1 + (0.5 + 1) / 2) / 2) * 100, 12);
    expect(many.byDifficulty.total.rvesNotTimed).toBe(3);
    // Without r-ves there is nothing to count.
    expect(summarize([notTimed(0)], ['ex']).byDifficulty.total.rvesNotTimed).toBeUndefined();
  });

  it('R-VES says how far a rerun moves it: samples timed near a reward step are coin flips, weighed as in the mean', () => {
    const correct = (index: number, timeRatio: number, s = 0, dbId = 'db') =>
      sample({ index, sample: s, ex: 1, rves: vesReward(timeRatio), timeRatio, dbId });
    const flip1 = 1 - Math.sqrt(0.75); // sqrt(reward) either side of the step at ratio 1
    const flip2 = Math.sqrt(1.25) - 1; // at ratio 2
    // Four items: 1.01 and 0.985 sit within 2 % of the step at 1, 1.97 of the step at 2; 1.5 is far from any.
    const one = summarize(
      [
        correct(0, 1.01),
        correct(1, 0.985, 0, 'other'),
        correct(2, 1.97),
        correct(3, 1.5),
        sample({ index: 4, sample: 0, ex: 0, rves: 0, timeRatio: null }),
      ],
      ['ex', 'r-ves'],
    );
    const t = one.byDifficulty.total;
    expect({ timed: t.rvesTimed, near: t.rvesNearStep }).toEqual({ timed: 4, near: 3 });
    // Var(mean of 5) = sum(flip^2 / 4) / 5^2; sd in points.
    expect(t.rvesSd).toBeCloseTo((Math.sqrt((2 * flip1 ** 2 + flip2 ** 2) / 4) / 5) * 100, 12);
    expect(one.byDb.other!.rvesSd).toBeCloseTo((Math.sqrt(flip1 ** 2 / 4) / 1) * 100, 12);
    // Nothing near a step: no spread. An incorrect item at ratio 1 (none is ever timed) is no flip either.
    const far = summarize(
      [correct(0, 1.5), sample({ index: 1, sample: 0, ex: 0, rves: 0, timeRatio: 1 })],
      ['ex', 'r-ves'],
    );
    expect(far.byDifficulty.total).toMatchObject({ rvesTimed: 1, rvesNearStep: 0, rvesSd: 0 });
    // Several samples: a question averages its samples, so each flip weighs 1 / (its question's timed samples).
    const many = summarize([correct(0, 1.0, 0), correct(0, 1.5, 1), correct(1, 1.0, 0)], ['ex', 'r-ves']);
    expect(many.byDifficulty.total.rvesSd).toBeCloseTo((Math.sqrt(flip1 ** 2 / 4 / 4 + flip1 ** 2 / 4) / 2) * 100, 12);
    expect(many.byDifficulty.total).toMatchObject({ rvesTimed: 3, rvesNearStep: 2 });
    // Without r-ves there is no spread.
    expect(summarize([correct(0, 1)], ['ex']).byDifficulty.total.rvesSd).toBeUndefined();
  });

  it('a missing database is counted in questions and in samples (one unit per column)', () => {
    const s = summarize(
      [
        sample({ index: 0, sample: 0, status: 'ok' }),
        sample({ index: 5, sample: 0, status: 'missing-db', dbId: 'gone' }),
        sample({ index: 5, sample: 1, status: 'missing-db', dbId: 'gone' }),
        sample({ index: 6, sample: 0, status: 'missing-db', dbId: 'gone' }),
      ],
      ['ex'],
    );
    expect(s.missingDbs).toEqual({ gone: 3 });
    expect(s.missingDbQuestions).toEqual({ gone: 2 });
  });
});
