/**
 * Excluded questions on real mini-dev runs (superhero's 52 questions, evaluated through the real
 * sql.js pool): every metric computed with exclusions equals a direct recomputation on the samples
 * left, and the `--exclude` file's lines are checked naming file and line.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS, type EvalOptions } from '../../../src/core/eval/executor.ts';
import {
  excludedPresent,
  exclusionLine,
  mergeExclusions,
  parseExclusions,
  withoutExcluded,
  type Exclusion,
} from '../../../src/core/eval/exclusions.ts';
import { summarize } from '../../../src/core/eval/summary.ts';
import { compileRewardFormula } from '../../../src/core/eval/reward.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { mapHarnessRows, verlRows } from '../../../src/core/formats/harness.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { jsonLineRecords } from '../../../src/core/formats/records.ts';
import { compareRuns, comparedFields } from '../../../src/core/rl/compare.ts';
import { computeRunStats } from '../../../src/core/rl/run-stats.ts';
import { planReplay, runEvaluation } from '../../../src/core/run/replay.ts';
import { toSampleRecords } from '../../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../../src/core/run/types.ts';
import { toRunFile } from '../../../src/core/runfile/export.ts';
import type { Series } from '../../../src/core/series/model.ts';
import { parseSeriesFile, seriesFileJson } from '../../../src/core/series/file.ts';
import { bestCheckpoint, seriesReport } from '../../../src/core/series/stats.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, verlLines } from '../../helpers/series-dumps.ts';

const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 1 });
afterAll(() => pool.dispose());
const gold = parseGoldSql(readFileSync(MINIDEV_GOLD, 'utf8'), 'gold.sql');
const questions = parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), 'mini_dev_sqlite.json');
const options: EvalOptions = {
  ...DEFAULT_EVAL_OPTIONS,
  metrics: ['ex', 'soft-f1', 'r-ves'],
  vesIterations: 2,
  timeoutMs: 30_000,
};
const formula = compileRewardFormula('ex');

const header = (name: string): RunHeader => ({
  id: name,
  name,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  status: 'done',
  source: { kind: 'replay', predictions: { name, sha256: '0'.repeat(64), bytes: 1 } },
  dataset: {
    id: 'minidev',
    name: 'minidev',
    questions: { name: 'q.json', sha256: '0'.repeat(64), bytes: 1 },
    gold: null,
    databases: {},
  },
  subset: { description: 'all', indices: [] },
  config: { ...DEFAULT_RUN_CONFIG, metrics: [...options.metrics] },
  samplesPerQuestion: 1,
  executor: 'sql.js',
});

/** A step of real answers: the files' SQL for superhero's questions, one sample per file. */
async function step(stepNo: number, files: number[]) {
  const lines = files.flatMap((f) =>
    verlLines(f, ['superhero']).map((l) => JSON.stringify({ ...JSON.parse(l), step: stepNo })),
  );
  const [run] = mapHarnessRows(verlRows(jsonLineRecords(lines.join('\n'), `${stepNo}.jsonl`)), questions);
  const { items } = planReplay({ predictions: { name: `${stepNo}.jsonl`, records: run!.records }, gold, questions });
  const ev = await runEvaluation(items, options, { executor: pool });
  return {
    step: stepNo,
    wallTime: null,
    wallTimeSource: null,
    source: `${stepNo}.jsonl`,
    run: toRunFile(header(`${stepNo}`), toSampleRecords(items, ev.results, formula)),
    trainerScores: items.map((it) => run!.sampleScores.get(it.questionId)![it.sample ?? 0]!),
  };
}

let series: Series;
let exclusions: Exclusion[];
const ids = () => new Set(exclusions.map((e) => e.questionId));
const kept = (samples: readonly SampleRecord[]) => samples.filter((s) => !ids().has(s.questionId));
const mean = (xs: number[]) => (xs.reduce((a, b) => a + b, 0) / xs.length) * 100;

beforeAll(async () => {
  series = {
    id: 's',
    name: 'superhero',
    createdAt: '2026-01-01T00:00:00.000Z',
    dataset: 'mini_dev_sqlite.json',
    stepRule: '<N>.jsonl',
    steps: [await step(100, [0]), await step(200, [1]), await step(300, [1, 2, 3])],
  };
  // Exclude the first four questions step 100 gets wrong and two it gets right: EX moves.
  const first = series.steps[0]!.run.samples;
  const wrong = first.filter((s) => s.ex === 0).slice(0, 4);
  const right = first.filter((s) => s.ex === 1).slice(0, 2);
  expect(wrong).toHaveLength(4);
  expect(right).toHaveLength(2);
  exclusions = [...wrong, ...right].map((s, i) => ({
    questionId: s.questionId,
    reason: `gold is ambiguous (${i})`,
    author: 'tester',
    date: '2026-12-07T11:00:00.000Z',
  }));
}, 600_000);

describe('withoutExcluded: the summary (EX, Soft-F1, R-VES, per difficulty, per database)', () => {
  it('equals a direct recomputation on the samples left, and differs from the whole run', () => {
    const all = series.steps[0]!.run.samples;
    const left = kept(all);
    expect(left.length).toBe(all.length - 6);
    const s = summarize(withoutExcluded(all, exclusions), options.metrics);
    expect(s.byDifficulty.total.count).toBe(left.length);
    expect(s.byDifficulty.total.ex).toBeCloseTo(mean(left.map((x) => x.ex)), 10);
    expect(s.byDifficulty.total.softF1).toBeCloseTo(mean(left.map((x) => x.softF1 ?? 0)), 10);
    const timed = left.filter((x) => x.rvesNotTimed === undefined);
    expect(s.byDifficulty.total.rves).toBeCloseTo(
      (timed.reduce((a, x) => a + Math.sqrt(x.rves ?? 0), 0) / timed.length) * 100,
      10,
    );
    for (const d of ['simple', 'moderate', 'challenging'] as const) {
      const inD = left.filter((x) => x.difficulty === d);
      expect(s.byDifficulty[d]?.count ?? 0).toBe(inD.length);
      if (inD.length) expect(s.byDifficulty[d]!.ex).toBeCloseTo(mean(inD.map((x) => x.ex)), 10);
    }
    expect(s.byDb.superhero!.count).toBe(left.length);
    expect(s.byDifficulty.total.ex).not.toBeCloseTo(summarize(all, options.metrics).byDifficulty.total.ex!, 5);
    // Nothing excluded: the very same samples.
    expect(withoutExcluded(all, [])).toBe(all);
    expect(excludedPresent(all, exclusions)).toBe(6);
    expect(excludedPresent(all, [{ ...exclusions[0]!, questionId: 999_999 }])).toBe(0);
  });
});

describe('withoutExcluded: the RL statistics and the paired comparison', () => {
  it('pass@k, pass^k and best-of-n over the questions left equal a direct count', () => {
    const all = series.steps[2]!.run.samples;
    const left = kept(all);
    const stats = computeRunStats(withoutExcluded(all, exclusions), { ks: [1, 3], rng: mulberry32(0) });
    const byQ = new Map<number, number[]>();
    for (const s of left) byQ.set(s.questionId, [...(byQ.get(s.questionId) ?? []), s.ex]);
    const qs = [...byQ.values()];
    expect(stats.prompts.map((p) => p.questionId).sort()).toEqual([...byQ.keys()].sort());
    expect(stats.prompts.some((p) => ids().has(p.questionId))).toBe(false);
    expect(stats.overall.passAtK[3]! * 100).toBeCloseTo(mean(qs.map((xs) => (xs.some((x) => x === 1) ? 1 : 0))), 10);
    expect(stats.overall.passAtK[1]! * 100).toBeCloseTo(mean(qs.map((xs) => xs.filter((x) => x === 1).length / 3)), 10);
    expect(stats.overall.allCorrectShare * 100).toBeCloseTo(
      mean(qs.map((xs) => (xs.every((x) => x === 1) ? 1 : 0))),
      10,
    );
  });

  it('the paired comparison pairs only the questions left', () => {
    const a = series.steps[0]!.run;
    const b = series.steps[1]!.run;
    const lean = (r: typeof a) => ({ run: r.run, samples: withoutExcluded(r.samples, exclusions).map(comparedFields) });
    const cmp = compareRuns(lean(a), lean(b), { resamples: 200, makeRng: () => mulberry32(0) });
    expect(cmp.questions.map((q) => q.questionId).sort()).toEqual(
      [...new Set(kept(a.samples).map((s) => s.questionId))].sort(),
    );
    expect(cmp.overall.questions).toBe(52 - 6);
    expect(cmp.overall.exA).toBeCloseTo(mean(kept(a.samples).map((x) => x.ex)), 10);
    expect(cmp.overall.exB).toBeCloseTo(mean(kept(b.samples).map((x) => x.ex)), 10);
  });
});

describe('seriesReport with exclusions', () => {
  it("each step's EX, trainer reward, questions, buckets and best step equal those of the steps without the excluded samples", () => {
    const report = seriesReport(series, exclusions);
    const direct = seriesReport({
      steps: series.steps.map((s) => {
        const at = s.run.samples.flatMap((x, i) => (ids().has(x.questionId) ? [] : [i]));
        return {
          ...s,
          run: { ...s.run, samples: at.map((i) => s.run.samples[i]!) },
          trainerScores: at.map((i) => s.trainerScores[i]!),
        };
      }),
    });
    expect(report).toEqual(direct);
    for (const [i, st] of report.steps.entries()) {
      const left = kept(series.steps[i]!.run.samples);
      expect(st.ex).toBeCloseTo(mean(left.map((x) => x.ex)), 10);
      const scores = series.steps[i]!.trainerScores.filter(
        (_, k) => !ids().has(series.steps[i]!.run.samples[k]!.questionId),
      );
      expect(st.trainerReward).toBeCloseTo(scores.reduce((a, b) => a! + b!, 0)! / scores.length, 10);
      expect(st.questions).toBe(52 - 6);
    }
    expect(report.questions).toHaveLength(52 - 6);
    expect(report.questions.some((q) => ids().has(q.questionId))).toBe(false);
    expect(Object.values(report.buckets).reduce((a, b) => a + b, 0)).toBe(46);
    expect(report.best).toEqual(
      bestCheckpoint(
        report.steps,
        report.questions,
        report.warnings.filter((w) => w.rule !== 'fell-below-best'),
      ),
    );
    expect(report.steps[0]!.ex).not.toBeCloseTo(seriesReport(series).steps[0]!.ex!, 5);
  });
});

describe('the series file carries the exclusions (and so the offline report, whose numbers honour them)', () => {
  it('reads them back as written; the report of the file read back equals the report with the exclusions', () => {
    const back = parseSeriesFile(seriesFileJson({ ...series, exclusions }), 'run.series.json');
    expect(back.exclusions).toEqual(exclusions);
    expect(seriesReport(back, back.exclusions)).toEqual(seriesReport(series, exclusions));
    // None: no field at all (files written before exclusions read the same).
    expect(JSON.parse(seriesFileJson(series)).series).not.toHaveProperty('exclusions');
  });

  it("carries each step's import notes (rows paired and not) and refuses a note that is not text", () => {
    const note = '50 of 52 rows paired; 2 not: 2 match several questions by question text';
    const withNotes = { ...series, steps: series.steps.map((s, i) => (i === 0 ? { ...s, notes: [note] } : s)) };
    const back = parseSeriesFile(seriesFileJson(withNotes), 'run.series.json');
    expect(back.steps.map((s) => s.notes)).toEqual([[note], undefined, undefined]);
    const bad = JSON.parse(seriesFileJson(withNotes));
    bad.steps[0].notes = [7];
    expect(() => parseSeriesFile(JSON.stringify(bad), 'run.series.json')).toThrow(
      /run\.series\.json: steps\[0\]\.notes\[0\] must be a string/,
    );
  });

  it('refuses an exclusion without a reason, naming the file and the entry', () => {
    const text = seriesFileJson({ ...series, exclusions: [{ ...exclusions[0]!, reason: '' }] });
    expect(() => parseSeriesFile(text, 'run.series.json')).toThrow(
      /run\.series\.json: series\.exclusions\[0\]: reason is required/,
    );
  });
});

describe('parseExclusions (the --exclude file)', () => {
  const good = { question_id: 12, reason: 'gold is wrong', author: 'ana', date: '2026-12-07' };
  const line = (o: object) => JSON.stringify(o);

  it('reads each line back as written, skipping blank lines', () => {
    const text = [
      line(good),
      '',
      exclusionLine({ questionId: 3, reason: 'r', author: 'b', date: '2026-12-07T10:00:00Z' }),
    ].join('\n');
    expect(parseExclusions(text, 'x.jsonl')).toEqual([
      { questionId: 12, reason: 'gold is wrong', author: 'ana', date: '2026-12-07' },
      { questionId: 3, reason: 'r', author: 'b', date: '2026-12-07T10:00:00Z' },
    ]);
  });

  it.each([
    ['not JSON', '{', /x\.jsonl line 2: not JSON/],
    ['an array', '[1]', /x\.jsonl line 2: each line must be an object/],
    ['no reason', line({ ...good, question_id: 1, reason: ' ' }), /x\.jsonl line 2: reason is required/],
    ['no author', line({ ...good, question_id: 1, author: undefined }), /x\.jsonl line 2: author is required/],
    [
      'a bad date',
      line({ ...good, question_id: 1, date: 'yesterday' }),
      /x\.jsonl line 2: date must be an ISO 8601 date/,
    ],
    ['a bad id', line({ ...good, question_id: '7' }), /x\.jsonl line 2: question_id must be a whole number/],
    ['an unknown field', line({ ...good, question_id: 1, why: 'x' }), /x\.jsonl line 2: unknown field "why"/],
    ['a question twice', line(good), /x\.jsonl line 2: question 12 is already excluded at line 1/],
  ])('refuses %s naming the file and the line', (_, bad, message) => {
    expect(() => parseExclusions(`${line(good)}\n${bad}\n`, 'x.jsonl')).toThrow(message);
  });

  it('merges several lists, each question once (the first holds)', () => {
    const a = { questionId: 5, reason: 'a', author: 'x', date: '2026-12-07' };
    const b = { questionId: 5, reason: 'b', author: 'y', date: '2026-12-07' };
    const c = { questionId: 1, reason: 'c', author: 'y', date: '2026-12-07' };
    expect(mergeExclusions([a], [b, c])).toEqual([c, a]);
  });
});
