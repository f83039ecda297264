import { describe, expect, it } from 'vitest';
import { DEFAULT_QUERY, isUnscored, ItemIndex, type ExplorerRow } from '../../../src/core/views/item-query.ts';
import type { SampleRecord } from '../../../src/core/run/types.ts';
import { sampleRecord } from '../../helpers/run-records.ts';

function sample(index: number, patch: Partial<SampleRecord>): SampleRecord {
  return sampleRecord({
    index,
    sample: 0,
    questionId: 100 + index,
    ex: 1,
    softF1: 1,
    reward: 1,
    extraction: { rule: 'bird-separator', thinkStripped: false },
    ...patch,
  });
}

const rows: ExplorerRow[] = [
  {
    sample: sample(0, {}),
    question: {
      questionId: 100,
      dbId: 'db',
      question: 'How many heroes?',
      evidence: '',
      goldSql: '',
      difficulty: 'simple',
    },
  },
  { sample: sample(1, { ex: 0, softF1: 0.5, dbId: 'zoo', difficulty: 'moderate', elapsedMs: 9 }), question: null },
  { sample: sample(2, { ex: 0, status: 'error', error: 'no such column: Nme', softF1: 0 }), question: null },
  { sample: sample(3, { ex: 0, status: 'timeout', softF1: 0, elapsedMs: null }), question: null },
  { sample: sample(4, { ex: 1, mutatedDb: true, sql: 'DELETE FROM t' }), question: null },
  { sample: sample(5, { ex: 0, status: 'missing-db', softF1: 0 }), question: null },
];
const index = new ItemIndex(rows);
const ids = (q: Partial<typeof DEFAULT_QUERY>) => index.query({ ...DEFAULT_QUERY, ...q }).map((r) => r.sample.index);

describe('ItemIndex.query', () => {
  it.each([
    ['all', [0, 1, 2, 3, 4, 5]],
    ['right', [0, 4]],
    ['wrong', [1, 2, 3]],
    ['wrong-result', [1]],
    ['error', [2]],
    ['timeout', [3]],
    ['modified', [4]],
    ['missing-db', [5]],
  ] as const)('outcome %s keeps %j', (outcome, expected) => {
    expect(ids({ outcome })).toEqual(expected);
  });
  it('"R-VES timed near a reward step" keeps the correct, timed samples within 2 % of a step, and only them', () => {
    const timed = (i: number, patch: Partial<SampleRecord>) => ({
      sample: sample(i, { rves: 1, timeRatio: 1.5, ...patch }),
      question: null,
    });
    const near = new ItemIndex([
      timed(0, { timeRatio: 1.004 }),
      timed(1, { timeRatio: 0.99, rves: 0.75 }),
      timed(2, {}),
      timed(3, { ex: 0, rves: 0, timeRatio: 1 }),
      timed(4, { rves: null, timeRatio: null, rvesNotTimed: 'the clock did not move' }),
      timed(5, { timeRatio: 2.01, rves: 1.25 }),
      timed(6, { rves: null, timeRatio: 1 }),
    ]);
    expect(near.query({ ...DEFAULT_QUERY, outcome: 'rves-near-step' }).map((r) => r.sample.index)).toEqual([0, 1, 5]);
  });
  it('filters by difficulty and database', () => {
    expect(ids({ difficulty: 'moderate' })).toEqual([1]);
    expect(ids({ dbId: 'db', outcome: 'wrong' })).toEqual([2, 3]);
  });
  it('never counts an unscored sample (database not imported) as wrong, whatever its stored EX', () => {
    const unscored = rows.filter((r) => isUnscored(r.sample)).map((r) => r.sample.index);
    expect(unscored).toEqual([5]);
    for (const outcome of ['wrong', 'wrong-result', 'error', 'timeout', 'right'] as const)
      expect(ids({ outcome })).not.toContain(5);
  });
  it('searches question text, SQL and errors without caring about case', () => {
    expect(ids({ search: 'HEROES' })).toEqual([0]);
    expect(ids({ search: 'delete from' })).toEqual([4]);
    expect(ids({ search: 'nme' })).toEqual([2]);
    expect(ids({ search: '103' })).toEqual([3]);
  });
  it('sorts stably in both directions, ties in question order', () => {
    expect(ids({ sort: 'soft-f1' })).toEqual([2, 3, 5, 1, 0, 4]);
    expect(ids({ sort: 'soft-f1', descending: true })).toEqual([0, 4, 1, 2, 3, 5]);
    expect(ids({ sort: 'time', descending: true })).toEqual([1, 0, 2, 4, 5, 3]);
    expect(ids({ sort: 'db' })).toEqual([0, 2, 3, 4, 5, 1]);
  });
  it('filters, searches and sorts 5,000 samples', () => {
    const big = new ItemIndex(
      Array.from({ length: 5000 }, (_, i) => ({
        sample: sample(i, { ex: (i % 3 === 0 ? 1 : 0) as 0 | 1 }),
        question: null,
      })),
    );
    const out = big.query({ ...DEFAULT_QUERY, outcome: 'wrong', search: 'select', sort: 'soft-f1', descending: true });
    expect(out.length).toBe(3333);
    expect(out.every((r) => r.sample.ex === 0)).toBe(true);
    const f1 = out.map((r) => r.sample.softF1 ?? -1);
    expect(f1.every((v, i) => i === 0 || f1[i - 1]! >= v)).toBe(true);
  });
});

describe("the trainer's outcomes (a step of a training run): rows whose trainer score and EX disagree", () => {
  // Rows 0..5 above with trainer scores: 0 passes EX 1 (score 0: the trainer failed it), 1 fails EX 0
  // (score 1: passed), 2 an error the trainer passed, 3 no score, 4 agrees, 5 not scored by us.
  const scored = new ItemIndex(rows.map((r, i) => ({ ...r, trainerScore: [0, 1, 1, null, 1, 1][i] })));
  const of = (outcome: (typeof DEFAULT_QUERY)['outcome']) =>
    scored.query({ ...DEFAULT_QUERY, outcome }).map((r) => r.sample.index);
  it('lists exactly the disagreements, each way', () => {
    expect(of('trainer-disagrees')).toEqual([0, 1, 2]);
    expect(of('trainer-right-ex-wrong')).toEqual([1, 2]);
    expect(of('trainer-wrong-ex-right')).toEqual([0]);
  });
  it('lists none for a run that is no step (its rows carry no trainer score)', () => {
    expect(ids({ outcome: 'trainer-disagrees' })).toEqual([]);
  });
});
