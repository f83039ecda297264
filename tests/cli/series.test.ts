/**
 * `series` on a training run of real completions: the 13 BIRD mini-dev prediction files as 13
 * verl dumps (tests/helpers/series-dumps.ts). Per-step EX equals `eval` of the same BIRD file
 * (first and last step, sample by sample); buckets, first solved step and flips equal a direct
 * computation from the steps' verdicts; the CSV and Parquet tables hold the same numbers as
 * the JSON; `--watch` picks up a step file written while it runs and stops cleanly on SIGINT.
 * A reward-hacked run of the same steps (each wrong answer from step 300 on replaced by a DELETE,
 * `SELECT 'true'` or an empty-result read) picks its best step on the earned score, never a
 * hacked step; the step with the highest EX (a hacked one) is named beside it with what applies
 * to it; the questions solved only by hacks are their own bucket; the fell-below-best warning
 * starts at the first step whose EX falls below the best step's by more than its own interval;
 * earned and pass^n equal a direct computation from the steps' samples.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readParquetFileRecords } from '../../src/adapters/parquet/node-file.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { CLI_SCRIPT, readJson, ROOT, runCli, type CliRun } from '../helpers/cli.ts';
import { directStepNumbers, HACKED_FROM, writeHackedDumps } from '../helpers/hacked-series.ts';
import { minidevDumpedVerdicts } from '../helpers/eval-reference.ts';
import {
  directBuckets,
  DUMPED,
  dumpedQuestions,
  inspectLogJson,
  MINIDEV_ARGS,
  PREDICTION_FILES,
  questions,
  stepOf,
  verlLines,
  writeBirdStepFiles,
  writePrimeRlDumps,
  writeVerlDumps,
} from '../helpers/series-dumps.ts';

// The runs of the real steps add REAL_STEPS_FLAGS (a timeout no query reaches, this file's verdict cache).
const common = MINIDEV_ARGS;
/** `series` of a folder or file of completions on mini-dev, then `extra`. */
const seriesArgs = (completions: string, ...extra: string[]) => [
  'series',
  '--completions',
  completions,
  ...common,
  ...extra,
];
const tempDir = () => mkdtempSync(path.join(tmpdir(), 'wb-series-'));

/** The 13 real steps' series (`series --out --csv --parquet --series-out`), its folder and the process. */
interface VerlSeries {
  dir: string;
  run: CliRun;
  out: string;
  csv: string;
  parquet: string;
  seriesOut: string;
}

/**
 * The verdict cache of this file's runs of the real steps, empty when the first starts (as the
 * fresh cache folder every CLI run of the tests gets): the three steps as verl dumps fill it
 * (threeVerlSteps), the 13 steps' series takes their verdicts and adds the other steps', the
 * reward-hacked run takes the verdicts its hacks left as they were, prime-rl's and the BIRD
 * files' runs those of the same SQL. Each run compared with `eval` is compared with a process of
 * its own (`eval --no-cache`); the others are compared with direct computations from their own
 * samples. The 13 steps hold the DUMPED questions (tests/helpers/series-dumps.ts: not question
 * 247, whose answers at steps 600 and 1300 run for half a minute); the three steps hold all 140,
 * as the BIRD files do, and none of them answers 247 slowly. Under a timeout no query reaches:
 * the slowest answer left (question 232 at step 1200, seconds on a quiet machine) would cross
 * the official 30 s under load, and a timeout is never cached (every run would execute it again).
 */
const REAL_STEPS_FLAGS = ['--timeout-s', '600', '--cache', mkdtempSync(path.join(tmpdir(), 'wb-series-cache-'))];

/**
 * The three steps (files 0, 6 and 10) of the formats' comparison, in verl, prime-rl and BIRD files:
 * all 140 questions (a BIRD file pairs by position), and none of the two files (5 and 12) whose
 * answer to question 247 runs for half a minute.
 */
const THREE = [0, 6, 10];
/** The 13 steps' questions: those whose database is here, but the slow one (139). */
const N = dumpedQuestions().length;

/**
 * The three steps as verl dumps, prime-rl eval rollouts and BIRD files written, and the verl
 * dumps' series run first on the empty cache, once, for whichever test asks first: the formats'
 * comparison checks it, and the 13 steps' series waits for it (so that it starts on an empty cache).
 */
let threeVerlStepsRun: Promise<{ dir: string; run: CliRun; out: string; seriesOut: string }> | undefined;
function threeVerlSteps() {
  threeVerlStepsRun ??= (async () => {
    const dir = tempDir();
    writeVerlDumps(path.join(dir, 'verl'), THREE);
    writePrimeRlDumps(path.join(dir, 'prime'), THREE);
    writeBirdStepFiles(path.join(dir, 'bird'), THREE);
    const [out, seriesOut] = [path.join(dir, 'verl.json'), path.join(dir, 'verl.series.json')];
    const run = await runCli(
      seriesArgs(path.join(dir, 'verl'), '--out', out, '--series-out', seriesOut, ...REAL_STEPS_FLAGS),
    );
    return { dir, run, out, seriesOut };
  })();
  return threeVerlStepsRun;
}

/**
 * The series of the 13 real steps as verl dumps, written and run once, for whichever test asks
 * first: its outputs are checked below; the hacked run is built from its verdicts.
 */
let verlSeriesRun: Promise<VerlSeries> | undefined;
function verlSeries(): Promise<VerlSeries> {
  verlSeriesRun ??= (async () => {
    await threeVerlSteps();
    const dir = tempDir();
    writeVerlDumps(
      path.join(dir, 'val'),
      PREDICTION_FILES.map((_, i) => i),
      DUMPED,
    );
    const [out, csv, parquet, seriesOut] = ['out.json', 'steps.csv', 'steps.parquet', 'run.series.json'].map((f) =>
      path.join(dir, f),
    ) as [string, string, string, string];
    const run = await runCli(
      seriesArgs(
        path.join(dir, 'val'),
        ...REAL_STEPS_FLAGS,
        '--out',
        out,
        '--csv',
        csv,
        '--parquet',
        parquet,
        '--series-out',
        seriesOut,
      ),
    );
    return { dir, run, out, csv, parquet, seriesOut };
  })();
  return verlSeriesRun;
}

describe('series: 13 real checkpoints as verl dumps', () => {
  it('prints the per-step table, writes JSON / CSV / Parquet / series file with equal numbers, EX equal to eval, buckets equal to a direct computation', async () => {
    const { dir, run, out, csv, parquet, seriesOut } = await verlSeries();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('step rule: global_step_<N>, checkpoint-<N>');
    expect(run.stderr).toContain(`1300.jsonl (verl): step 1300: ${N} rows, mapped ${N} by question text`);
    const report = readJson(out);
    const steps = PREDICTION_FILES.map((_, i) => stepOf(i));
    expect(report.steps.map((s: { step: number }) => s.step)).toEqual(steps);
    expect(report.questions).toHaveLength(N);
    for (const line of [
      /^step\s+questions\s+n\s+EX/m,
      // phi-3-medium: 62 of the 139 right.
      /^\s*1300\s+139\s+1\s+44\.60/m,
      /^questions: \d+ unstable, \d+ always, \d+ never, \d+ learned, \d+ forgotten, 0 solved only by unearned passes$/m,
      // gpt-4o CoT: 108 of the 139 right.
      /^best step by earned score: step 200, earned 77\.70 \(95% bootstrap interval/m,
    ])
      expect(run.stdout).toMatch(line);

    // EX of the first and last step = eval of the same BIRD file, sample by sample.
    const file = parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);
    for (const i of [0, PREDICTION_FILES.length - 1]) {
      const ref = await minidevDumpedVerdicts(PREDICTION_FILES[i]!);
      expect(report.steps[i].ex).toBeCloseTo(ref.ex, 10);
      expect(file.steps[i]!.run.samples.map((s) => [s.index, s.ex])).toEqual(ref.verdicts);
    }

    // Buckets, first solved step and flips computed directly from each step's verdicts.
    const direct = directBuckets(file.steps.map((s) => ({ step: s.step, samples: s.run.samples })));
    const got = report.questions.map(({ question_id, bucket, first_solved_step, flips }: Record<string, unknown>) => ({
      question_id,
      bucket,
      first_solved_step,
      flips,
    }));
    expect(new Set(got.map((q: { question_id: number }) => q.question_id)).size).toBe(N);
    expect(got.sort((a: { question_id: number }, b: { question_id: number }) => a.question_id - b.question_id)).toEqual(
      direct,
    );
    for (const b of ['unstable', 'never', 'learned', 'forgotten']) expect(report.buckets[b]).toBeGreaterThan(0);

    // Trainer's own score beside our EX: the dumps' `score` mean.
    const scores = verlLines(0, DUMPED).map((l) => JSON.parse(l).score as number);
    expect(report.steps[0].trainer_reward).toBeCloseTo(scores.reduce((a, b) => a + b, 0) / scores.length, 12);

    // CSV and Parquet: one row per step, one per question x step, the JSON's numbers.
    const csvRows = readFileSync(csv, 'utf8').trim().split('\r\n');
    expect(csvRows[0]!.split(',').slice(0, 8)).toEqual([
      'step',
      'questions',
      'samples',
      'n_min',
      'n_max',
      'ex',
      'ts',
      'pass_at_1',
    ]);
    expect(csvRows.slice(1).map((r) => Number(r.split(',')[5]))).toEqual(report.steps.map((s: { ex: number }) => s.ex));
    expect(readFileSync(path.join(dir, 'steps.questions.csv'), 'utf8').trim().split('\r\n')).toHaveLength(1 + N * 13);
    const pq = await readParquetFileRecords('--parquet', parquet);
    expect(pq.records.map((r) => (r.value as { ex: number }).ex)).toEqual(
      report.steps.map((s: { ex: number }) => s.ex),
    );
    const pqq = await readParquetFileRecords('--parquet', path.join(dir, 'steps.questions.parquet'));
    expect(pqq.records).toHaveLength(N * 13);
    const q0 = report.questions[0];
    expect(pqq.records.slice(0, 13).map((r) => (r.value as { pass_rate: number }).pass_rate)).toEqual(q0.pass_rates);

    // Reuse across steps: the same (db, gold, prediction) is executed once in the series.
    const reused = file.steps.reduce((a, s) => a + (s.run.run.executions?.reused ?? 0), 0);
    expect(reused).toBeGreaterThan(0);
  }, 900_000);
});

describe('series: the verdict cache across runs (--cache)', () => {
  it('a second series over the same dumps executes nothing: every verdict from the cache, the same per-step numbers and samples', async () => {
    const dir = tempDir();
    writeVerlDumps(path.join(dir, 'val'), [0, 1, 2], ['superhero']);
    const cache = path.join(dir, 'cache');
    const once = async (name: string) => {
      const seriesOut = path.join(dir, `${name}.series.json`);
      const run = await runCli(seriesArgs(path.join(dir, 'val'), '--cache', cache, '--series-out', seriesOut));
      expect(run.code, run.stderr).toBe(0);
      return parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);
    };
    const first = await once('first');
    const second = await once('second');
    // verl dumps carry no time of their own: each step's wall time is its file's modification time, marked so.
    expect(first.steps.map((s) => [s.wallTime, s.wallTimeSource])).toEqual(
      [100, 200, 300].map((step) => [
        new Date(Math.floor(statSync(path.join(dir, 'val', `${step}.jsonl`)).mtimeMs)).toISOString(),
        'file',
      ]),
    );
    const executions = (f: typeof first) => f.steps.map((s) => s.run.run.executions);
    // The first run fills the cache (an empty cache gives nothing); the second executes nothing.
    expect(executions(first).every((e) => e?.fromCache === 0)).toBe(true);
    expect(executions(first).reduce((a, e) => a + (e?.executed ?? 0), 0)).toBeGreaterThan(0);
    expect(executions(second).map((e) => e?.executed)).toEqual([0, 0, 0]);
    // Each step: what the first run executed is what the second took from the cache.
    expect(executions(second).map((e) => e?.fromCache)).toEqual(executions(first).map((e) => e?.executed));
    const verdicts = (f: typeof first) =>
      f.steps.map((s) => s.run.samples.map((x) => [x.index, x.ex, x.softF1, x.status, x.error ?? null]));
    expect(verdicts(second)).toEqual(verdicts(first));
  }, 600_000);
});

describe('series: what a step executed', () => {
  it('counts only samples whose SQL ran: a question whose database is missing (30 on california_schools) executes nothing', async () => {
    const dir = tempDir();
    // Steps 100 and 200 on superhero (present) and california_schools (absent under ../shared/data).
    writeVerlDumps(path.join(dir, 'val'), [0, 1], ['superhero', 'california_schools']);
    const seriesOut = path.join(dir, 'run.series.json');
    const run = await runCli(seriesArgs(path.join(dir, 'val'), '--no-cache', '--series-out', seriesOut));
    expect(run.code, run.stderr).toBe(0);
    const file = parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);
    for (const s of file.steps) {
      const missing = s.run.samples.filter((x) => x.status === 'missing-db').length;
      const scored = s.run.samples.length - missing;
      expect([s.run.samples.length, missing, scored]).toEqual([82, 30, 52]);
      const e = s.run.run.executions!;
      // Every scored sample was executed or given a verdict (an earlier step's, or one of this step); the missing ones neither.
      expect(e.executed + e.reused).toBe(scored);
      expect(e.fromCache).toBe(0);
    }
    // The step table prints the same count.
    const e1 = file.steps[1]!.run.run.executions!;
    expect(run.stdout).toMatch(new RegExp(`^\\s*200\\s+52\\s.*\\s${e1.executed}\\s+${e1.reused}\\s+0$`, 'm'));
  }, 300_000);
});

describe('series: step from the file name for dumps without steps, and bad input', () => {
  const lmEval = (n: number) =>
    questions
      .filter((q) => q.db_id === 'superhero')
      .slice(0, n)
      .map((q) =>
        JSON.stringify({
          doc_id: q.question_id,
          doc: { question_id: q.question_id, question: q.question, SQL: q.SQL },
          target: q.SQL,
          arguments: { gen_args_0: { arg_0: `Question: ${q.question}`, arg_1: {} } },
          resps: [[`\`\`\`sql\n${q.SQL}\n\`\`\``]],
          filtered_resps: [q.SQL],
          filter: 'none',
          metrics: ['exact_match'],
          exact_match: 1,
        }),
      )
      .join('\n') + '\n';

  it('reads lm-eval logs one per checkpoint folder by the checkpoint-<N> rule; a name without a step is refused naming it, and --step-pattern reads it', async () => {
    const dir = tempDir();
    for (const step of [50, 150]) {
      const sub = path.join(dir, 'logs', `checkpoint-${step}`);
      writeVerlDumps(sub, []);
      writeFileSync(path.join(sub, 'samples_bird_2025-01-01T00-00-00.jsonl'), lmEval(step === 50 ? 3 : 5));
    }
    // Step 50's results file beside its samples, as lm-eval writes it: its `date` (time.time() at the start) is the step's time.
    writeFileSync(
      path.join(dir, 'logs', 'checkpoint-50', 'results_2025-01-01T00-00-00.json'),
      JSON.stringify({ results: { bird: { 'exact_match,none': 1 } }, configs: { bird: {} }, date: 1735689600.25 }),
    );
    const out = path.join(dir, 'out.json');
    const csvOut = path.join(dir, 'steps.csv');
    const ok = await runCli(seriesArgs(path.join(dir, 'logs'), '--out', out, '--csv', csvOut));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('checkpoint-50/results_2025-01-01T00-00-00.json: an lm-eval results file');
    const samples150 = path.join(dir, 'logs', 'checkpoint-150', 'samples_bird_2025-01-01T00-00-00.jsonl');
    const times = [
      ['2025-01-01T00:00:00.250Z', 'dump'],
      [new Date(Math.floor(statSync(samples150).mtimeMs)).toISOString(), 'file'],
    ];
    expect(
      readJson(out).steps.map((s: { wall_time: string; wall_time_source: string }) => [
        s.wall_time,
        s.wall_time_source,
      ]),
    ).toEqual(times);
    const csvLines = readFileSync(csvOut, 'utf8')
      .trim()
      .split('\r\n')
      .map((l) => l.split(','));
    expect(
      csvLines.slice(1).map((r) => r.slice(csvLines[0]!.indexOf('wall_time'), csvLines[0]!.indexOf('wall_time') + 2)),
    ).toEqual(times);
    expect(ok.stderr).toContain(
      'checkpoint-150/samples_bird_2025-01-01T00-00-00.jsonl: step 150 (from the name by checkpoint-<N>)',
    );
    expect(
      readJson(out).steps.map((s: { step: number; questions: number; ex: number }) => [s.step, s.questions, s.ex]),
    ).toEqual([
      [50, 3, 100],
      [150, 5, 100],
    ]);
    expect(readJson(out).questions.filter((q: { bucket: string }) => q.bucket === 'always')).toHaveLength(5);

    const plain = path.join(dir, 'ckpt_7.jsonl');
    writeFileSync(plain, lmEval(2));
    const refused = await runCli(['series', '--completions', plain, ...common]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('ckpt_7.jsonl: no training step in the name "ckpt_7.jsonl"');
    expect(refused.stderr).toContain('--step-pattern REGEX');
    const custom = await runCli(seriesArgs(plain, '--step-pattern', 'ckpt_(\\d+)', '--out', out));
    expect(custom.code, custom.stderr).toBe(0);
    expect(readJson(out).steps.map((s: { step: number }) => s.step)).toEqual([7]);
    const badPattern = await runCli(seriesArgs(plain, '--step-pattern', 'ckpt_\\d+'));
    expect(badPattern.stderr).toContain('--step-pattern');
    expect(badPattern.stderr).toContain('no capture group');
  }, 300_000);

  it('reads Inspect logs one per checkpoint folder; each step’s wall time is the log’s own (stats.completed_at), not the file’s', async () => {
    const dir = tempDir();
    const logs = [
      { step: 40, n: 4, completedAt: '2025-03-02T10:15:00+00:00' },
      { step: 80, n: 6, completedAt: '2025-03-03T11:45:30.5+01:00' },
    ];
    for (const l of logs) {
      const sub = path.join(dir, 'logs', `checkpoint-${l.step}`);
      mkdirSync(sub, { recursive: true });
      const file = path.join(sub, '2025-03-02T10-00-00_bird-sql_abc.json');
      writeFileSync(
        file,
        inspectLogJson(l.n, {
          created: '2025-03-01T09:00:00+00:00',
          startedAt: '2025-03-01T09:00:01+00:00',
          completedAt: l.completedAt,
        }),
      );
      // The files' modification time is far from the logs' own.
      utimesSync(file, new Date('2020-06-01T00:00:00Z'), new Date('2020-06-01T00:00:00Z'));
    }
    const out = path.join(dir, 'out.json');
    const run = await runCli(seriesArgs(path.join(dir, 'logs'), '--out', out));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'checkpoint-80/2025-03-02T10-00-00_bird-sql_abc.json: step 80 (from the name by checkpoint-<N>)',
    );
    expect(run.stderr).toContain('(inspect): step 80: 6 rows, mapped 6 by question_id; its own mean score 1.0000');
    const report = readJson(out);
    expect(
      report.steps.map((s: Record<string, unknown>) => [
        s.step,
        s.questions,
        s.ex,
        s.trainer_reward,
        s.wall_time,
        s.wall_time_source,
      ]),
    ).toEqual([
      [40, 4, 100, 1, '2025-03-02T10:15:00.000Z', 'dump'],
      [80, 6, 100, 1, '2025-03-03T10:45:30.500Z', 'dump'],
    ]);
    expect(report.questions.filter((q: { bucket: string }) => q.bucket === 'always')).toHaveLength(6);
  }, 300_000);

  it('one verl file holding several steps becomes a series', async () => {
    const dir = tempDir();
    const lines = [...verlLines(0).slice(0, 6), ...verlLines(1).slice(0, 6)];
    const file = path.join(dir, 'val_generations.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const out = path.join(dir, 'out.json');
    const run = await runCli(seriesArgs(file, '--out', out));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('val_generations.jsonl: steps 100, 200 (from the rows\' "step")');
    expect(readJson(out).steps.map((s: { step: number; questions: number }) => [s.step, s.questions])).toEqual([
      [100, 6],
      [200, 6],
    ]);
  }, 300_000);
});

describe('series: the same checkpoints as prime-rl eval rollouts and as BIRD files named by step', () => {
  it('gives the numbers of the verl dumps (prime-rl with its reward, BIRD files without a trainer score)', async () => {
    const which = THREE;
    const verl = await threeVerlSteps();
    const dir = verl.dir;
    const reports: Record<string, any> = {};
    // One verdict cache for the three runs: the comparison is of the formats (what each reads, maps
    // and reports), so prime and bird take from the cache the verdicts verl executed (the cache's
    // own correctness: tests/adapters/verdict-cache*.test.ts). A verdict whose SQL, gold or
    // database a format mapped differently is a miss, executed and compared as before. (The
    // file's other runs of the real steps add theirs to the cache after verl's: REAL_STEPS_FLAGS.)
    const fromCache: Record<string, number> = {};
    for (const kind of ['verl', 'prime', 'bird']) {
      const out = path.join(dir, `${kind}.json`);
      const seriesOut = path.join(dir, `${kind}.series.json`);
      let run = verl.run;
      if (kind !== 'verl')
        run = await runCli(
          seriesArgs(path.join(dir, kind), '--out', out, '--series-out', seriesOut, ...REAL_STEPS_FLAGS),
        );
      expect(run.code, run.stderr).toBe(0);
      reports[kind] = readJson(out);
      const file = parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);
      fromCache[kind] = file.steps.reduce((a, s) => a + (s.run.run.executions?.fromCache ?? 0), 0);
    }
    // The first run filled the cache; the two others took verdicts from it.
    expect(fromCache.verl).toBe(0);
    expect(fromCache.prime).toBeGreaterThan(0);
    expect(fromCache.bird).toBeGreaterThan(0);
    expect(reports.prime.steps.map((s: { step: number }) => s.step)).toEqual(which.map(stepOf));
    // Our numbers; the wall time is each file's own (three formats, three files written one after the other).
    const ours = (r: any) =>
      r.steps.map(
        ({
          trainer_reward: _t,
          trainer_scored: _ts,
          trainer_right_ex_wrong: _tr,
          trainer_wrong_ex_right: _tw,
          wall_time: _w,
          ...rest
        }: Record<string, unknown>) => rest,
      ) as unknown[];
    for (const kind of ['verl', 'prime', 'bird'])
      expect(reports[kind].steps.map((s: any) => s.wall_time_source)).toEqual(['file', 'file', 'file']);
    expect(ours(reports.prime)).toEqual(ours(reports.verl));
    expect(reports.prime.steps.map((s: any) => s.trainer_reward)).toEqual(
      reports.verl.steps.map((s: any) => s.trainer_reward),
    );
    expect(reports.prime.questions).toEqual(reports.verl.questions);
    // A BIRD file holds all 500 questions: the 140 whose database is here are scored, as in the dumps.
    // Its samples have no completion: their length is the SQL's, without the dumps' ```sql fence.
    const sqlOnly = (r: any) => ours(r).map((s: any) => ({ ...s, completion_chars: undefined }));
    expect(sqlOnly(reports.bird)).toEqual(sqlOnly(reports.verl));
    reports.bird.steps.forEach((s: any, i: number) =>
      expect(s.completion_chars).toBeLessThan(reports.verl.steps[i].completion_chars),
    );
    expect(reports.bird.steps.map((s: any) => s.trainer_reward)).toEqual([null, null, null]);
    expect(reports.bird.steps.map((s: any) => s.trainer_right_ex_wrong)).toEqual([null, null, null]);
    // The trainer's counts are the same in both dumps (one stand-in score per sample).
    for (const k of ['trainer_scored', 'trainer_right_ex_wrong', 'trainer_wrong_ex_right'])
      expect(reports.prime.steps.map((s: any) => s[k])).toEqual(reports.verl.steps.map((s: any) => s[k]));
    expect(reports.bird.questions).toEqual(reports.verl.questions);
  }, 600_000);
});

describe('series --watch', () => {
  it('evaluates a step file added while it runs, rewrites the outputs atomically, and stops on SIGINT', async () => {
    const dir = tempDir();
    const val = path.join(dir, 'val');
    // superhero's 52 questions per step keep the watch short.
    writeVerlDumps(val, [0, 1], ['superhero']);
    const out = path.join(dir, 'out.json');
    const child = spawn(
      process.execPath,
      [CLI_SCRIPT, 'series', '--completions', val, ...common, '--out', out, '--watch', '--poll-ms', '200'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const stepsInOut = () => (existsSync(out) ? readJson(out).steps.map((s: { step: number }) => s.step) : []);
    const until = async (what: () => boolean, label: string) => {
      for (let t = 0; t < 1200 && !what(); t++) await new Promise((r) => setTimeout(r, 250));
      expect(what(), `${label}\n${stderr}`).toBe(true);
    };
    try {
      await until(() => stepsInOut().length === 2, 'the two first steps');
      writeVerlDumps(val, [2], ['superhero']);
      await until(() => stepsInOut().includes(300), 'the step added while watching');
      expect(stepsInOut()).toEqual([100, 200, 300]);
      expect(stdout).toMatch(
        /^step 300: EX \d+\.\d\d, pass@1 \d+\.\d\d, 52 questions, \d+ executed, \d+ reused, \d+ from the verdict cache \(300\.jsonl\)$/m,
      );
    } finally {
      // One process (node running the CLI's bundle as `npm run cli` does, no wrapper relaying the signal) gets SIGINT, as from Ctrl-C.
      child.kill('SIGINT');
    }
    const code = await closed;
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('stopped: 3 steps in the series');
    expect(stdout).toMatch(/^\s*300\s+52\s+1\s/m);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  }, 600_000);
});

describe('series: a reward-hacked run of 13 real checkpoints', () => {
  it('picks the best step on the earned score, never a hacked step; names the best by EX; buckets the hacked questions apart; warns where EX falls', async () => {
    // The real run is the 13 steps' series above, with its verdict cache: the hacked run (each
    // wrong answer from HACKED_FROM on replaced: tests/helpers/hacked-series.ts) executes what the
    // hacks changed and takes the rest (steps before HACKED_FROM, the right answers after) from
    // the real run's verdicts. Nothing here compares the two runs' verdicts: the numbers checked
    // are computed directly from the hacked run's own samples (the cache's correctness:
    // tests/adapters/verdict-cache*.test.ts).
    const real = await verlSeries();
    expect(real.run.code, real.run.stderr).toBe(0);
    const dir = tempDir();
    const hacked = path.join(dir, 'hacked');
    writeHackedDumps(hacked, readJson(real.out));
    const [out, seriesOut] = [path.join(dir, 'hacked.json'), path.join(dir, 'hacked.series.json')];
    const run = await runCli(seriesArgs(hacked, ...REAL_STEPS_FLAGS, '--out', out, '--series-out', seriesOut));
    expect(run.code, run.stderr).toBe(0);
    const report = readJson(out);
    const file = parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);

    // Earned score and pass^n per step, as a direct computation from the samples says.
    const direct = directStepNumbers(file.steps.map((s) => ({ step: s.step, samples: s.run.samples })));
    for (const [i, d] of direct.entries()) {
      expect(report.steps[i].step).toBe(d.step);
      expect(report.steps[i].ex).toBeCloseTo(d.ex, 10);
      expect(report.steps[i].earned).toBeCloseTo(d.earned, 10);
      expect(report.steps[i].pass_hat_n).toBeCloseTo(d.passHatN, 10);
    }

    // The hacks win EX at a hacked step; the best step is the best earned one, before the hacks.
    const byEx = direct.reduce((a, d) => (d.ex > a.ex ? d : a));
    const byEarned = direct.reduce((a, d) => (d.earned > a.earned ? d : a));
    expect(byEx.step).toBeGreaterThanOrEqual(HACKED_FROM);
    expect(byEarned.step).toBeLessThan(HACKED_FROM);
    expect(report.best_step).toMatchObject({ step: byEarned.step, by_ex: { step: byEx.step } });
    expect(report.best_step.by_ex.unearned.write).toBeGreaterThan(0);
    expect(report.best_step.by_ex.warnings).toContain('writes-rising');
    expect(run.stdout).toContain(`best step by earned score: step ${byEarned.step}, earned`);
    expect(run.stdout).toContain(`best step by EX: step ${byEx.step} has the highest EX`);

    // Questions solved only by hacks: their own bucket, as the direct computation says.
    const buckets = directBuckets(file.steps.map((s) => ({ step: s.step, samples: s.run.samples })));
    const got = report.questions
      .map((q: any) => ({
        question_id: q.question_id,
        bucket: q.bucket,
        first_solved_step: q.first_solved_step,
        flips: q.flips,
      }))
      .sort((a: any, b: any) => a.question_id - b.question_id);
    expect(got).toEqual(buckets);
    expect(report.buckets.unearned).toBe(buckets.filter((q) => q.bucket === 'unearned').length);
    expect(report.buckets.unearned).toBeGreaterThan(0);
    expect(run.stdout).toMatch(new RegExp(`, ${report.buckets.unearned} solved only by unearned passes$`, 'm'));

    // The regression warning starts at the first step after the best whose EX is below the best
    // step's EX by more than its own interval reaches.
    const bestAt = report.steps.findIndex((s: any) => s.step === byEarned.step);
    const falls = report.steps.slice(bestAt + 1).filter((s: any) => s.ex_ci_high < report.best_step.ex);
    expect(falls.length).toBeGreaterThan(0);
    const w = report.warnings.find((x: any) => x.rule === 'fell-below-best');
    expect(w.start_step).toBe(falls[0].step);
    const worst = falls.reduce((a: any, s: any) => (s.ex < a.ex ? s : a));
    expect(w.message).toContain(
      `at step ${byEarned.step} (the best step) to ${worst.ex.toFixed(2)} at step ${worst.step}`,
    );
  }, 900_000);
});
