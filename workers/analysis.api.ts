/**
 * The contract of the analysis worker (workers/analysis.worker.ts): a run's RL statistics
 * (pass@k, maj@k, best-of-n, GRPO groups) and the paired comparison of two runs with its
 * bootstrap, off the main thread. The worker reads the samples from IndexedDB itself, so half a
 * million sample records never cross postMessage; only the numbers come back. Errors come back
 * as data (comlink keeps only an error's name and message, the UI shows its `where`).
 */
import type { Result } from '../src/core/result.ts';
import type { ErrorData } from '../src/core/errors.ts';
import type { RunComparison } from '../src/core/rl/compare.ts';
import type { RunStatsView } from '../src/core/rl/stats-view.ts';
import type { GoldChoice } from '../src/core/run/overlay-record.ts';
import type { QuestionStep } from '../src/core/series/question-steps.ts';
import type { ResultRows } from '../src/core/report/result-rows.ts';
import type { RunFile } from '../src/core/run/types.ts';
import type { AnalysisProgress, SeriesExportKind, SeriesReportInput, SeriesView } from '../src/app/records.ts';

export type AnalysisOutcome<T> = Result<T, ErrorData>;

interface StatsJob {
  dbName: string;
  runId: string;
  /** Tie-break seed of maj@n (mulberry32), as the CLI's `stats --seed`. */
  seed: number;
  /** `corrected`: score against the corrected-gold overlay stored with the run (core/run/overlay-record.ts); default the official gold. */
  gold?: GoldChoice;
}

interface CompareJob {
  dbName: string;
  /** The baseline A. */
  runIdA: string;
  runIdB: string;
  resamples: number;
  /** mulberry32 seed, a fresh generator per bucket as the CLI's `compare`. */
  seed: number;
  /** `corrected`: each run scored against its own stored overlay (a run without one keeps the official gold). */
  gold?: GoldChoice;
}

/** A training run (series) of the store: its view, one question across its steps, or an export. */
interface SeriesJob {
  dbName: string;
  seriesId: string;
}

/** Prompts per `onPrompts` message: about 1 MB, a few ms to receive on the page. */
export const PROMPTS_PER_MESSAGE = 500;

export interface AnalysisWorkerApi {
  /**
   * With `onPrompts`, the prompts come through it, PROMPTS_PER_MESSAGE at a time (each call
   * awaited, so all have arrived when the result does) and the result's `prompts` is empty: at
   * 500,000 samples one message of every prompt (16 MB) takes 150 ms to receive on the page.
   */
  runStats(
    job: StatsJob,
    onProgress?: (p: AnalysisProgress) => void,
    onPrompts?: (chunk: RunStatsView['prompts']) => unknown,
  ): Promise<AnalysisOutcome<RunStatsView>>;
  compare(job: CompareJob, onProgress?: (p: AnalysisProgress) => void): Promise<AnalysisOutcome<RunComparison>>;
  /** Every number of the series view (src/core/series/stats.ts), reading one step's samples at a time. */
  seriesView(job: SeriesJob, onProgress?: (p: AnalysisProgress) => void): Promise<AnalysisOutcome<SeriesView>>;
  /** One question (gold index) across the steps: samples, result groups, majority SQL and its diff. */
  seriesQuestion(
    job: SeriesJob & { index: number },
    onProgress?: (p: AnalysisProgress) => void,
  ): Promise<AnalysisOutcome<QuestionStep[]>>;
  /** The series as a file to download (a Blob: hundreds of MB of series file never cross as a string). */
  seriesExport(
    job: SeriesJob & { kind: SeriesExportKind },
    onProgress?: (p: AnalysisProgress) => void,
  ): Promise<AnalysisOutcome<Blob>>;
  /**
   * The offline report of the series (docs/report.md): every step, its last step's run (with its
   * questions' texts while the dataset is stored) as the report's run, built into `template` by
   * the CLI's builder. Only the finished HTML crosses, as a Blob (its bytes are not copied into
   * the message); `name` is the series' name. With `resultRows` (the page's SQL pool), the wrong
   * samples of every step (those alone) cross to the page, which answers their first rows of each
   * side within the budget; the report keeps them as a run's report does.
   */
  seriesReport(
    job: SeriesJob & SeriesReportInput,
    onProgress?: (p: AnalysisProgress) => void,
    resultRows?: (runs: RunFile[]) => Promise<ResultRows | null>,
  ): Promise<AnalysisOutcome<{ name: string; html: Blob }>>;
}
