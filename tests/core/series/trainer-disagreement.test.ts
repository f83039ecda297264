/**
 * The trainer against us: when the trainer's own score of a sample says right (score >= the
 * trainer's pass threshold, 1) and our EX says wrong, or the reverse; the per-step counts
 * `stepStats` keeps, and the warning when a step's disagreements pass their share.
 */
import { describe, expect, it } from 'vitest';
import type { SampleRecord } from '../../../src/core/run/types.ts';
import {
  seriesWarnings,
  stepStats,
  trainerDiverges,
  WARNING_THRESHOLDS,
  type StepStats,
} from '../../../src/core/series/stats.ts';
import { TRAINER_PASS_THRESHOLD, trainerDisagreement } from '../../../src/core/eval/trainer-verdict.ts';

const sample = (index: number, ex: 0 | 1, status: SampleRecord['status'] = 'ok') =>
  ({
    index,
    questionId: 1000 + index,
    dbId: 'db',
    difficulty: 'simple',
    sample: 0,
    ex,
    softF1: ex,
    status,
    mutatedDb: false,
    goldRowCount: 1,
    predRowCount: 1,
    extraction: { rule: 'sql-fence' },
    chars: 10,
    format: 'verl',
  }) as unknown as Parameters<typeof stepStats>[0]['samples'][number];

describe('trainerDisagreement: the trainer passes a sample scored >= 1', () => {
  it('is 1 (a binary reward’s right answer)', () => {
    expect(TRAINER_PASS_THRESHOLD).toBe(1);
  });
  it.each([
    [1, 1, null],
    [0, 0, null],
    [1, 0, 'trainer-right'],
    [0, 1, 'trainer-wrong'],
    // Partial credit below full is no pass; a format bonus above 1 still is.
    [0.9, 1, 'trainer-wrong'],
    [0.9, 0, null],
    [1.1, 0, 'trainer-right'],
    [1.1, 1, null],
    // A negative reward for a wrong answer (-1 / 1 rewards).
    [-1, 1, 'trainer-wrong'],
    [-1, 0, null],
  ] as Array<[number, 0 | 1, string | null]>)('score %d, EX %d -> %s', (score, ex, want) => {
    expect(trainerDisagreement(score, { ex, status: 'ok' })).toBe(want);
  });
  it('has nothing to say without a score, or for a sample we did not score (database missing)', () => {
    expect(trainerDisagreement(null, { ex: 1, status: 'ok' })).toBeNull();
    expect(trainerDisagreement(undefined, { ex: 0, status: 'ok' })).toBeNull();
    expect(trainerDisagreement(Number.NaN, { ex: 1, status: 'ok' })).toBeNull();
    expect(trainerDisagreement(1, { ex: 0, status: 'missing-db' })).toBeNull();
  });
  it('an error or a timeout is EX 0: the trainer passing it disagrees with us', () => {
    expect(trainerDisagreement(1, { ex: 0, status: 'error' })).toBe('trainer-right');
    expect(trainerDisagreement(1, { ex: 0, status: 'timeout' })).toBe('trainer-right');
  });
});

describe('stepStats counts the disagreements of a step', () => {
  it('each way, over the scored samples with a trainer score', () => {
    const samples = [
      sample(0, 1), // trainer 0: trainer-wrong
      sample(1, 1), // trainer 1: agree
      sample(2, 0), // trainer 1: trainer-right
      sample(3, 0), // trainer null: not counted
      sample(4, 1), // trainer 0: trainer-wrong
      sample(5, 0, 'missing-db'), // trainer 1 but not scored by us: not counted
      sample(6, 1), // trainer 0.5: trainer-wrong
    ];
    const s = stepStats({ step: 100, samples, trainerScores: [0, 1, 1, null, 0, 1, 0.5], metrics: ['ex'] });
    expect([s.trainerScored, s.trainerRightExWrong, s.trainerWrongExRight]).toEqual([5, 1, 3]);
  });
  it('are null when no sample has a trainer score (BIRD prediction files)', () => {
    const s = stepStats({
      step: 1,
      samples: [sample(0, 1), sample(1, 0)],
      trainerScores: [null, null],
      metrics: ['ex'],
    });
    expect([s.trainerScored, s.trainerRightExWrong, s.trainerWrongExRight]).toEqual([null, null, null]);
  });
});

const counts = (step: number, scored: number | null, right: number | null, wrong: number | null) =>
  ({
    step,
    questions: 100,
    samples: 1000,
    ex: 50,
    ts: null,
    nMin: 1,
    resultGroups: 1,
    exOnly: null,
    emptyResultPasses: 0,
    writes: 0,
    trainerReward: null,
    trainerScored: scored,
    trainerRightExWrong: right,
    trainerWrongExRight: wrong,
  }) as StepStats;

describe(`the trainer-disagrees warning: above ${WARNING_THRESHOLDS.trainerDisagreeShare}% of a step's scored samples`, () => {
  it('holds at a step above the share, not at one at it, and names every step above it', () => {
    // 5 of 1000 is 0.5%: at the share, no warning; 6 of 1000 is above.
    expect(trainerDiverges(counts(1, 1000, 2, 3))).toBe(false);
    expect(trainerDiverges(counts(1, 1000, 3, 3))).toBe(true);
    expect(trainerDiverges(counts(1, null, null, null))).toBe(false);
    // The reference case: 3 of 496 samples the trainer scored 0 and we scored 1 (0.6%).
    expect(trainerDiverges(counts(1, 496, 0, 3))).toBe(true);
    const w = seriesWarnings([
      counts(100, 1000, 0, 1),
      counts(200, 496, 0, 3),
      counts(300, 1000, 0, 0),
      counts(400, 200, 2, 0),
    ]);
    expect(w.map((x) => [x.rule, x.startStep])).toEqual([['trainer-disagrees', 200]]);
    expect(w[0]!.message).toContain('steps 200 (0 the trainer passed and EX failed, 3 the reverse, of 496), 400 (2');
  });
  it('is not raised when the trainer and EX agree everywhere, or when no step has trainer scores', () => {
    expect(seriesWarnings([counts(1, 100, 0, 0), counts(2, 100, 0, 0)])).toEqual([]);
    expect(seriesWarnings([counts(1, null, null, null), counts(2, null, null, null)])).toEqual([]);
  });
});
