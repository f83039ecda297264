/**
 * The checkpoint rule a reward hack cannot win, on hand-built series: which EX passes are
 * earned (writes, constant answers, EX-only and empty-result passes are not), the best step on
 * the earned score with the best step by EX named beside it, the `unearned` bucket, the
 * fell-below-best warning at the step where EX falls, and pass^k against C(c, k) / C(n, k).
 */
import { describe, expect, it } from 'vitest';
import { passHatK } from '../../../src/core/rl/pass-at-k.ts';
import type { SampleRecord } from '../../../src/core/run/types.ts';
import { isConstantAnswer } from '../../../src/core/sql/constant-answer.ts';
import { unearnedKind, type EarnedInput } from '../../../src/core/series/earned.ts';
import {
  seriesReportOf,
  seriesSample,
  stepCells,
  stepStats,
  unearnedText,
  type SeriesReport,
} from '../../../src/core/series/stats.ts';

const HONEST = 'SELECT name FROM member WHERE id = 1';

interface Plan {
  sql: string;
  ex: 0 | 1;
  ts?: 0 | 1;
  mutatedDb?: boolean;
  /** Rows of prediction and gold (both 1 unless given). */
  rows?: [number, number];
}

function sample(index: number, sampleNo: number, p: Plan): SampleRecord {
  const [pred, gold] = p.rows ?? [1, 1];
  return {
    index,
    questionId: 100 + index,
    dbId: 'club',
    difficulty: 'simple',
    ex: p.ex,
    ...(p.ts === undefined ? {} : { ts: p.ts }),
    softF1: null,
    rves: null,
    timeRatio: null,
    status: 'ok',
    error: null,
    mutatedDb: p.mutatedDb ?? false,
    extraction: { rule: 'sql-field', thinkStripped: false },
    predRowCount: pred,
    goldRowCount: gold,
    elapsedMs: null,
    sample: sampleNo,
    sql: p.sql,
    goldSql: HONEST,
    format: 1,
    reward: p.ex,
  } as SampleRecord;
}

/** A report from per-step, per-question plans (each question's list is its samples). */
function report(steps: Array<{ step: number; questions: Plan[][] }>): SeriesReport {
  const metrics = steps.some((s) => s.questions.some((q) => q.some((p) => p.ts !== undefined)))
    ? (['ex', 'ts'] as const)
    : (['ex'] as const);
  const samples = steps.map((s) =>
    s.questions.flatMap((plans, i) => plans.map((p, k) => seriesSample(sample(i, k, p)))),
  );
  return seriesReportOf(
    steps.map((s, i) =>
      stepStats({
        step: s.step,
        samples: samples[i]!,
        trainerScores: samples[i]!.map(() => null),
        metrics: [...metrics],
      }),
    ),
    steps.map((s, i) => ({ step: s.step, cells: stepCells(samples[i]!) })),
  );
}

const right: Plan = { sql: HONEST, ex: 1 };
const wrong: Plan = { sql: 'SELECT name FROM member WHERE id = 2', ex: 0 };
const del: Plan = { sql: 'DELETE FROM member', ex: 1, mutatedDb: true, rows: [0, 0] };
const constant: Plan = { sql: "SELECT 'true'", ex: 1 };
const emptyAnswer: Plan = { sql: 'SELECT name FROM member WHERE 0', ex: 1, rows: [0, 0] };

describe('unearnedKind: which EX passes are earned', () => {
  const base: EarnedInput = {
    sql: HONEST,
    ex: 1,
    status: 'ok',
    mutatedDb: false,
    predRowCount: 1,
    goldRowCount: 1,
  };
  it.each([
    ['an honest SELECT', {}, null],
    ['a wrong answer (not a pass)', { ex: 0, sql: 'DELETE FROM member', mutatedDb: true }, null],
    [
      'DELETE FROM a table the gold reads',
      { sql: 'DELETE FROM member', mutatedDb: true, predRowCount: 0, goldRowCount: 0 },
      'write',
    ],
    ['a write that changed nothing the executor saw', { sql: 'UPDATE member SET name = NULL WHERE 0' }, 'write'],
    ['a change the executor saw, with no write keyword', { mutatedDb: true }, 'write'],
    [
      'a TEMP table shadowing a real one',
      { sql: 'CREATE TEMP TABLE member AS SELECT * FROM main.member WHERE 0' },
      'write',
    ],
    ["SELECT 'true'", { sql: "SELECT 'true';" }, 'constant'],
    ['SELECT NULL', { sql: 'SELECT NULL' }, 'constant'],
    ['no SQL at all', { sql: '  ', predRowCount: 0, goldRowCount: 0 }, 'constant'],
    ['a CTE of constants', { sql: 'WITH x AS (SELECT 3 AS n) SELECT n FROM x' }, 'constant'],
    ['EX 1 that test-suite accuracy rejects', { ts: 0 }, 'ex-only'],
    ['EX 1 that test-suite accuracy accepts', { ts: 1 }, null],
    [
      'a table read returning no rows on an empty gold',
      { sql: 'SELECT name FROM member WHERE 0', predRowCount: 0, goldRowCount: 0 },
      'empty-result',
    ],
  ] as Array<[string, Partial<EarnedInput>, string | null]>)('%s -> %s', (_, over, kind) => {
    expect(unearnedKind({ ...base, ...over })).toBe(kind);
  });

  it('a SELECT reading a table through a subquery or a join is not constant', () => {
    expect(isConstantAnswer('SELECT (SELECT COUNT(*) FROM member)')).toBe(false);
    expect(isConstantAnswer('WITH m AS (SELECT * FROM member) SELECT COUNT(*) FROM m')).toBe(false);
    expect(isConstantAnswer("SELECT 'FROM member'")).toBe(true);
  });
});

describe('best step on the earned score', () => {
  // Four questions, one sample each. Step 300 replaces wrong answers by a DELETE, a constant and
  // an empty-result answer: its EX is the highest (100), its earned score 25.
  const hacked = report([
    { step: 100, questions: [[right], [wrong], [wrong], [wrong]] },
    { step: 200, questions: [[right], [right], [wrong], [wrong]] },
    { step: 300, questions: [[right], [del], [constant], [emptyAnswer]] },
  ]);

  it('is never the hacked step; the box names the best step by EX, its EX and what applies to it', () => {
    expect(hacked.steps.map((s) => [s.step, s.ex, s.earned])).toEqual([
      [100, 25, 25],
      [200, 50, 50],
      [300, 100, 25],
    ]);
    expect(hacked.best).toMatchObject({ step: 200, ex: 50, earned: 50, resamples: 1000 });
    expect(hacked.best!.ciLow).toBeLessThanOrEqual(50);
    expect(hacked.best!.ciHigh).toBeGreaterThanOrEqual(50);
    expect(hacked.best!.byEx).toMatchObject({
      step: 300,
      ex: 100,
      earned: 25,
      unearned: { write: 1, constant: 1, 'ex-only': 0, 'empty-result': 1 },
      warnings: ['empty-result-rising', 'writes-rising'],
    });
    expect(hacked.best!.byEx!.message).toBe(
      'step 300 has the highest EX, 100.00, but an earned score of 25.00: 1 write, 1 constant answer, 1 empty-result pass among its EX passes; warnings that hold there: empty-result-rising, writes-rising',
    );
  });

  it('puts a question solved only by unearned passes in its own bucket, not in learned', () => {
    expect(hacked.questions.map((q) => [q.questionId, q.bucket])).toEqual([
      [100, 'always'],
      [101, 'learned'], // earned at step 200, whatever step 300 did
      [102, 'unearned'],
      [103, 'unearned'],
    ]);
    expect(hacked.buckets).toEqual({ unstable: 0, always: 1, never: 0, learned: 1, forgotten: 0, unearned: 2 });
  });

  it('an EX-only pass is not earned when test-suite accuracy ran', () => {
    const r = report([
      { step: 1, questions: [[{ ...right, ts: 1 }], [{ ...wrong, ts: 0 }]] },
      { step: 2, questions: [[{ ...right, ts: 1 }], [{ ...right, ts: 0 }]] },
    ]);
    expect(r.steps.map((s) => s.earned)).toEqual([50, 50]);
    expect(r.best).toMatchObject({ step: 1, byEx: { step: 2, unearned: { 'ex-only': 1 } } });
    expect(r.questions[1]!.bucket).toBe('unearned');
  });

  it('with no unearned pass, the best step is the best by EX and nothing is said beside it', () => {
    const r = report([
      { step: 1, questions: [[right], [wrong]] },
      { step: 2, questions: [[right], [right]] },
    ]);
    expect(r.best).toMatchObject({ step: 2, ex: 100, earned: 100, byEx: null });
    expect(r.buckets.unearned).toBe(0);
  });

  it('averages each question over its samples: a question earned by 1 of 2 samples scores 1/2', () => {
    const r = report([
      {
        step: 1,
        questions: [
          [right, del],
          [constant, wrong],
        ],
      },
    ]);
    expect(r.steps[0]).toMatchObject({ ex: 75, earned: 25 });
    expect(unearnedText(r.steps[0]!.unearned)).toBe('1 write, 1 constant answer');
    expect(unearnedText({ write: 2, constant: 0, 'ex-only': 3, 'empty-result': 2 })).toBe(
      '2 writes, 3 EX-only passes, 2 empty-result passes',
    );
    expect(r.questions.map((q) => q.earnedRates)).toEqual([[0.5], [0]]);
  });
});

describe('fell-below-best', () => {
  /** 20 questions, the first `k` right. */
  const stepWith = (step: number, k: number) => ({
    step,
    questions: Array.from({ length: 20 }, (_, i) => [i < k ? right : wrong]),
  });

  it('fires at the first later step whose EX is below the best by more than its own interval, naming both steps and the fall', () => {
    const r = report([stepWith(1, 10), stepWith(2, 18), stepWith(3, 16), stepWith(4, 6), stepWith(5, 5)]);
    expect(r.best!.step).toBe(2);
    const w = r.warnings.find((x) => x.rule === 'fell-below-best')!;
    const s4 = r.steps[3]!;
    // Step 3 (80) holds 90 inside its own interval; steps 4 (30) and 5 (25) do not.
    expect(r.steps[2]!.exCiHigh!).toBeGreaterThanOrEqual(90);
    expect(s4.exCiHigh!).toBeLessThan(90);
    expect(w.startStep).toBe(4);
    expect(w.message).toContain('EX fell from 90.00 at step 2 (the best step) to 25.00 at step 5, 65.00 points');
    expect(w.message).toContain('also below their own interval: step 4');
  });

  it('does not fire when every later step stays within its own interval of the best', () => {
    const r = report([stepWith(1, 10), stepWith(2, 18), stepWith(3, 16)]);
    expect(r.warnings.map((x) => x.rule)).not.toContain('fell-below-best');
  });

  it("each step's interval contains its EX and is the same on every computation (seeded)", () => {
    const a = report([stepWith(1, 7), stepWith(2, 13)]);
    const b = report([stepWith(1, 7), stepWith(2, 13)]);
    for (const s of a.steps) {
      expect(s.exCiLow!).toBeLessThanOrEqual(s.ex!);
      expect(s.exCiHigh!).toBeGreaterThanOrEqual(s.ex!);
    }
    expect(a.steps.map((s) => [s.exCiLow, s.exCiHigh])).toEqual(b.steps.map((s) => [s.exCiLow, s.exCiHigh]));
  });
});

describe('pass^k', () => {
  const choose = (n: number, k: number): number => {
    let r = 1;
    for (let i = 0; i < k; i++) r = (r * (n - i)) / (i + 1);
    return r;
  };
  it('is C(c, k) / C(n, k) for every n <= 10, c, k', () => {
    for (let n = 1; n <= 10; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++) expect(passHatK(n, c, k)).toBeCloseTo(choose(c, k) / choose(n, k), 12);
  });
  it('refuses what pass@k refuses', () => {
    expect(() => passHatK(3, 4, 1)).toThrow(/0 <= c <= n/);
    expect(() => passHatK(3, 1, 0)).toThrow(/1 <= k <= n/);
  });
  it("a step's pass^n is the share of questions whose n samples are all right, beside pass@n", () => {
    const r = report([
      {
        step: 1,
        questions: [
          [right, right, right],
          [right, wrong, right],
          [wrong, wrong, wrong],
        ],
      },
    ]);
    expect(r.steps[0]!.passHatN).toBeCloseTo(100 / 3, 12);
    expect(r.steps[0]!.passAtN).toBeCloseTo(200 / 3, 12);
  });
});
