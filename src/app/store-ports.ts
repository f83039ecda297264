/**
 * What the screens receive, by concern: storage facts, a dataset repository and a run
 * repository (persistence only, idb-store.ts), and the run service that evaluates, resumes,
 * self-tests and generates (src/app/run-service.ts). Each is a small port that a test fakes
 * with a plain object; src/ui/browser-store.ts builds all four over one IndexedDB connection
 * for the composition root (src/ui/main.ts).
 */
import type { Engine } from '../core/engine/engine.ts';
import type { DbSource } from './db-source.ts';
import type { Exclusion } from '../core/eval/exclusions.ts';
import type { SuiteCache } from '../core/ts/suite.ts';
import type { BuiltPrompt } from '../core/prompt/build-prompt.ts';
import type { RunComparison } from '../core/rl/compare.ts';
import type { RunStatsView } from '../core/rl/stats-view.ts';
import type { RunFile, RunHeader, SampleRecord } from '../core/run/types.ts';
import type {
  BatchExportFiles,
  BatchExportRequest,
  DatasetCard,
  DatasetRecord,
  GenerationHooks,
  GenerationPlan,
  GenerationPreviewSpec,
  GenerationRunRequest,
  GenerationRunResult,
  AnalysisProgress,
  GoldSelfTestResult,
  SaveAttemptRequest,
  ImportProgress,
  ImportSource,
  ReplayCheck,
  RunHooks,
  RunRequest,
  SampleRubric,
  StorageInfo,
  StoredDatabase,
} from './records.ts';

export type * from './records.ts';
import type {
  SeriesExportKind,
  SeriesFolderRecord,
  SeriesReportInput,
  SeriesRecord,
  SeriesStepRecord,
  SeriesView,
} from './records.ts';
import type { QuestionStep } from '../core/series/question-steps.ts';
import type { ResultRows } from '../core/report/result-rows.ts';
import type { TrainerRewards } from '../core/series/model.ts';
import type { OverlayComparison } from '../core/run/gold-overlay-run.ts';
import type { GoldChoice, GoldOverlayRecord } from '../core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../core/run/version-effects.ts';

/** How much the origin stores, and whether the browser may evict it. */
export interface StoragePort {
  estimate(): Promise<StorageInfo>;
  requestPersistence(): Promise<boolean>;
}

/** Datasets and their database files (one stored copy per sha256). */
export interface DatasetRepository {
  import(
    source: ImportSource,
    hooks?: { signal?: AbortSignal; onProgress?: (p: ImportProgress) => void },
  ): Promise<DatasetRecord>;
  list(): Promise<DatasetRecord[]>;
  get(datasetId: string): Promise<DatasetRecord | undefined>;
  card(datasetId: string): Promise<DatasetCard>;
  /** Deletes the dataset and the database files no dataset or run refers to any more. */
  delete(datasetId: string): Promise<void>;
  /** Every stored database file, one per sha256. */
  databases(): Promise<StoredDatabase[]>;
  /** Gold positions of a dataset's questions whose database is stored. */
  questionsWithDatabase(datasetId: string): Promise<number[]>;
  /** The stored databases of a dataset or run (db_id -> sha256) as the SQL pool reads them. */
  source(databases: Record<string, string>, datasetName: string): DbSource;
  /** Where metric ts keeps the test suites of these databases (by sha256), as runs do. */
  suiteCache(databases: Record<string, string>): SuiteCache;
}

/** Runs as stored: headers, samples in blocks, run files. */
export interface RunRepository {
  list(): Promise<RunHeader[]>;
  get(runId: string): Promise<RunHeader | undefined>;
  /** Samples of a run in (index, sample) order; `offset`/`limit` page through large runs. */
  samples(runId: string, page?: { offset: number; limit: number }): Promise<SampleRecord[]>;
  /** The samples of one question (its gold index) in sample order, reading only the blocks that hold them once the run is sorted. */
  questionSamples(runId: string, index: number): Promise<SampleRecord[]>;
  sampleCount(runId: string): Promise<number>;
  rename(runId: string, name: string): Promise<void>;
  delete(runId: string): Promise<void>;
  /** The run as a run file (header + samples); see core/runfile/export.ts for JSON, BIRD predictions and CSV. */
  export(runId: string): Promise<RunFile>;
  /**
   * Stores a run file (validated first), or the runs of an offline report (docs/report.md) as
   * their run files would be; refuses a run that is already stored. Returns the runs stored.
   */
  importFile(text: string, fileName: string): Promise<RunHeader[]>;
  /** The same from the picked file, read, validated and stored in the import worker (a 100,000-sample file is ~70 MB of JSON). */
  importBlob?(file: Blob, fileName: string): Promise<RunHeader[]>;
  /** Ids of runs being evaluated right now in any tab (Web Locks); a `running` run not listed was interrupted. */
  activeIds(): Promise<string[]>;
  /**
   * Writes a rubric scoring into the run's samples (`rubric`, and `rubricScore` for best-of-n
   * and exports), in one transaction; samples not listed keep what they had. Refused while the
   * run is being evaluated. Returns how many samples were updated.
   */
  setSampleRubrics(runId: string, scored: readonly SampleRubric[]): Promise<number>;
  /** The stored plan (spec, questions) of a generation run; undefined for other runs. */
  generationPlan(runId: string): Promise<GenerationPlan | undefined>;
  /** The questions excluded from the metrics of a run or a training run (by its id); empty when none (absent in test doubles). */
  exclusions?(ownerId: string): Promise<Exclusion[]>;
  /** Replaces them (an empty list removes the record); NOT_FOUND when the run or series is not stored. */
  setExclusions?(ownerId: string, owner: 'run' | 'series', exclusions: readonly Exclusion[]): Promise<void>;
}

/** Everything that evaluates: each run goes through one session (lock, writer, finish, quota message). */
export interface RunService {
  /** Pairs a predictions file with the dataset, creates the run, evaluates it, stores each sample as it finishes. */
  startReplay(req: RunRequest, hooks?: RunHooks): Promise<RunHeader>;
  /** Pairs a predictions file with a dataset without running it: what the run would refuse or warn about. */
  checkReplay(
    req: Pick<RunRequest, 'datasetId' | 'predictions'> & { fence: RunRequest['config']['fence'] },
  ): Promise<ReplayCheck>;
  /** Continues a replay run whose tab was closed: only samples not yet stored are evaluated. */
  resume(runId: string, hooks?: RunHooks): Promise<RunHeader>;
  /** Runs every gold query as its own prediction (stored as a run); lists the golds that fail or time out. */
  goldSelfTest(datasetId: string, hooks?: RunHooks): Promise<GoldSelfTestResult>;
  /** Prompts, generates with a loaded engine, scores and stores each sample as produced. */
  startGeneration(req: GenerationRunRequest, engine: Engine, hooks?: GenerationHooks): Promise<GenerationRunResult>;
  /** Continues a paused or interrupted generation run: only (index, sample) keys not stored are generated. */
  resumeGeneration(runId: string, engine: Engine, hooks?: GenerationHooks): Promise<GenerationRunResult>;
  /** The prompt a generation run would send for one question (the Generate screen's preview). */
  previewPrompt(
    datasetId: string,
    index: number,
    spec: GenerationPreviewSpec,
    engine: Engine | null,
  ): Promise<BuiltPrompt>;
  /** Table -> column names of each stored database of a run (databases no longer stored are left out). */
  databaseSchemas(runId: string): Promise<Record<string, Record<string, string[]>>>;
  /** Scores the run's samples against a corrected-gold overlay too: both totals and the items whose verdict changes. */
  compareGoldOverlay?(
    runId: string,
    overlay: { name: string; text: string },
    signal?: AbortSignal,
  ): Promise<OverlayComparison>;
  /** Scores the overlay and stores it with the run (replacing an earlier one): it survives a reload (docs/gold-overlays.md). */
  attachGoldOverlay?(
    runId: string,
    overlay: { name: string; text: string },
    signal?: AbortSignal,
  ): Promise<GoldOverlayRecord>;
  /** The overlay stored with the run, if any. */
  goldOverlay?(runId: string): Promise<GoldOverlayRecord | undefined>;
  removeGoldOverlay?(runId: string): Promise<void>;
  /** Re-runs the run's version-sensitive samples on the older SQLite (3.39.3) and stores the verdicts (docs/version-effects.md). */
  measureVersionEffects?(runId: string, signal?: AbortSignal): Promise<VersionCheckRecord>;
  /** The stored version check of the run, if measured. */
  versionCheck?(runId: string): Promise<VersionCheckRecord | undefined>;
  /**
   * Stores a playground attempt as the next sample of its question in the dataset's scratch run
   * (made on first use, named "<dataset>: playground attempts"), evaluated like any replay, so it
   * shows in the explorer, the RL view and exports.
   */
  saveAttempt(req: SaveAttemptRequest, hooks?: RunHooks): Promise<{ run: RunHeader; index: number; sample: number }>;
  /** A generation plan as an OpenAI batch input JSONL and its plan file (or only some lines of an existing plan). */
  exportBatch(datasetId: string, req: BatchExportRequest): Promise<BatchExportFiles>;
}

export interface AnalysisHooks {
  /** Aborting stops the computation (the worker is terminated) and rejects with an AbortError. */
  signal?: AbortSignal;
  onProgress?: (p: AnalysisProgress) => void;
  /** Score against the run's stored corrected-gold overlay instead of the official gold (docs/gold-overlays.md). */
  gold?: GoldChoice;
}

/** A training run's report: `resultRows` is handed the wrong samples of every step and answers their rows (report-rows.ts). */
interface SeriesReportHooks extends AnalysisHooks {
  resultRows?: (runs: RunFile[]) => Promise<ResultRows | null>;
}

/**
 * Heavy statistics of stored runs, computed off the main thread (the analysis worker reads the
 * samples from IndexedDB itself): the RL view's statistics and the paired comparison.
 */
export interface AnalysisPort {
  runStats(runId: string, seed: number, hooks?: AnalysisHooks): Promise<RunStatsView>;
  compare(
    runIdA: string,
    runIdB: string,
    options: { resamples: number; seed: number; gold?: GoldChoice },
    hooks?: AnalysisHooks,
  ): Promise<RunComparison>;
}

/** Training runs (series) as stored: records, trainer scores, followed folders (series-repository.ts). */
export interface SeriesRepository {
  /** Every series, newest first. */
  list(): Promise<SeriesRecord[]>;
  /** The series; NOT_FOUND naming it when it is not stored. */
  get(seriesId: string): Promise<SeriesRecord>;
  /** Stores a new series; refuses an id already stored. */
  create(series: SeriesRecord): Promise<void>;
  /**
   * Adds a step (its run stored already), its trainer scores and, where the dump has them, each
   * sample's reward columns, in one transaction; refuses a step already there.
   */
  addStep(
    seriesId: string,
    step: SeriesStepRecord,
    scores: Array<number | null>,
    rewards?: Array<TrainerRewards | null>,
  ): Promise<SeriesRecord>;
  rename(seriesId: string, name: string): Promise<void>;
  /** Deletes the series, its scores, its folder and the runs it made; databases no longer used go too. */
  delete(seriesId: string): Promise<void>;
  /** The series a run is a step of. */
  ofRun(runId: string): Promise<SeriesRecord[]>;
  /** The trainer's scores of a step, in the run's (index, sample) order (empty when none were stored). */
  scores(seriesId: string, step: number): Promise<Array<number | null>>;
  /** Each sample's reward columns from the trainer's dump, in the run's (index, sample) order (empty when none were stored). */
  rewards(seriesId: string, step: number): Promise<Array<TrainerRewards | null>>;
  folder(seriesId: string): Promise<SeriesFolderRecord | undefined>;
  putFolder(folder: SeriesFolderRecord): Promise<void>;
  deleteFolder(seriesId: string): Promise<void>;
}

/** The series view's numbers, off the main thread (the analysis worker reads the steps' samples itself). */
export interface SeriesAnalysisPort {
  seriesView(seriesId: string, hooks?: AnalysisHooks): Promise<SeriesView>;
  /** One question across the steps: each step's samples, result groups, majority SQL and its diff. */
  seriesQuestion(seriesId: string, index: number, hooks?: AnalysisHooks): Promise<QuestionStep[]>;
  /** `report`: the CLI's `series --out` JSON; the two Parquet tables; the shareable series file. */
  seriesExport(seriesId: string, kind: SeriesExportKind, hooks?: AnalysisHooks): Promise<Blob>;
  /**
   * The series' offline report (docs/report.md), built in the worker from the stored steps: the
   * finished HTML and the series' name.
   */
  seriesReport(
    seriesId: string,
    input: SeriesReportInput,
    hooks?: SeriesReportHooks,
  ): Promise<{ name: string; html: Blob }>;
}

/** The four ports over one IndexedDB database, as the composition root hands them out. */
export interface WorkbenchStore {
  readonly storage: StoragePort;
  readonly datasets: DatasetRepository;
  readonly runs: RunRepository;
  readonly service: RunService;
  /** Statistics in a worker; absent in test doubles, where the screens compute on the page. */
  readonly analysis?: AnalysisPort;
  /** Closes the IndexedDB connection (tests; a page being left). */
  close(): void;
}
