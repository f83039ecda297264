/**
 * What the screens receive, by concern: storage facts, a dataset repository and a run
 * repository (persistence only, idb-store.ts), and the run service that evaluates, resumes,
 * self-tests and generates (src/app/run-service.ts). Each is a small port that a test fakes
 * with a plain object; src/ui/browser-store.ts builds all four over one IndexedDB connection
 * for the composition root (src/ui/main.ts).
 */
import type { Engine } from '../../core/engine/engine.ts';
import type { DbSource } from '../sql-pool.ts';
import type { SuiteCache } from '../../core/ts/suite.ts';
import type { BuiltPrompt } from '../../core/prompt/build-prompt.ts';
import type { RunComparison } from '../../core/rl/compare.ts';
import type { RunStatsView } from '../../core/rl/stats-view.ts';
import type { RunFile, RunHeader, SampleRecord } from '../../core/run/types.ts';
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
import type { OverlayComparison } from '../../core/run/gold-overlay-run.ts';

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
  /** Scores the run's samples against a corrected-gold overlay too (issue 13): both totals and the items whose verdict changes. */
  compareGoldOverlay?(
    runId: string,
    overlay: { name: string; text: string },
    signal?: AbortSignal,
  ): Promise<OverlayComparison>;
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
    options: { resamples: number; seed: number },
    hooks?: AnalysisHooks,
  ): Promise<RunComparison>;
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
