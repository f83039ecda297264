/**
 * A series from real completions, evaluated in-process through the real sql.js pool: three steps
 * made of the real BIRD mini-dev prediction files (superhero's 52 questions), one with three samples per question (three
 * models' answers to the same question). Checks the step statistics against the run statistics
 * of src/core/rl (pass@n, maj@n, zero variance) and a direct count, cross-step reuse against an
 * evaluation without reuse, and the series file's round trip and validation.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { mapHarnessRows, verlRows } from '../../../src/core/formats/harness.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { jsonLineRecords } from '../../../src/core/formats/records.ts';
import { compileRewardFormula } from '../../../src/core/eval/reward.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { computeRunStats } from '../../../src/core/rl/run-stats.ts';
import { toRunFile } from '../../../src/core/runfile/export.ts';
import { planReplay, runEvaluation } from '../../../src/core/run/replay.ts';
import { evalOptionsOf, toSampleRecords } from '../../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type RunHeader } from '../../../src/core/run/types.ts';
import { evaluateSeriesStep, SeriesVerdicts } from '../../../src/core/series/evaluate-step.ts';
import {
  parseSeriesFile,
  readSeriesFileSteps,
  seriesFileJson,
  SERIES_FILE_FORMAT,
  toSeriesFile,
} from '../../../src/core/series/file.ts';
import { withStep, type Series, type SeriesStep } from '../../../src/core/series/model.ts';
import { bestCheckpoint, seriesReport, seriesSample, stepStats } from '../../../src/core/series/stats.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, verlLines } from '../../helpers/series-dumps.ts';

const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 1 });
afterAll(() => pool.dispose());
const gold = parseGoldSql(readFileSync(MINIDEV_GOLD, 'utf8'), 'gold.sql');
const questions = parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), 'mini_dev_sqlite.json');
const config: RunConfig = { ...DEFAULT_RUN_CONFIG, metrics: ['ex'], timeoutMs: 30_000 };
const options = evalOptionsOf(config);
/** One database's questions keep the test short: superhero, 52 questions. */
const DBS = ['superhero'];
const Q = 52;
const formula = compileRewardFormula('ex');

/** verl lines of prediction files `files` relabelled as one step: with several files, each question has one sample per file. */
function stepRun(step: number, files: number[]) {
  const lines = files.flatMap((f) => verlLines(f, DBS).map((l) => JSON.stringify({ ...JSON.parse(l), step })));
  const [run] = mapHarnessRows(verlRows(jsonLineRecords(lines.join('\n'), `${step}.jsonl`)), questions);
  return run!;
}

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
  config: { ...DEFAULT_RUN_CONFIG, metrics: ['ex'] },
  samplesPerQuestion: 1,
  executor: 'sql.js',
});

const steps: Array<{ step: SeriesStep; executed: number; fromEarlier: number; reusedInStep: number; alone: number[] }> =
  [];
let series: Series;

beforeAll(async () => {
  const verdicts = new SeriesVerdicts();
  series = {
    id: 's',
    name: 'minidev',
    createdAt: '2026-01-01T00:00:00.000Z',
    dataset: 'mini_dev_sqlite.json',
    stepRule: '<N>.jsonl',
    steps: [],
  };
  for (const [step, files] of [
    [100, [0]],
    [200, [1]],
    [300, [1, 2, 3]],
  ] as Array<[number, number[]]>) {
    const run = stepRun(step, files);
    const { items } = planReplay({ predictions: { name: `${step}.jsonl`, records: run.records }, gold, questions });
    const ev = await evaluateSeriesStep(items, config, { executor: pool }, verdicts);
    // The reference: the same items evaluated alone, every one executed.
    const alone = await runEvaluation(items, options, { executor: pool, reuse: false });
    const s: SeriesStep = {
      step,
      wallTime: null,
      wallTimeSource: null,
      source: `${step}.jsonl`,
      run: toRunFile(header(`${step}`), toSampleRecords(items, ev.results, formula)),
      trainerScores: items.map((it) => run.sampleScores.get(it.questionId)![it.sample ?? 0]!),
    };
    series = withStep(series, s);
    steps.push({
      step: s,
      executed: ev.executed,
      fromEarlier: ev.fromEarlierSteps,
      reusedInStep: ev.reusedInStep,
      alone: alone.results.map((r) => r.ex),
    });
  }
}, 600_000);

describe("evaluateSeriesStep: earlier steps' verdicts are reused, never changing one", () => {
  it('gives every item the verdict it gets evaluated alone, and executes only what the series has not seen', () => {
    for (const s of steps) {
      expect(s.step.run.samples.map((x) => x.ex)).toEqual(s.alone);
      expect(s.executed + s.fromEarlier + s.reusedInStep).toBe(s.step.run.samples.length);
    }
    expect(steps[0]!.fromEarlier).toBe(0);
    // Step 300's first sample of each question is step 200's answer: all of those that executed cleanly come from step 200.
    const s200 = steps[1]!.step.run.samples;
    const clean = s200.filter(
      (x) => !x.mutatedDb && (x.status === 'ok' || /^(prediction|gold): /.test(x.error ?? '')),
    ).length;
    expect(steps[2]!.fromEarlier).toBeGreaterThanOrEqual(clean);
    expect(steps[2]!.executed).toBeLessThanOrEqual(steps[2]!.step.run.samples.length - clean);
  });
});

describe('SeriesVerdicts rebuilt from stored samples (the app after a reload)', () => {
  it('gives a new step the same verdicts from earlier steps as the verdicts remembered while evaluating', async () => {
    const rebuilt = new SeriesVerdicts();
    for (const s of steps.slice(0, 2)) for (const x of s.step.run.samples) rebuilt.rememberSample(x);
    const run = stepRun(300, [1, 2, 3]);
    const { items } = planReplay({ predictions: { name: '300.jsonl', records: run.records }, gold, questions });
    const hits = items.map((it) => rebuilt.lookup(it));
    expect(hits.filter(Boolean)).toHaveLength(steps[2]!.fromEarlier);
    // A hit is the earlier sample's verdict, none of its texts.
    const hit = hits.find(Boolean)!;
    expect(hit).not.toHaveProperty('sql');
    expect(hit).not.toHaveProperty('completion');
    const ev = await evaluateSeriesStep(items, config, { executor: pool }, rebuilt);
    expect(ev.results.map((r) => r.ex)).toEqual(steps[2]!.alone);
    expect(ev.fromEarlierSteps).toBe(steps[2]!.fromEarlier);
  }, 300_000);
});

describe('bestCheckpoint', () => {
  it('is the step with the highest EX, with a bootstrap interval around it over its questions', () => {
    const report = seriesReport(series);
    const top = Math.max(...report.steps.map((s) => s.ex!));
    expect(report.best).toMatchObject({ step: report.steps.find((s) => s.ex === top)!.step, ex: top, resamples: 1000 });
    expect(report.best!.ciLow).toBeLessThanOrEqual(top);
    expect(report.best!.ciHigh).toBeGreaterThanOrEqual(top);
    expect(report.best!.ciHigh - report.best!.ciLow).toBeGreaterThan(1);
    // Seeded: the same interval every time.
    expect(bestCheckpoint(report.steps, report.questions)).toEqual(report.best);
    expect(bestCheckpoint([], [])).toBeNull();
  });
});

describe('stepStats on real verdicts', () => {
  /** The EX statistics of step `step`, from its samples and trainer scores. */
  const exStats = (s: SeriesStep, step: number) =>
    stepStats({ step, samples: s.run.samples.map(seriesSample), trainerScores: s.trainerScores, metrics: ['ex'] });

  it('with one sample per question: EX = pass@1 = pass@n = maj@n over answered questions, counts equal a direct count', () => {
    const s = steps[0]!.step;
    const st = exStats(s, 100);
    const scored = s.run.samples.filter((x) => x.status !== 'missing-db');
    expect(st.questions).toBe(Q);
    const ex = (scored.filter((x) => x.ex === 1).length / Q) * 100;
    expect(st.ex).toBeCloseTo(ex, 10);
    expect(st.passAt1).toBeCloseTo(ex, 10);
    expect(st.passAtN).toBeCloseTo(ex, 10);
    expect(st.allRight).toBeCloseTo(ex, 10);
    expect(st.mixed).toBe(0);
    expect(st.errors).toBe(scored.filter((x) => x.status === 'error').length);
    expect(st.errors).toBeGreaterThan(0);
    expect(st.trainerReward).toBeCloseTo(s.trainerScores.reduce((a, b) => a! + b!, 0)! / Q, 10);
    expect(st.exOnly).toBeNull();
  });

  it('with three samples per question: pass@n, maj@n and zero variance equal the RL statistics of the same samples', () => {
    const s = steps[2]!.step;
    const st = exStats(s, 300);
    const rl = computeRunStats(s.run.samples, { ks: [1, 3], rng: mulberry32(0) });
    expect(st.nMin).toBe(3);
    expect(st.passAt1).toBeCloseTo(rl.overall.passAtK[1]! * 100, 10);
    expect(st.passAtN).toBeCloseTo(rl.overall.passAtK[3]! * 100, 10);
    expect(st.majAtN).toBeCloseTo(rl.overall.majAtK[3]! * 100, 10);
    expect(st.allRight).toBeCloseTo(rl.overall.allCorrectShare * 100, 10);
    expect(st.allWrong).toBeCloseTo(rl.overall.allWrongShare * 100, 10);
    expect(st.mixed).toBeGreaterThan(0);
    expect(st.ex).toBeCloseTo(st.passAt1, 10);
    // Distinct results per question, counted directly.
    const byQ = new Map<number, Set<string>>();
    for (const x of s.run.samples)
      if (x.status !== 'missing-db' && x.resultKey !== undefined && x.format === 1)
        byQ.set(x.index, (byQ.get(x.index) ?? new Set()).add(x.resultKey));
    expect(st.resultGroups).toBeCloseTo([...byQ.values()].reduce((a, g) => a + g.size, 0) / Q, 10);
    expect(st.resultGroups).toBeGreaterThan(1);
  });
});

describe('the series file', () => {
  it('round-trips: the file read back gives the same series and the same report', () => {
    const back = parseSeriesFile(seriesFileJson(series), 'run.series.json');
    // The run file keeps every field of a sample but goldReused (how the verdict was obtained, not what it is).
    const withoutGoldReused = (x: Series) => ({
      ...x,
      steps: x.steps.map((s) => ({
        ...s,
        run: { ...s.run, samples: s.run.samples.map(({ goldReused: _, ...r }) => r) },
      })),
    });
    expect(back).toEqual(withoutGoldReused(series));
    expect(parseSeriesFile(seriesFileJson(back), 'again.series.json')).toEqual(back);
    expect(seriesReport(back)).toEqual(seriesReport(series));
    expect(JSON.parse(seriesFileJson(series))).toMatchObject({ format: SERIES_FILE_FORMAT, version: 1 });
  });

  it('read one step at a time (the app worker’s report): the series file the whole file’s reader gives, to the byte', async () => {
    const whole = toSeriesFile(parseSeriesFile(seriesFileJson(series), 'run.series.json'));
    const stepwise = await readSeriesFileSteps(series, series.steps, 'run.series.json');
    expect(JSON.stringify(stepwise) === JSON.stringify(whole)).toBe(true);
    expect(stepwise.steps.map((s) => s.run.samples.length)).toEqual(series.steps.map((s) => s.run.samples.length));
    // A step the file's reader refuses is refused the same way, naming the step.
    const bad = { ...series.steps[1]!, trainerScores: series.steps[1]!.trainerScores.slice(1) };
    const shortScores = { ...series, steps: [series.steps[0]!, bad] };
    const message = /run\.series\.json: steps\[1\]\.trainerScores must be one entry per sample/;
    await expect(readSeriesFileSteps(series, shortScores.steps, 'run.series.json')).rejects.toThrow(message);
    expect(() => parseSeriesFile(seriesFileJson(shortScores), 'run.series.json')).toThrow(message);
  });

  it('a sample never scored (no database) is null in the file, as in every run export, and read back as stored', () => {
    const step = series.steps[0]!;
    const stored = { ...step.run.samples[0]!, status: 'missing-db' as const, ex: 0 as const, reward: 0, softF1: null };
    const one: Series = {
      ...series,
      steps: [{ ...step, run: { ...step.run, samples: [stored] }, trainerScores: [step.trainerScores[0] ?? null] }],
    };
    const written = JSON.parse(seriesFileJson(one)) as { steps: { run: { samples: Record<string, unknown>[] } }[] };
    expect(written.steps[0]!.run.samples[0]).toMatchObject({
      status: 'missing-db',
      ex: null,
      reward: null,
      softF1: null,
    });
    expect(parseSeriesFile(seriesFileJson(one), 'one.series.json').steps[0]!.run.samples[0]).toMatchObject({
      status: 'missing-db',
      ex: 0,
      reward: 0,
    });
  });

  it('refuses what it cannot read, naming the file and the field', () => {
    const good = JSON.parse(seriesFileJson(series));
    const text = (f: (o: any) => void) => {
      const o = structuredClone(good);
      f(o);
      return JSON.stringify(o);
    };
    expect(() => parseSeriesFile('{"format": "rlvr-workbench-run"}', 'x.json')).toThrow(/x\.json.*not a series file/);
    expect(() =>
      parseSeriesFile(
        text((o) => (o.version = 2)),
        'x.json',
      ),
    ).toThrow(/version 2 was written by a newer workbench/);
    expect(() =>
      parseSeriesFile(
        text((o) => (o.steps[1].step = 50)),
        'x.json',
      ),
    ).toThrow(/steps\[1\]\.step must be greater than the previous step \(100\)/);
    expect(() =>
      parseSeriesFile(
        text((o) => o.steps[0].trainerScores.pop()),
        'x.json',
      ),
    ).toThrow(/steps\[0\]\.trainerScores must be one entry per sample/);
    expect(() =>
      parseSeriesFile(
        text((o) => (o.steps[2].run.samples[0].ex = 2)),
        'x.json',
      ),
    ).toThrow(/x\.json steps\[2\]\.run.*samples\[0\]\.ex/);
  });

  it("keeps each sample's reward columns (trainerRewards) through the file, and refuses bad ones naming the entry", () => {
    const step = series.steps[0]!;
    const rewards = step.run.samples.map((_, i) =>
      i % 5 === 4 ? null : { accuracy_reward: i % 2, format_reward: i % 3 === 0 ? null : 0.5, advantage: i / 8 - 1 },
    );
    const withRewards: Series = { ...series, steps: [{ ...step, trainerRewards: rewards }, ...series.steps.slice(1)] };
    const back = parseSeriesFile(seriesFileJson(withRewards), 'r.series.json');
    expect(back.steps[0]!.trainerRewards).toEqual(rewards);
    // A step without reward columns stays without the field (older files read as before).
    expect(back.steps[1]!.trainerRewards).toBeUndefined();
    expect('trainerRewards' in back.steps[1]!).toBe(false);
    const good = JSON.parse(seriesFileJson(withRewards));
    const text = (f: (o: any) => void) => {
      const o = structuredClone(good);
      f(o);
      return JSON.stringify(o);
    };
    expect(() =>
      parseSeriesFile(
        text((o) => o.steps[0].trainerRewards.pop()),
        'x.json',
      ),
    ).toThrow(/x\.json: steps\[0\]\.trainerRewards must be one entry per sample of the step's run \(\d+\)/);
    expect(() =>
      parseSeriesFile(
        text((o) => (o.steps[0].trainerRewards = { a: 1 })),
        'x.json',
      ),
    ).toThrow(/steps\[0\]\.trainerRewards must be an array/);
    expect(() =>
      parseSeriesFile(
        text((o) => (o.steps[0].trainerRewards[2] = 1)),
        'x.json',
      ),
    ).toThrow(/steps\[0\]\.trainerRewards\[2\] must be an object/);
    expect(() =>
      parseSeriesFile(
        text((o) => (o.steps[0].trainerRewards[1].format_reward = 'NaN')),
        'x.json',
      ),
    ).toThrow(/steps\[0\]\.trainerRewards\[1\]\.format_reward must be a finite number or null/);
    expect(() => withStep({ ...series, steps: [] }, { ...step, trainerRewards: rewards.slice(1) })).toThrow(
      /trainer reward entries for \d+ samples/,
    );
  });

  it('a step already in the series is refused', () => {
    expect(() => withStep(series, series.steps[0]!)).toThrow(/step 100 is already in the series/);
  });
});
