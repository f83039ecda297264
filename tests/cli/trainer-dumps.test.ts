/**
 * Trainers' 2026 dumps built from the 13 real BIRD mini-dev prediction files
 * (tests/helpers/trainer-dumps.ts): a SkyRL eval dump series (multi-turn episodes), a TRL
 * completions Parquet series and a prime-rl traces folder import as training runs (`series`) and
 * a SkyRL dump as a run (`harness`), with per-step EX equal to `eval` of the same BIRD file,
 * sample by sample, and the trainer's own rewards kept beside our verdict. The CLI's files keep
 * each replayed SkyRL sample's turns: `harness --run-out` keeps every sample's episode (turns,
 * probes, observations, the trainer's score) and `series --series-out` keeps them in each step's
 * run; both files read back through their own readers with the turns whole.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { skyrlEpisode } from '../../src/core/formats/multi-turn-dump.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { parseSeriesFile, seriesFileJson } from '../../src/core/series/file.ts';
import { readJson, runCli, type CliRun } from '../helpers/cli.ts';
import { minidevDumpedVerdicts } from '../helpers/eval-reference.ts';
import { dumpedQuestions, MINIDEV_ARGS, PREDICTION_FILES, stepOf } from '../helpers/series-dumps.ts';
import {
  primeRlEpisode,
  predictionsOf,
  skyrlLines,
  skyrlProbes,
  trlRows,
  writePrimeRlTraces,
  writeSkyrlDumps,
  writeTrlCompletions,
} from '../helpers/trainer-dumps.ts';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'wb-trainer-dumps-'));
const ALL = PREDICTION_FILES.map((_, i) => i);
const LAST = PREDICTION_FILES.length - 1;
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
/**
 * One verdict cache for this file's `series` runs: the dumps hold the same SQL, so
 * the runs after the first take their verdicts from it (the cache is checked against --no-cache
 * elsewhere: tests/adapters/verdict-cache-property.test.ts). A SQL text a format mapped or
 * extracted differently is a miss, executed and compared as before. The `eval` references run
 * without it (`--no-cache`, a process of their own), so each comparison with `eval` has two
 * sides really executed. Under a timeout no query reaches: the dumps hold the DUMPED questions
 * (tests/helpers/series-dumps.ts: not question 247, whose answers at steps 600 and 1300 run for
 * half a minute), and the slowest left (question 232 at step 1200, seconds on a quiet machine)
 * would be a timeout past the official 30 s under load, which is never cached.
 */
const DUMPS_CACHE = ['--timeout-s', '600', '--cache', mkdtempSync(path.join(tmpdir(), 'wb-trainer-dumps-cache-'))];

/** Sample verdicts (index, ex) of `eval --no-cache` of prediction file `i` on the dumps' questions, once per test run (tests/helpers/eval-reference.ts). */
const evalVerdicts = (i: number) => minidevDumpedVerdicts(PREDICTION_FILES[i]!);
/** The questions of each dump: those whose database is here, but the slow one (139). */
const N = dumpedQuestions().length;

/** A dump folder's `series` run: the report, the series file (parsed and as written) and stderr. */
interface SeriesOfDumps {
  report: any;
  file: ReturnType<typeof parseSeriesFile>;
  text: string;
  stderr: string;
}

/** `series --out --series-out` of `dir` (one run: the tests below read different things of it). */
async function seriesOf(dir: string): Promise<SeriesOfDumps> {
  const [out, seriesOut] = ['out.json', 'run.series.json'].map((f) => path.join(dir, f)) as [string, string];
  const run = await runCli([
    'series',
    '--completions',
    dir,
    ...MINIDEV_ARGS,
    ...DUMPS_CACHE,
    '--out',
    out,
    '--series-out',
    seriesOut,
  ]);
  expect(run.code, run.stderr).toBe(0);
  const text = readFileSync(seriesOut, 'utf8');
  return { report: readJson(out), file: parseSeriesFile(text, seriesOut), text, stderr: run.stderr };
}

/**
 * The series of each trainer's dumps of the 13 files, written and run once, for whichever test
 * asks first: the per-step EX against `eval`, the mapping lines and the reward columns kept in
 * the series file are views of the same run.
 */
const seriesRuns = new Map<string, Promise<SeriesOfDumps>>();
function dumpsSeries(kind: 'skyrl' | 'trl' | 'prime-rl'): Promise<SeriesOfDumps> {
  let got = seriesRuns.get(kind);
  if (!got) {
    const dir = tempDir();
    if (kind === 'skyrl') writeSkyrlDumps(dir, ALL);
    else if (kind === 'trl') writeTrlCompletions(dir, ALL);
    else writePrimeRlTraces(dir, ALL);
    got = seriesOf(dir);
    seriesRuns.set(kind, got);
  }
  return got;
}

/** The series of `kind`'s dumps; its steps are the 13 files' and the first and last step's EX equal `eval`, sample by sample. */
async function seriesMatchesEval(kind: 'skyrl' | 'trl' | 'prime-rl') {
  const { report, file, stderr } = await dumpsSeries(kind);
  expect(report.steps.map((s: { step: number }) => s.step)).toEqual(ALL.map(stepOf));
  for (const i of [0, LAST]) {
    const ref = await evalVerdicts(i);
    expect(report.steps[i].ex).toBeCloseTo(ref.ex, 10);
    expect(file.steps[i]!.run.samples.map((s) => [s.index, s.ex])).toEqual(ref.verdicts);
  }
  return { report, file, stderr };
}

/**
 * The SkyRL dump of the last file, written and run as one run (`harness --run-out`, which has no
 * verdict cache: every verdict executed) once, for whichever test asks first: its verdicts and
 * its turns are two tests' views of the same run.
 */
let skyrlHarnessRun: Promise<{ run: CliRun; out: string }> | undefined;
function skyrlHarness(): Promise<{ run: CliRun; out: string }> {
  skyrlHarnessRun ??= (async () => {
    const dir = tempDir();
    const [dump] = writeSkyrlDumps(dir, [LAST]);
    const out = path.join(dir, 'run.json');
    const run = await runCli(['harness', '--completions', dump!, ...MINIDEV_ARGS, '--run-out', out]);
    return { run, out };
  })();
  return skyrlHarnessRun;
}

describe('trainer dumps built from the 13 real mini-dev files', () => {
  it('SkyRL eval dumps (multi-turn episodes): a series whose per-step EX equals eval, SkyRL score kept, turns counted, metrics files left out', async () => {
    const { report, file, stderr } = await seriesMatchesEval('skyrl');
    expect(stderr).toContain(
      "dumped_evals/global_step_100_evals/aggregated_results.jsonl: SkyRL's aggregated eval metrics (no samples), left out",
    );
    const probes = predictionsOf(0).reduce((s, _, k) => s + skyrlProbes(k), 0);
    const turns = mean(predictionsOf(0).map((_, k) => skyrlProbes(k) + 1));
    expect(stderr).toContain(
      `dumped_evals/global_step_100_evals/bird.jsonl (skyrl): step 100: ${N} rows, mapped ${N} by question text`,
    );
    expect(stderr).toContain(
      `${N} multi-turn episodes, ${turns.toFixed(2)} turns on average, ${probes} probes, 0 without a final SQL by the trainer's rule`,
    );
    // SkyRL's own score beside our EX: per sample in the series file, and its mean per step.
    const scores = skyrlLines(LAST).map((l) => (JSON.parse(l) as { score: number }).score);
    expect(report.steps[LAST].trainer_reward).toBeCloseTo(mean(scores), 12);
    expect(file.steps[LAST]!.trainerScores).toEqual(scores);
  }, 600_000);

  it('SkyRL eval dump as one run (harness): verdicts equal eval of the same SQL, sample by sample', async () => {
    const { run, out } = await skyrlHarness();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`bird.jsonl (skyrl): ${N} rows, mapped ${N} by question text`);
    const samples = readJson(out).samples.filter((s: { status: string }) => s.status !== 'missing-db');
    expect(samples.map((s: { index: number; ex: number }) => [s.index, s.ex])).toEqual(
      (await evalVerdicts(LAST)).verdicts,
    );
    // The SQL scored is the <solution>'s, never a probe's; the whole episode is kept as the completion.
    const bySql = new Map(predictionsOf(LAST).map(({ q, sql }) => [q.question_id, sql]));
    for (const s of samples) {
      expect(s.sql).toBe(bySql.get(s.questionId));
      expect(s.completion).toContain('<solution>');
    }
  }, 600_000);

  it('TRL completions Parquet: a series whose per-step EX equals eval, each reward column and the advantage kept beside it', async () => {
    const { report, file, stderr } = await seriesMatchesEval('trl');
    for (const i of [0, LAST]) {
      const rows = trlRows(i);
      const present = (xs: number[]) => mean(xs.filter((x) => !Number.isNaN(x)));
      const name = `completions/completions_${String(stepOf(i)).padStart(5, '0')}.parquet`;
      expect(stderr).toContain(
        `${name} (trl): step ${stepOf(i)}: ${N} rows, mapped ${N} by question text; its own mean score ` +
          `${mean(rows.map((r) => r.accuracy_reward + (Number.isNaN(r.format_reward) ? 0 : r.format_reward))).toFixed(4)}; ` +
          `its reward columns (mean): accuracy_reward ${present(rows.map((r) => r.accuracy_reward)).toFixed(4)}, ` +
          `format_reward ${present(rows.map((r) => r.format_reward)).toFixed(4)}, advantage ${present(rows.map((r) => r.advantage)).toFixed(4)}`,
      );
      // The trainer's reward per sample (the reward functions' sum, TRL's default weights) beside our verdict.
      expect(file.steps[i]!.trainerScores).toEqual(
        rows.map((r) => r.accuracy_reward + (Number.isNaN(r.format_reward) ? 0 : r.format_reward)),
      );
      expect(report.steps[i].trainer_reward).toBeCloseTo(mean(file.steps[i]!.trainerScores as number[]), 12);
    }
  }, 600_000);

  it('prime-rl traces folder: a series of the eval/all split whose per-step EX equals eval, the other splits left out', async () => {
    const { file, stderr } = await seriesMatchesEval('prime-rl');
    expect(stderr).toContain(
      'rollouts/step_100/train/all/traces.jsonl: prime-rl traces of the train/all split, left out (the eval/all split is read)',
    );
    expect(stderr).toContain(
      `rollouts/step_100/eval/all/traces.jsonl (prime-rl-traces): step 100: ${N} rows, mapped ${N} by question text`,
    );
    expect(stderr).toContain(`${N} multi-turn episodes, 2.00 turns on average, ${N} probes`);
    // Trace.reward: the rewards' weighted sum (exact_match × 1 + format × 0.5).
    expect(file.steps[0]!.trainerScores).toEqual(predictionsOf(0).map(({ exact }) => exact + 0.5));
  }, 600_000);

  /** The series file of `kind`'s dumps (the run the tests above check against `eval`), as written. */
  async function seriesOut(kind: 'skyrl' | 'trl' | 'prime-rl') {
    const { file, text } = await dumpsSeries(kind);
    expect(file.steps.map((s) => s.step)).toEqual(ALL.map(stepOf));
    // The series file round trip: written again and read back, the reward columns are unchanged.
    expect(parseSeriesFile(seriesFileJson(file), 'again.series.json').steps.map((s) => s.trainerRewards)).toEqual(
      file.steps.map((s) => s.trainerRewards),
    );
    return { file, text };
  }

  it("TRL completions Parquet: each sample's reward columns and advantage kept in the series file, exactly the dump's row", async () => {
    const { file } = await seriesOut('trl');
    for (const i of ALL) {
      const step = file.steps[i]!;
      const rows = trlRows(i);
      const byId = new Map(predictionsOf(i).map(({ q }, j) => [q.question_id, rows[j]!]));
      // Paired by sample like the trainer's score: each sample's columns are its own row's (NaN, None in pandas: null).
      expect(step.trainerRewards).toHaveLength(step.run.samples.length);
      expect(step.trainerRewards).toEqual(
        step.run.samples.map((s) => {
          const row = byId.get(s.questionId)!;
          return {
            accuracy_reward: row.accuracy_reward,
            format_reward: Number.isNaN(row.format_reward) ? null : row.format_reward,
            advantage: row.advantage,
          };
        }),
      );
      expect(step.trainerRewards!.some((r) => r!.format_reward === null)).toBe(true);
    }
  }, 600_000);

  it("prime-rl traces: each sample's reward scores kept in the series file, exactly the trace's rewards", async () => {
    const { file } = await seriesOut('prime-rl');
    for (const i of ALL) {
      const step = file.steps[i]!;
      const byId = new Map(
        predictionsOf(i).map(({ q, sql, exact }, k) => {
          const ep = primeRlEpisode(q, sql, exact, stepOf(i), k);
          const rewards = ep.traces[0]!.rewards as Record<string, { score: number }>;
          return [q.question_id, Object.fromEntries(Object.entries(rewards).map(([n, r]) => [n, r.score]))];
        }),
      );
      expect(step.trainerRewards).toEqual(step.run.samples.map((s) => byId.get(s.questionId)));
    }
  }, 600_000);

  it('SkyRL eval dumps have no reward columns: the series file has no trainerRewards', async () => {
    const { file, text } = await seriesOut('skyrl');
    for (const step of file.steps) expect(step.trainerRewards).toBeUndefined();
    expect(text).not.toContain('trainerRewards');
  }, 600_000);
});

/** Each sample of prediction file `i`'s SkyRL dump carries the turns of its line's response and the line's score. */
function expectTurnsKept(samples: readonly SampleRecord[], i: number) {
  const lines = skyrlLines(i).map((l) => JSON.parse(l) as { output_response: string; score: number });
  const preds = predictionsOf(i);
  expect(samples).toHaveLength(preds.length);
  const byId = new Map(samples.map((s) => [s.questionId, s]));
  preds.forEach(({ q }, k) => {
    const s = byId.get(q.question_id)!;
    const dumped = skyrlEpisode(lines[k]!.output_response).turns;
    const ep = s.episode!;
    expect(ep.turns.map((t) => t.text)).toEqual(dumped.filter((t) => t.role === 'assistant').map((t) => t.text));
    expect(ep.turns.map((t) => t.observation).filter((o) => o !== null)).toEqual(
      dumped.filter((t) => t.role === 'observation').map((t) => t.text),
    );
    expect(ep.turns.map((t) => t.probeSql).filter((p) => p !== null)).toHaveLength(skyrlProbes(k));
    expect(ep).toMatchObject({
      turnsUsed: skyrlProbes(k) + 1,
      finalSql: s.sql,
      endReason: 'solution',
      presetReward: lines[k]!.score,
      replay: { format: 'skyrl', stopReason: 'stop' },
    });
  });
}

// The runs checked here are the ones above (the same dumps, the same commands), read for what they keep of the turns.
describe('the turns of a replayed SkyRL dump in the CLI files', () => {
  it('harness --run-out: every sample keeps its turns and the trainer score; the run file reads back whole', async () => {
    const { run, out } = await skyrlHarness();
    expect(run.code, run.stderr).toBe(0);
    const file = parseRunFile(readFileSync(out, 'utf8'), out);
    const samples = file.samples.filter((s) => s.status !== 'missing-db');
    expectTurnsKept(samples, LAST);
    // What the file holds is what its reader gives back (no field of the episode is lost).
    const raw = JSON.parse(readFileSync(out, 'utf8')) as { samples: SampleRecord[] };
    expect(file.samples.map((s) => s.episode)).toEqual(raw.samples.map((s) => s.episode));
  }, 600_000);

  it('series --series-out: each step run keeps every sample turns', async () => {
    const { text } = await dumpsSeries('skyrl');
    // Read back from the file as written (not the parse the tests above share).
    const file = parseSeriesFile(text, 'run.series.json');
    expect(file.steps).toHaveLength(ALL.length);
    for (const i of ALL) expectTurnsKept(file.steps[i]!.run.samples, i);
  }, 600_000);
});
