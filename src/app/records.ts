/**
 * The records of the browser's store (datasets, databases, run requests, results of the run
 * service) as plain data: what the store's ports, the import worker's contract and the UI share.
 * It imports only the core, so every side can import it without a cycle.
 */
import type { EvalEvent } from '../core/eval/executor.ts';
import type { PairingFinding } from '../core/formats/pairing.ts';
import type { GenerationOutcome, GenerationProgress, GenerationSpec } from '../core/run/generation.ts';
import type { BatchExport, BatchPlan } from '../core/batch/batch.ts';
import type { EvalItem, GoldEntry, Question } from '../core/types.ts';
import type { FileRef, RunConfig, RunHeader } from '../core/run/types.ts';
import type { ItemStatus } from '../core/types.ts';
import type { RubricScores } from '../core/rubric/scores.ts';
import type { HarnessFormat } from '../core/formats/harness.ts';
import type { SeriesReport } from '../core/series/stats.ts';
import type { TrainerRewards, WallTimeSource } from '../core/series/model.ts';
import type { Exclusion } from '../core/eval/exclusions.ts';
import type { BirdTablesEntry } from '../core/prompt/omnisql-schema.ts';
import type { PolicyPreset } from '../core/prompt/presets.ts';

export interface StoredDatabase {
  /** sha256 of the file: one stored copy per distinct database, shared by every dataset and run. */
  sha256: string;
  dbId: string;
  sizeBytes: number;
  /** Name and version of a published release when the sha256 matches DB_REFERENCE-style fingerprints. */
  knownAs: string | null;
  storedAt: string;
}

export interface DatasetRecord {
  id: string;
  name: string;
  kind: 'bird' | 'spider' | 'custom';
  createdAt: string;
  questionsFile: FileRef;
  goldFile: FileRef | null;
  questions: Question[];
  gold: GoldEntry[];
  /** db_id -> sha256 of the stored database; a db_id absent here has no database. */
  databases: Record<string, string>;
  /**
   * The entries of the dataset's tables.json (BIRD's dev_tables.json, Spider's tables.json) for
   * the databases its questions use, when the import had one: the column comments and types
   * OmniSQL's schema renderer reads (presets omnisql-v1, arctic-text2sql-r1-v1, skyrl-sql-v1).
   */
  tables?: BirdTablesEntry[];
  /** The tables.json they were read from. */
  tablesFile?: FileRef;
}

export interface DatasetCard {
  dataset: DatasetRecord;
  byDifficulty: Record<string, number>;
  byDb: Record<string, { questions: number; sizeBytes: number | null; sha256: string | null; knownAs: string | null }>;
  questionsWithoutDb: number[];
}

export interface ImportProgress {
  phase: 'reading' | 'hashing' | 'storing' | 'parsing' | 'done';
  file: string;
  doneBytes: number;
  totalBytes: number;
}

/** How far the analysis worker is with a run's statistics or a comparison (workers/analysis.api.ts). */
export interface AnalysisProgress {
  /** `reading`: samples from IndexedDB (done/total in samples); `computing`: prompts or bootstrap buckets. */
  phase: 'reading' | 'computing';
  /** The run being read (comparisons read two). */
  runId: string;
  done: number;
  total: number;
}

/** What a user hands the importer: files from a picker, a dropped folder, or a zip. */
export interface ImportSource {
  kind: 'bird' | 'spider' | 'custom';
  name: string;
  /** Every file with its relative path (`dev_databases/x/x.sqlite`, `dev.json`, a .zip...). */
  files: { path: string; file: Blob }[];
  /** Path (as in `files`) of the questions file, when the user chose it; otherwise it is found by name. */
  questionsPath?: string;
  /** Path of the gold file, when the user chose it; without one found, the questions' own SQL is the gold. */
  goldPath?: string;
}

/** A predictions file as the app hands it over: text (BIRD JSON, JSONL, .sql), or a Parquet file as a Blob read by byte range. */
export type PredictionsInput = { name: string; text: string } | { name: string; blob: Blob };

export interface RunRequest {
  name: string;
  datasetId: string;
  subset: { description: string; indices: number[] };
  predictions: PredictionsInput;
  config: RunConfig;
}

export interface StorageInfo {
  usage: number;
  quota: number;
  persisted: boolean;
}

/** A gold query that does not pass as its own prediction (error, timeout, missing database). */
export interface GoldFailure {
  index: number;
  questionId: number;
  dbId: string;
  status: ItemStatus;
  error: string | null;
  sql: string;
}

export interface GoldSelfTestResult {
  /** The self-test, stored as a run like any other. */
  run: RunHeader;
  failures: GoldFailure[];
  /** Gold checks (src/core/eval/gold-checks.ts) of the tested golds: no rows, count vs list, date, row order. */
  goldIssues?: GoldIssueRow[];
}

export interface GoldIssueRow {
  index: number;
  questionId: number;
  dbId: string;
  issues: { kind: string; reason: string }[];
}

/** One sample's rubric scores, as written into the run by `setSampleRubrics`. */
export interface SampleRubric {
  index: number;
  sample: number;
  rubric: RubricScores;
  /** The scalar reward the run uses (explicit, else implicit, else Likert), or null. */
  rubricScore: number | null;
}

/** A predictions file paired with a dataset before a run: the findings that would refuse it, the notes, and the samples it holds. */
export interface ReplayCheck {
  findings: PairingFinding[];
  warnings: string[];
  samples: number;
  questions: number;
}

/** Progress and cancellation of a replay run, a resume or a self-test. */
export interface RunHooks {
  signal?: AbortSignal;
  onEvent?: (e: EvalEvent) => void;
}

export interface GenerationRunRequest {
  name: string;
  datasetId: string;
  /** Gold positions to ask; empty: every question with a stored database. */
  subset: { description: string; indices: number[] };
  spec: GenerationSpec;
  config: RunConfig;
}

/** Stored in `runInputs.generation`: what a resume needs without the dataset. */
export interface GenerationPlan {
  spec: GenerationSpec;
  questions: Question[];
  gold: { sql: string }[];
  /** The dataset's tables.json entries of the run's databases, for a preset that renders OmniSQL's schema. */
  tables?: BirdTablesEntry[];
}

export interface GenerationHooks {
  /** Abort with reason `pause` to pause (resumable), anything else cancels. */
  signal?: AbortSignal;
  onProgress?: (p: GenerationProgress) => void;
  /** Called once the header is stored (the run's id is known). */
  onStart?: (run: RunHeader) => void;
}

export type GenerationPreviewSpec = Pick<GenerationSpec, 'template' | 'sampleRows' | 'descriptions'> & {
  maxTokens: number;
};

export interface GenerationRunResult {
  run: RunHeader;
  outcome: GenerationOutcome;
}

export interface BatchExportRequest {
  /** Gold positions; empty: every question with a stored database. */
  indices: number[];
  spec: Omit<GenerationSpec, 'engine'>;
  contextWindow: number | null;
  /** An existing plan: export only these custom_ids of it (the missing lines), ignoring the rest of the request. */
  redo?: { plan: BatchPlan; customIds: string[] };
  /** A single-turn policy preset: its messages, sampling and stops in every request, `spec.params.n` samples (a multi-turn one is refused). */
  preset?: PolicyPreset;
}

export interface BatchExportFiles {
  plan: BatchPlan;
  planJson: string;
  /** The OpenAI batch input JSONL, built in parts (never one string). */
  jsonl: Blob;
  requests: number;
  tooLong: BatchExport['tooLong'];
}

/** A predictions file to pair with a dataset (the import worker's job, workers/import.api.ts). */
export interface PairJob {
  predictionsName: string;
  /** The file's text; a Parquet predictions file comes as `predictionsBlob` instead. */
  predictionsText?: string;
  predictionsBlob?: Blob;
  questions: Question[];
  gold: GoldEntry[];
  fence: 'first' | 'last';
  /** Refuse a file whose pairing has findings (the default, as at run start); false only reports them. */
  strict?: boolean;
}

export interface PairedPredictions {
  items: EvalItem[];
  warnings: string[];
  findings: PairingFinding[];
  sha256: string;
  bytes: number;
}

/**
 * The import worker's calls the store makes (adapters/browser/import-client.ts), handed in by
 * the composition root so that the store never imports the worker's client.
 */
export interface StoreWorkers {
  importDataset(
    job: { dbName: string; source: ImportSource; simulateQuotaAfterBytes?: number },
    hooks: { signal?: AbortSignal; onProgress?: (p: ImportProgress) => void },
  ): Promise<DatasetRecord>;
  importRunFile(job: { dbName: string; file: Blob; fileName: string }): Promise<RunHeader[]>;
}

/** A playground attempt to keep (RunService.saveAttempt). */
export interface SaveAttemptRequest {
  datasetId: string;
  /** Gold position of the question. */
  index: number;
  sql: string;
}

/**
 * A training run as stored (schema version 6, store `series`): its steps in order, each a
 * stored run with its training step, wall time and source; the trainer's scores of each step are
 * in `seriesScores` ([seriesId, step]), a followed folder's handle in `seriesFolders`.
 */
/**
 * The questions excluded from the metrics of a run or of a training run (every step of it), with
 * why, who and when; one record per run or series, by its id (`ownerId`).
 */
export interface ExclusionsRecord {
  ownerId: string;
  owner: 'run' | 'series';
  exclusions: Exclusion[];
}

export interface SeriesRecord {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  /** The dataset every step ran on (its id in the store and its name). */
  datasetId: string;
  dataset: string;
  /** How steps were read from file names (the rule shown before import). */
  stepRule: string;
  /** How the series was made. */
  origin: 'dumps' | 'folder' | 'series-file' | 'runs';
  /** The settings every step is evaluated with (a step added later uses them too). */
  config: RunConfig;
  /** Ordered by step, each step once. */
  steps: SeriesStepRecord[];
  /** The steps' run ids (index `byRun`: which series a run is a step of). */
  runIds: string[];
}

export interface SeriesStepRecord {
  step: number;
  runId: string;
  /** ISO 8601, when the step's dump was written (the dump's own time, else its file's); null when unknown. */
  wallTime: string | null;
  /** Where `wallTime` came from (src/core/series/model.ts); absent in series stored before it was kept. */
  wallTimeSource?: WallTimeSource | null;
  /** The file (or files) the step came from, as named to the user; the run's name for runs grouped by hand. */
  source: string;
  /** The run was made for the series (deleting the series deletes it); false for runs grouped by hand. */
  owned: boolean;
  /** Samples executed by this step, and given the verdict of an earlier step or of this one (absent for runs grouped by hand). */
  executions?: { executed: number; reused: number; fromCache?: number };
  /**
   * How the step was read, kept with it (its dashboard shows them beside its question count):
   * rows paired and not (`pairingNote`), the mapping report, pairing findings, how its file's
   * steps were found. Absent for steps stored before they were kept, grouped by hand or imported
   * from a series file.
   */
  notes?: string[];
}

/** The trainer's own score of each sample of a step, in the run's (index, sample) order; null where the dump gave none. */
export interface SeriesScoresRecord {
  seriesId: string;
  step: number;
  scores: Array<number | null>;
  /** Each sample's reward columns from the dump (same order); absent when it has none, and in records stored before they were kept. */
  rewards?: Array<TrainerRewards | null>;
}

/** A folder the series follows (File System Access API): its handle, kept so the permission may survive a reload. */
export interface SeriesFolderRecord {
  seriesId: string;
  handle: FileSystemDirectoryHandle;
  name: string;
  /** The step pattern (null: the built-in rules) and format the folder's files are read with. */
  stepPattern: string | null;
  /** Files taken already (added, or refused): the watch never reads them again. */
  taken: string[];
}

/** One file of a training run to read as steps (the import worker pairs it with the dataset's gold). */
export interface SeriesDumpJob {
  /** The file's path under the folder given (the step rule reads its folders too). */
  fileName: string;
  file: Blob;
  questions: Question[];
  gold: GoldEntry[];
  fence: 'first' | 'last';
  /** A dump format to read the file as; null detects it (a file that is no dump is read as predictions). */
  format: HarnessFormat | null;
  /** A regular expression whose capture group is the step; null: the built-in rules. */
  stepPattern: string | null;
  /** Files of the same folder by name, read for the dump's own time (an lm-eval samples file's `results_<date>.json`). */
  siblings?: Record<string, Blob>;
}

/** One step of a file, paired with the gold as a run's items, with the trainer's score of each. */
export interface PairedDumpStep {
  step: number;
  /** The file as named to the user (` step N` added when it holds several). */
  source: string;
  format: string;
  items: EvalItem[];
  /** Parallel to `items`. */
  trainerScores: Array<number | null>;
  /** Each item's reward columns from the dump (TRL, prime-rl traces), parallel to `items`; absent when the dump has none. */
  trainerRewards?: Array<TrainerRewards | null>;
  /** ISO 8601: the dump's own time (readSeriesDump's DumpStep.wallTime); null when it has none. */
  wallTime: string | null;
  /** The mapping report, pairing findings and warnings. */
  notes: string[];
  sha256: string;
  bytes: number;
}

export interface PairedSeriesDump {
  /** How each step was found (`100.jsonl: step 100 (from the name by ...)`). */
  notes: string[];
  steps: PairedDumpStep[];
}

/** What a series import or a followed folder is doing (SeriesService). */
export interface SeriesProgress {
  phase: 'reading' | 'evaluating' | 'storing' | 'waiting';
  /** The file being read or evaluated. */
  file: string | null;
  step: number | null;
  /** Items of the step done and in all (evaluating). */
  done: number;
  total: number;
  /** Steps added so far by this import or watch. */
  added: number;
}

/** A series with everything its view shows, computed by the analysis worker from the stored samples. */
export interface SeriesView {
  series: SeriesRecord;
  report: SeriesReport;
  /** Per step (the report's order): its run's id and name, and its stored samples. */
  runs: Array<{ step: number; runId: string; name: string; samples: number }>;
  /** The questions excluded from every number of the report (stored with the series); absent where none are kept. */
  exclusions?: Exclusion[];
}

/** `report`: the CLI's `series --out` JSON; the steps and question x step Parquet tables; the shareable series file. */
export type SeriesExportKind = 'report' | 'steps-parquet' | 'questions-parquet' | 'series-file';

/** What the page gives the series' report: the report template's text and who makes the report when. */
export interface SeriesReportInput {
  template: string;
  /** `rlvr-workbench 0.1.0 (app)`. */
  product: string;
  /** ISO 8601. */
  createdAt: string;
}
