/**
 * The analysis worker's body (see analysis.api.ts), over a port that reads a stored run: in the
 * worker that port is IndexedDB (analysis.worker.ts), in the node tests a plain object. The
 * numbers are the core's own (`computeRunStats`, `compareRuns`) with the CLI's generators, so
 * they equal `npm run cli -- stats` and `compare` on the exported run files.
 */
import { toErrorData, WorkbenchError } from '../src/core/errors.ts';
import { comparedFields, compareRuns, type ComparedRun } from '../src/core/rl/compare.ts';
import { mulberry32 } from '../src/core/util/rng.ts';
import { computeRunStats } from '../src/core/rl/run-stats.ts';
import { toStatsView } from '../src/core/rl/stats-view.ts';
import { toRunFile } from '../src/core/runfile/export.ts';
import type { RunFile, RunHeader, SampleRecord } from '../src/core/run/types.ts';
import { compileRewardFormula } from '../src/core/eval/reward.ts';
import {
  overlayByKey,
  overlayKey,
  withCorrectedGold,
  type GoldChoice,
  type GoldOverlayRecord,
} from '../src/core/run/overlay-record.ts';
import { reportPayload, withQuestionTexts, type ReportInput } from '../src/core/report/payload.ts';
import { buildReportHtml } from '../src/core/report/report-file.ts';
import { isWrongSample } from '../src/core/report/result-rows.ts';
import type { Question } from '../src/core/types.ts';
import {
  excludedPresent,
  keptPositions,
  mergeExclusions,
  withoutExcluded,
  type Exclusion,
} from '../src/core/eval/exclusions.ts';
import { readSeriesFileSteps, seriesFileParts } from '../src/core/series/file.ts';
import type { SeriesStep, TrainerRewards } from '../src/core/series/model.ts';
import { questionAcrossSteps } from '../src/core/series/question-steps.ts';
import {
  seriesReportOf,
  seriesSample,
  stepCells,
  stepStats,
  type SeriesReport,
  type StepCells,
  type StepStats,
} from '../src/core/series/stats.ts';
import {
  questionStepRows,
  SERIES_QUESTION_STEPS_TABLE,
  SERIES_STEPS_TABLE,
  seriesReportJson,
  seriesTableMetadata,
} from '../src/core/series/tables.ts';
import type { TableSchema } from '../src/core/views/tables.ts';
import { streamGzip } from '../src/adapters/gzip-stream.ts';
import { blobSink, writeParquetTable } from '../src/adapters/parquet/write-parquet.ts';
import type { AnalysisProgress, SeriesRecord, SeriesView } from '../src/app/records.ts';
import { PROMPTS_PER_MESSAGE, type AnalysisOutcome, type AnalysisWorkerApi } from './analysis.api.ts';

/** One store's runs as the engine reads them. */
export interface StoredRuns {
  header(runId: string): Promise<RunHeader>;
  /**
   * The run's samples in (index, sample) order; `onStep(done, total)` as they are read; `keep`
   * maps each as it is read (the comparison keeps a few fields of each).
   */
  samples<T>(runId: string, onStep: (done: number, total: number) => void, keep: (s: SampleRecord) => T): Promise<T[]>;
  /** The corrected-gold overlay stored with the run, if any (docs/gold-overlays.md). */
  overlay(runId: string): Promise<GoldOverlayRecord | undefined>;
  /** The questions excluded from the metrics of a run or training run (by its id); absent in test doubles that keep none. */
  exclusions?(ownerId: string): Promise<Exclusion[]>;
  /** The training runs a run is a step of (their exclusions hold for the run too); absent in test doubles. */
  seriesOfRun?(runId: string): Promise<SeriesRecord[]>;
  /** A training run's record, the trainer's scores of one of its steps (in its samples' order), one question's samples of a run. */
  series(seriesId: string): Promise<SeriesRecord>;
  scores(seriesId: string, step: number): Promise<Array<number | null>>;
  /** The trainer's reward columns of each sample of a step (same order); empty when none were stored; absent in test doubles that keep none. */
  rewards?(seriesId: string, step: number): Promise<Array<TrainerRewards | null>>;
  questionSamples(runId: string, index: number): Promise<SampleRecord[]>;
  /** `questionSamples` with where the first is in the run's (index, sample) order (its trainer scores' position). */
  questionSamplesAt?(runId: string, index: number): Promise<{ offset: number; samples: SampleRecord[] }>;
  /** A stored dataset's questions (the report adds their texts to its run); undefined when it is not stored. */
  questions(datasetId: string): Promise<readonly Question[] | undefined>;
  close(): void;
}

/** A step's trainer scores beside its samples; all null when the store holds none (runs grouped by hand) or not one per sample. */
const scoresFor = (scores: Array<number | null>, samples: number): Array<number | null> =>
  scores.length === samples ? scores : new Array<number | null>(samples).fill(null);

/** A step's reward columns beside its samples; undefined when the store holds none or not one per sample. */
async function rewardsFor(
  runs: StoredRuns,
  seriesId: string,
  step: number,
  samples: number,
): Promise<Array<TrainerRewards | null> | undefined> {
  const rewards = (await runs.rewards?.(seriesId, step)) ?? [];
  return rewards.length === samples && samples > 0 ? rewards : undefined;
}

/** What is excluded from a run's metrics: its own exclusions and those of every training run it is a step of. */
async function runExclusions(runs: StoredRuns, runId: string): Promise<Exclusion[]> {
  const series = (await runs.seriesOfRun?.(runId)) ?? [];
  return mergeExclusions(
    await runs.exclusions?.(runId),
    ...(await Promise.all(series.map((s) => runs.exclusions?.(s.id)))),
  );
}

/**
 * The report of a stored series, reading one step's samples at a time and keeping only what the
 * statistics read; the series' excluded questions are left out of every step (with their trainer scores).
 */
async function storedSeriesView(
  runs: StoredRuns,
  seriesId: string,
  report: (p: AnalysisProgress) => void,
): Promise<SeriesView> {
  const series = await runs.series(seriesId);
  const exclusions = (await runs.exclusions?.(seriesId)) ?? [];
  const stats: StepStats[] = [];
  const cells: Array<{ step: number; cells: StepCells }> = [];
  const out: SeriesView['runs'] = [];
  for (const s of series.steps) {
    const header = await runs.header(s.runId);
    const read = await runs.samples(
      s.runId,
      (done, total) => report({ phase: 'reading', runId: s.runId, done, total }),
      seriesSample,
    );
    const allScores = scoresFor(await runs.scores(seriesId, s.step), read.length);
    const at = keptPositions(read, exclusions);
    const samples = at ? at.map((i) => read[i]!) : read;
    const scores = at ? at.map((i) => allScores[i]!) : allScores;
    stats.push(
      stepStats({
        step: s.step,
        samples,
        trainerScores: scores,
        metrics: header.config.metrics,
        wallTime: s.wallTime,
        wallTimeSource: s.wallTimeSource ?? null,
      }),
    );
    cells.push({ step: s.step, cells: stepCells(samples) });
    out.push({ step: s.step, runId: s.runId, name: header.name, samples: samples.length });
  }
  return { series, report: seriesReportOf(stats, cells), runs: out, exclusions };
}

/** A stored series' steps as its series file holds them (every sample), one step read at a time. */
async function* storedSteps(
  runs: StoredRuns,
  series: SeriesRecord,
  report: (p: AnalysisProgress) => void,
): AsyncGenerator<SeriesStep> {
  for (const s of series.steps) {
    const samples = await runs.samples(
      s.runId,
      (done, total) => report({ phase: 'reading', runId: s.runId, done, total }),
      (x) => x,
    );
    const trainerRewards = await rewardsFor(runs, series.id, s.step, samples.length);
    yield {
      step: s.step,
      wallTime: s.wallTime,
      wallTimeSource: s.wallTimeSource ?? null,
      source: s.source,
      run: toRunFile(await runs.header(s.runId), samples),
      trainerScores: scoresFor(await runs.scores(series.id, s.step), samples.length),
      ...(trainerRewards ? { trainerRewards } : {}),
      // How the step was read (rows paired and not): kept with the step, carried into the file and the report.
      ...(s.notes?.length ? { notes: s.notes } : {}),
    };
  }
}

async function parquetOf<R>(table: TableSchema<R>, rows: readonly R[]): Promise<Blob> {
  const out = blobSink();
  await writeParquetTable(table, rows, out.sink, { metadata: seriesTableMetadata(table) });
  return out.blob();
}

function reportJson(series: SeriesRecord, report: SeriesReport, exclusions: readonly Exclusion[] = []): string {
  return (
    JSON.stringify(
      seriesReportJson(report, { stepRule: series.stepRule, dataset: series.dataset, exclusions }),
      null,
      1,
    ) + '\n'
  );
}

async function outcome<T>(fn: () => Promise<T>): Promise<AnalysisOutcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: toErrorData(err) };
  }
}

async function readRun(
  runs: StoredRuns,
  runId: string,
  report: (p: AnalysisProgress) => void,
  gold: GoldChoice = 'official',
): Promise<RunFile> {
  const header = await runs.header(runId);
  const samples = await runs.samples(
    runId,
    (done, total) => report({ phase: 'reading', runId, done, total }),
    (s) => s,
  );
  if (gold === 'official') return toRunFile(header, samples);
  // Against the corrected gold: its verdicts, and each reward again from the run's formula.
  const overlay = await runs.overlay(runId);
  return toRunFile(
    header,
    withCorrectedGold(samples, overlay, compileRewardFormula(header.config.rewardFormula || 'ex')),
  );
}

/** The compared fields against the run's corrected gold (EX and status; the rest is the sample's identity). */
async function correctedLean(
  runs: StoredRuns,
  runId: string,
  samples: ComparedRun['samples'],
  gold: GoldChoice = 'official',
): Promise<ComparedRun['samples']> {
  if (gold === 'official') return samples;
  const by = overlayByKey(await runs.overlay(runId));
  if (by.size === 0) return samples;
  return samples.map((s) => {
    const c = by.get(overlayKey(s.index, s.sample));
    return c ? { ...s, ex: c.ex, status: c.status } : s;
  });
}

export function createAnalysisEngine(open: (dbName: string) => Promise<StoredRuns>): AnalysisWorkerApi {
  /** `read` over the stored runs of database `dbName`, closed again whatever happens. */
  const reading = async <T>(dbName: string, read: (runs: StoredRuns) => Promise<T>): Promise<T> => {
    const runs = await open(dbName);
    try {
      return await read(runs);
    } finally {
      runs.close();
    }
  };
  return {
    runStats(job, onProgress, onPrompts) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(async () => {
        const { file, exclusions } = await reading(job.dbName, async (runs) => ({
          file: await readRun(runs, job.runId, report, job.gold),
          exclusions: await runExclusions(runs, job.runId),
        }));
        const stats = computeRunStats(withoutExcluded(file.samples, exclusions), {
          rng: mulberry32(job.seed),
          onProgress: (done, total) => report({ phase: 'computing', runId: job.runId, done, total }),
        });
        const excluded = excludedPresent(file.samples, exclusions);
        const view = { ...toStatsView(stats), ...(excluded > 0 ? { excluded } : {}) };
        if (!onPrompts) return view;
        for (let i = 0; i < view.prompts.length; i += PROMPTS_PER_MESSAGE)
          await onPrompts(view.prompts.slice(i, i + PROMPTS_PER_MESSAGE));
        return { ...view, prompts: [] };
      });
    },
    compare(job, onProgress) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(async () => {
        // 9 fields per sample, not the SQL texts: two 500,000-sample runs whole were a heap whose
        // teardown, when the worker ended, slowed the page drawing the result (50-60 ms tasks).
        const lean = async (runs: StoredRuns, runId: string): Promise<ComparedRun> => ({
          run: await runs.header(runId),
          samples: await correctedLean(
            runs,
            runId,
            await runs.samples(
              runId,
              (done, total) => report({ phase: 'reading', runId, done, total }),
              comparedFields,
            ),
            job.gold,
          ),
        });
        const [a, b, exclusions] = await reading(
          job.dbName,
          async (runs) =>
            [
              await lean(runs, job.runIdA),
              await lean(runs, job.runIdB),
              // A question excluded from either run is left out of both: the comparison stays paired.
              mergeExclusions(await runExclusions(runs, job.runIdA), await runExclusions(runs, job.runIdB)),
            ] as const,
        );
        const kept = (r: ComparedRun): ComparedRun => ({ ...r, samples: withoutExcluded(r.samples, exclusions) });
        const comparison = compareRuns(kept(a), kept(b), {
          resamples: job.resamples,
          makeRng: () => mulberry32(job.seed),
          onProgress: (done, total) => report({ phase: 'computing', runId: job.runIdB, done, total }),
        });
        const excluded = excludedPresent([...a.samples, ...b.samples], exclusions);
        return excluded > 0 ? { ...comparison, excluded } : comparison;
      });
    },
    seriesView(job, onProgress) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(() => reading(job.dbName, (runs) => storedSeriesView(runs, job.seriesId, report)));
    },
    seriesQuestion(job) {
      return outcome(() =>
        reading(job.dbName, async (runs) => {
          const series = await runs.series(job.seriesId);
          const steps = [];
          for (const s of series.steps) {
            const { offset, samples } = runs.questionSamplesAt
              ? await runs.questionSamplesAt(s.runId, job.index)
              : { offset: -1, samples: await runs.questionSamples(s.runId, job.index) };
            const all = await runs.scores(job.seriesId, s.step);
            // The trainer's score of each of the question's samples (in the run's order), null where none.
            const trainerScores = samples.map((_, k) => (offset < 0 ? null : (all[offset + k] ?? null)));
            // The reward columns of each, the same way (absent where the step has none or the samples' place is unknown).
            const rewards = offset < 0 ? [] : ((await runs.rewards?.(job.seriesId, s.step)) ?? []);
            const trainerRewards = rewards.length > 0 ? samples.map((_, k) => rewards[offset + k] ?? null) : undefined;
            steps.push({
              step: s.step,
              runId: s.runId,
              samples,
              trainerScores,
              ...(trainerRewards ? { trainerRewards } : {}),
            });
          }
          return questionAcrossSteps(steps);
        }),
      );
    },
    seriesExport(job, onProgress) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(() =>
        reading(job.dbName, async (runs) => {
          if (job.kind === 'series-file') {
            const series = await runs.series(job.seriesId);
            const exclusions = (await runs.exclusions?.(job.seriesId)) ?? [];
            const parts: string[] = [];
            for await (const part of seriesFileParts({ ...series, exclusions }, storedSteps(runs, series, report)))
              parts.push(part);
            return new Blob(parts, { type: 'application/json' });
          }
          const view = await storedSeriesView(runs, job.seriesId, report);
          if (job.kind === 'report')
            return new Blob([reportJson(view.series, view.report, view.exclusions)], { type: 'application/json' });
          if (job.kind === 'steps-parquet') return parquetOf(SERIES_STEPS_TABLE, view.report.steps);
          return parquetOf(SERIES_QUESTION_STEPS_TABLE, questionStepRows(view.report));
        }),
      );
    },
    seriesReport(job, onProgress, resultRows) {
      const report = (p: AnalysisProgress) => void onProgress?.(p);
      return outcome(async () => {
        const read = await reading(job.dbName, async (runs): Promise<ReportInput> => {
          const series = await runs.series(job.seriesId);
          // The series file's steps as its reader gives them back, without the file's text.
          const exclusions = (await runs.exclusions?.(job.seriesId)) ?? [];
          const file = await readSeriesFileSteps(
            { ...series, ...(exclusions.length ? { exclusions } : {}) },
            storedSteps(runs, series, report),
            `training run ${job.seriesId}`,
          );
          const last = file.steps.at(-1);
          if (!last) throw new WorkbenchError('NOT_FOUND', 'the training run has no step yet');
          const run = withQuestionTexts(last.run, await runs.questions(last.run.run.dataset.id));
          // What the store kept with each step beyond its series file: its import notes and verdict counts.
          const seriesSteps = series.steps.flatMap((s) =>
            s.notes?.length || s.executions
              ? [
                  {
                    step: s.step,
                    ...(s.notes?.length ? { notes: s.notes } : {}),
                    ...(s.executions ? { executions: s.executions } : {}),
                  },
                ]
              : [],
          );
          return {
            runs: [run],
            compare: false,
            series: file,
            seriesSteps,
            product: job.product,
            createdAt: job.createdAt,
          };
        });
        // Every step's wrong samples (only those cross), step by step, once the store is closed.
        const wrong = read.series!.steps.map((s) => ({ ...s.run, samples: s.run.samples.filter(isWrongSample) }));
        const rows = resultRows ? await resultRows(wrong) : null;
        const input: ReportInput = { ...read, ...(rows ? { resultRows: rows } : {}) };
        const html = await buildReportHtml(job.template, reportPayload(input), streamGzip);
        return { name: input.series!.series.name, html: new Blob([html], { type: 'text/html' }) };
      });
    },
  };
}
