/**
 * The browser's record of datasets, databases and runs (IndexedDB), as the UI sees it.
 * Implemented by `idb-store.ts`; the UI receives it from its composition root.
 */
import type { EvalEvent } from '../../core/eval/executor.ts';
import type { GoldEntry, Question } from '../../core/types.ts';
import type { FileRef, RunConfig, RunFile, RunHeader, SampleRecord } from '../../core/run/types.ts';
import type { ItemStatus } from '../../core/types.ts';
import type { RubricScores } from '../../core/rubric/scores.ts';
import type { Engine } from '../../core/engine/engine.ts';
import type { GenerationHooks, GenerationPlan, GenerationPreviewSpec, GenerationRunRequest, GenerationRunResult } from './generation-run.ts';
import type { BuiltPrompt } from '../../core/prompt/build-prompt.ts';

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

export interface RunRequest {
  name: string;
  datasetId: string;
  subset: { description: string; indices: number[] };
  predictions: { name: string; text: string };
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
}

/** One sample's rubric scores, as written into the run by `setSampleRubrics`. */
export interface SampleRubric {
  index: number;
  sample: number;
  rubric: RubricScores;
  /** The scalar reward the run uses (explicit, else implicit, else Likert), or null. */
  rubricScore: number | null;
}

export interface WorkbenchStore {
  storage(): Promise<StorageInfo>;
  requestPersistence(): Promise<boolean>;

  importDataset(source: ImportSource, hooks?: { signal?: AbortSignal; onProgress?: (p: ImportProgress) => void }): Promise<DatasetRecord>;
  listDatasets(): Promise<DatasetRecord[]>;
  datasetCard(datasetId: string): Promise<DatasetCard>;
  deleteDataset(datasetId: string): Promise<void>;

  /** Creates the run, evaluates it in the worker pool, stores each sample as it finishes. */
  startRun(req: RunRequest, hooks?: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void }): Promise<RunHeader>;
  /** Continues a run whose tab was closed: only samples not yet stored are evaluated. */
  resumeRun(runId: string, hooks?: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void }): Promise<RunHeader>;
  listRuns(): Promise<RunHeader[]>;
  getRun(runId: string): Promise<RunHeader | undefined>;
  /** Samples of a run in (index, sample) order; `offset`/`limit` page through large runs. */
  samples(runId: string, page?: { offset: number; limit: number }): Promise<SampleRecord[]>;
  renameRun(runId: string, name: string): Promise<void>;
  deleteRun(runId: string): Promise<void>;

  // ---- Additions (additive only) ----
  getDataset(datasetId: string): Promise<DatasetRecord | undefined>;
  /** Every stored database file, one per sha256. */
  listDatabases(): Promise<StoredDatabase[]>;
  /** Runs every gold query as its own prediction (stored as a run); lists the golds that fail or time out. */
  goldSelfTest(datasetId: string, hooks?: { signal?: AbortSignal; onEvent?: (e: EvalEvent) => void }): Promise<GoldSelfTestResult>;
  /** Ids of runs being evaluated right now in any tab (Web Locks); a `running` run not listed was interrupted. */
  activeRunIds(): Promise<string[]>;
  /** Number of stored samples of a run. */
  sampleCount(runId: string): Promise<number>;
  /** The run as a run file (header + samples); see core/run/export.ts for JSON, BIRD predictions and CSV. */
  exportRun(runId: string): Promise<RunFile>;
  /** Stores a run file (validated first); refuses a run that is already stored. */
  importRunFile(text: string, fileName: string): Promise<RunHeader>;
  /** Generation run (generation-run.ts): prompts, generates with a loaded engine, scores and stores each sample as produced. */
  startGenerationRun(req: GenerationRunRequest, engine: Engine, hooks?: GenerationHooks): Promise<GenerationRunResult>;
  /** Continues a paused or interrupted generation run: only (index, sample) keys not stored are generated. */
  resumeGenerationRun(runId: string, engine: Engine, hooks?: GenerationHooks): Promise<GenerationRunResult>;
  /** The stored plan (spec, questions) of a generation run; undefined for other runs. */
  generationPlan(runId: string): Promise<GenerationPlan | undefined>;
  /** Gold positions of a dataset's questions whose database is stored. */
  questionsWithDatabase(datasetId: string): Promise<number[]>;
  /** The prompt a generation run would send for one question (the Generate screen's preview). */
  previewGenerationPrompt(datasetId: string, index: number, spec: GenerationPreviewSpec, engine: Engine | null): Promise<BuiltPrompt>;
  /**
   * Writes a rubric scoring into the run's samples (`rubric`, and `rubricScore` for best-of-n
   * and exports), in one transaction; samples not listed keep what they had. Refused while the
   * run is being evaluated. Returns how many samples were updated.
   */
  setSampleRubrics(runId: string, scored: readonly SampleRubric[]): Promise<number>;
  /** Table -> column names of each stored database of a run (databases no longer stored are left out). */
  databaseSchemas(runId: string): Promise<Record<string, Record<string, string[]>>>;
  /** Closes the IndexedDB connection (tests; a page being left). */
  close(): void;
}
