/** Buckets and their precedence, question dynamics across steps (absent steps skipped), and each warning rule with its start step. */
import { describe, expect, it } from 'vitest';
import type { SampleRecord } from '../../../src/core/run/types.ts';
import {
  bucketOf,
  questionDynamics,
  seriesWarnings,
  type DynamicsSample,
  type StepStats,
} from '../../../src/core/series/stats.ts';

describe('bucketOf: unstable > always > never > learned > forgotten', () => {
  it.each([
    [[true, false, true, false], 'unstable', 3],
    [[true, true, true], 'always', 0],
    [[false, false], 'never', 0],
    [[false, true, true], 'learned', 1],
    [[true, false, true], 'learned', 2],
    [[true, true, false], 'forgotten', 1],
    [[false, true, false, true], 'unstable', 3],
    [[true], 'always', 0],
  ] as Array<[boolean[], string, number]>)('%j -> %s (%i flips)', (verdicts, bucket, flips) => {
    expect(bucketOf(verdicts)).toEqual({ bucket, flips });
  });
});

const sample = (index: number, sampleNo: number, ex: 0 | 1, status: SampleRecord['status'] = 'ok') =>
  ({
    index,
    questionId: 1000 + index,
    dbId: 'db',
    difficulty: 'simple',
    sample: sampleNo,
    ex,
    status,
    unearned: null,
  }) as SampleRecord & DynamicsSample;

describe('questionDynamics', () => {
  it('majority verdict is pass rate > 1/2; a step that did not score the question is skipped, not a flip', () => {
    const steps = [
      { step: 10, samples: [sample(0, 0, 1), sample(0, 1, 0), sample(1, 0, 0), sample(1, 1, 0)] },
      {
        step: 20,
        samples: [sample(0, 0, 1), sample(0, 1, 1), sample(1, 0, 0, 'missing-db'), sample(1, 1, 0, 'missing-db')],
      },
      { step: 30, samples: [sample(0, 0, 1), sample(0, 1, 1), sample(1, 0, 1), sample(1, 1, 1)] },
    ];
    const [q0, q1] = questionDynamics(steps);
    expect(q0).toMatchObject({
      questionId: 1000,
      passRates: [0.5, 1, 1],
      verdicts: [false, true, true],
      bucket: 'learned',
      flips: 1,
      firstSolvedStep: 20,
      lastSolvedStep: 30,
    });
    expect(q1).toMatchObject({
      questionId: 1001,
      passRates: [0, null, 1],
      verdicts: [false, null, true],
      bucket: 'learned',
      flips: 1,
      firstSolvedStep: 30,
    });
  });
});

function stats(step: number, over: Partial<StepStats>): StepStats {
  return {
    step,
    wallTime: null,
    wallTimeSource: null,
    questions: 100,
    samples: 200,
    nMin: 2,
    nMax: 2,
    ex: 50,
    exCiLow: 45,
    exCiHigh: 55,
    earned: 50,
    unearned: { write: 0, constant: 0, 'ex-only': 0, 'empty-result': 0 },
    ts: null,
    passAt1: 50,
    passAtN: 60,
    passHatN: 40,
    majAtN: 50,
    allRight: 40,
    allWrong: 40,
    mixed: 20,
    zeroVariance: 80,
    resultGroups: 2,
    completionChars: 100,
    extractionFailures: 0,
    errors: 0,
    timeouts: 0,
    writes: 0,
    exOnly: null,
    emptyResultPasses: 0,
    trainerReward: 0.5,
    trainerScored: null,
    trainerRightExWrong: null,
    trainerWrongExRight: null,
    ...over,
  };
}

describe('seriesWarnings', () => {
  it('starts each warning at the first step of the trailing run where its rule holds', () => {
    const steps = [
      stats(1, { emptyResultPasses: 2, writes: 0, exOnly: 0, ts: 40 }),
      stats(2, { emptyResultPasses: 10, writes: 3, exOnly: 5, ts: 40 }), // empty +4 pts, writes +1.5 pts, EX-only +2.5 pts
      stats(3, { emptyResultPasses: 3, writes: 3, exOnly: 9, ts: 40 }), // empty back to +0.5: the run restarts
      stats(4, { emptyResultPasses: 8, writes: 4, exOnly: 9, ts: 40 }),
    ];
    const w = seriesWarnings(steps);
    expect(w.map((x) => [x.rule, x.startStep])).toEqual([
      ['ex-only-rising', 2],
      ['empty-result-rising', 4],
      ['writes-rising', 2],
    ]);
    expect(w[1]!.message).toContain('from 1.00% of samples at step 1 to 4.00% at step 4');
  });

  it('no warning when the last step is back under the threshold', () => {
    expect(seriesWarnings([stats(1, {}), stats(2, { writes: 10 }), stats(3, { writes: 1 })])).toEqual([]);
  });

  it('trainer reward rising while EX is flat (or falling); not when EX rises with it', () => {
    const flat = seriesWarnings([
      stats(1, {}),
      stats(2, { trainerReward: 0.52 }),
      stats(3, { trainerReward: 0.6, ex: 50.5 }),
      stats(4, { trainerReward: 0.7, ex: 45 }),
    ]);
    expect(flat.map((x) => [x.rule, x.startStep])).toEqual([['reward-without-ex', 3]]);
    expect(seriesWarnings([stats(1, {}), stats(2, { trainerReward: 0.7, ex: 60 })])).toEqual([]);
  });

  it("diversity collapsing: mean result groups at most 3/4 of the first step's; steps with one sample are not judged", () => {
    const w = seriesWarnings([
      stats(1, { resultGroups: 3 }),
      stats(2, { resultGroups: 2.5 }),
      stats(3, { resultGroups: 2.2 }),
      stats(4, { nMin: 1, resultGroups: 1 }),
      stats(5, { resultGroups: 1.5 }),
    ]);
    expect(w.map((x) => [x.rule, x.startStep])).toEqual([['diversity-collapse', 3]]);
    expect(seriesWarnings([stats(1, { nMin: 1, resultGroups: 1 }), stats(2, { nMin: 1, resultGroups: 0.5 })])).toEqual(
      [],
    );
  });
});
