/**
 * Where the registry's aggregations go beyond the CLI: the values written into a scored SQL run
 * (EX as the rule reward, group-rank per question, samples without a database left out), the
 * CSV export's columns, and best-of-n in the RL statistics; a run without them keeps its keys.
 */
import { describe, expect, it } from 'vitest';
import { computeRunStats } from '../../src/core/rl/run-stats.ts';
import { aggregateExplicit } from '../../src/core/rubric/aggregate.ts';
import { aggregateOne, type AggregationValue } from '../../src/core/rubric/aggregations.ts';
import type { RubricItem } from '../../src/core/rubric/model.ts';
import { DEFAULT_EXPLICIT_OPTIONS, type CriterionVerdict, type RubricScores } from '../../src/core/rubric/scores.ts';
import { toCsv } from '../../src/core/runfile/export.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { runAggregations } from '../../src/app/rubric-scoring-service.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { pairCompletions, replayRules } from '../../src/core/rubric/rar-run.ts';
import { question, sample } from '../core/rl/fixtures.ts';

const ITEMS: Pick<RubricItem, 'id' | 'weight' | 'category'>[] = [
  { id: 'e', category: 'essential', weight: 1 },
  { id: 'i', category: 'important', weight: 0.7 },
  { id: 'o', category: 'optional', weight: 0.3 },
];

/** Scores with the essential, important and optional verdicts given. */
function scores(e: boolean, i: boolean, o: boolean): RubricScores {
  const criteria: CriterionVerdict[] = (
    [
      ['e', e],
      ['i', i],
      ['o', o],
    ] as const
  ).map(([id, met]) => ({
    id,
    met,
    explanation: '',
    raw: null,
    status: 'ok',
    source: 'judge',
    attempts: 1,
    cached: false,
  }));
  return {
    version: 1,
    rubricId: 'r',
    weights: { e: 1, i: 0.7, o: 0.3 },
    judge: null,
    criteria,
    explicit: aggregateExplicit(ITEMS, criteria, DEFAULT_EXPLICIT_OPTIONS),
    implicit: null,
    likert: null,
    promptInjection: { flagged: false, matches: [] },
  };
}

const score = (vs: readonly AggregationValue[] | undefined, id: string) => vs?.find((v) => v.id === id)?.score;

describe('a scored SQL run: the aggregations written into its samples', () => {
  // Question 0: two samples (EX 1 and 0); question 1: one sample, plus one without a database.
  const scored = {
    rubric: { items: ITEMS as RubricItem[] },
    samples: [
      { index: 0, sample: 0, scores: scores(true, true, false) },
      { index: 0, sample: 1, scores: scores(true, false, true) },
      { index: 1, sample: 0, scores: scores(true, true, true) },
      { index: 1, sample: 1, scores: scores(false, false, false) },
    ],
  };
  const run = new Map<string, Pick<SampleRecord, 'status' | 'ex'>>([
    ['0.0', { status: 'ok', ex: 1 }],
    ['0.1', { status: 'ok', ex: 0 }],
    ['1.0', { status: 'ok', ex: 1 }],
    ['1.1', { status: 'missing-db', ex: 0 }],
  ]);
  const got = runAggregations(scored, run, ['explicit', 'veto', 'all-must-pass', 'rule-x-judge', 'group-rank']);

  it('rule × judge uses EX; group-rank ranks within a question; a sample without a database gets none', () => {
    expect(score(got[0], 'explicit')).toBeCloseTo(1.7 / 2, 12);
    expect(score(got[0], 'rule-x-judge')).toBeCloseTo(1 * (1.7 / 2), 12);
    expect(score(got[1], 'rule-x-judge')).toBe(0);
    expect(score(got[1], 'all-must-pass')).toBe(0);
    expect(score(got[0], 'all-must-pass')).toBe(1);
    // 0.85 above 0.65 in question 0.
    expect([score(got[0], 'group-rank'), score(got[1], 'group-rank')]).toEqual([1, 0]);
    // Question 1's other sample has no database: the scored one is alone in its group.
    expect(got[2]!.find((v) => v.id === 'group-rank')).toMatchObject({ score: null, status: 'group-of-one' });
    expect(got[3]).toBeUndefined();
  });

  it('the CSV export has a column per aggregation, empty where a sample has none', () => {
    const records = [...run.entries()].map(([key, r], i) => {
      const [index, s] = key.split('.').map(Number) as [number, number];
      return sample({
        index,
        sample: s,
        ...r,
        rubric: { ...scored.samples[i]!.scores, ...(got[i] ? { aggregations: got[i] } : {}) },
      });
    });
    const [head, ...rows] = toCsv(records).trim().split('\r\n');
    const cols = head!.split(',');
    for (const id of ['veto', 'minimum', 'all_must_pass', 'rule_x_judge', 'group_rank', 'explicit_abs'])
      expect(cols, id).toContain(`rubric_${id}`);
    const cell = (row: number, col: string) => rows[row]!.split(',')[cols.indexOf(col)];
    expect(cell(0, 'rubric_group_rank')).toBe('1');
    expect(cell(1, 'rubric_group_rank')).toBe('0');
    expect(Number(cell(0, 'rubric_rule_x_judge'))).toBeCloseTo(0.85, 12);
    // Not computed for this run (not asked for) or for the sample without a database: empty, never 0.
    expect(cell(0, 'rubric_minimum')).toBe('');
    expect(cell(3, 'rubric_veto')).toBe('');
  });
});

describe('best-of-n by a stored rubric aggregation', () => {
  it('ranks each question’s samples by the aggregation; runs without aggregations keep their keys', () => {
    // Question 0: sample 0 wrong with a higher explicit score, sample 1 right but failing the optional only.
    // The veto keeps sample 0's explicit (its essential passes), so best-of-n by veto picks sample 0;
    // all-must-pass ties (1 and 1) and picks sample 0 too; minimum picks sample 1 (sample 0 fails the optional).
    const q0 = question(0, ['A', 'R']).map((s, i) => {
      const sc = [scores(true, true, false), scores(true, true, true)][i]!;
      return { ...s, rubric: sc };
    });
    const q1 = question(1, ['R', 'B']).map((s, i) => ({
      ...s,
      rubric: [scores(true, true, true), scores(false, true, true)][i]!,
    }));
    const all = [...q0, ...q1];
    const ids = ['veto', 'minimum', 'all-must-pass'] as const;
    const withAggs = all.map((s) => ({
      ...s,
      rubric: { ...s.rubric, aggregations: ids.map((id) => aggregateOne(id, { items: ITEMS, scores: s.rubric })) },
    }));
    const stats = computeRunStats(withAggs, { rng: mulberry32(0) });
    // Direct: the chosen sample's EX per question, averaged.
    const pick = (qs: SampleRecord[][], id: string) =>
      qs
        .map((g) => {
          let best = g[0]!;
          for (const s of g) if (score(s.rubric!.aggregations, id)! > score(best.rubric!.aggregations, id)!) best = s;
          return best.ex;
        })
        .reduce((a: number, b) => a + b, 0) / qs.length;
    const groups = [withAggs.slice(0, 2), withAggs.slice(2)];
    expect(stats.overall.bestOfN.rubric_veto).toBe(pick(groups, 'veto'));
    expect(stats.overall.bestOfN.rubric_minimum).toBe(pick(groups, 'minimum'));
    expect(stats.overall.bestOfN.rubric_minimum).toBe(1);
    expect(stats.overall.bestOfN.rubric_all_must_pass).toBe(pick(groups, 'all-must-pass'));
    // Not stored with the samples: not available (null), never a guess.
    expect(stats.overall.bestOfN.rubric_group_rank).toBeNull();
    expect(Object.keys(computeRunStats(all, { rng: mulberry32(0) }).overall.bestOfN)).toEqual([
      'oracle',
      'mean_logprob',
      'rubric',
    ]);
  });
});

describe('a replayed completions file’s rule_score', () => {
  const rows = parseRarJsonl(
    ['q0', 'q1']
      .map((id) =>
        JSON.stringify({ id, question: id, rubric: [{ title: 'T', description: 'Essential Criteria: t', weight: 5 }] }),
      )
      .join('\n'),
    'd.jsonl',
  );

  it('is kept per row and sample for rule × judge; a file without any gives none', () => {
    const jobs = pairCompletions(
      '{"id": "q1", "completion": "a", "rule_score": 0.5}\n{"id": "q0", "completion": "b"}\n{"id": "q1", "completion": "c", "rule_score": 1}\n',
      'c.jsonl',
      rows,
    );
    expect(jobs.map((j) => j.rule)).toEqual([0.5, null, 1]);
    expect(replayRules(jobs)).toEqual(
      new Map([
        [1, [0.5, 1]],
        [0, [null]],
      ]),
    );
    expect(replayRules(pairCompletions('{"id": "q0", "completion": "b"}\n', 'c.jsonl', rows))).toBeNull();
  });

  it('outside [0, 1] or not a number is refused naming the line', () => {
    for (const bad of ['1.5', '-0.1', '"1"', 'true'])
      expect(() =>
        pairCompletions(
          `{"id": "q0", "completion": "b"}\n{"id": "q0", "completion": "b", "rule_score": ${bad}}\n`,
          'c.jsonl',
          rows,
        ),
      ).toThrow(/c\.jsonl:2: "rule_score" must be a number in \[0, 1\]/);
  });
});
