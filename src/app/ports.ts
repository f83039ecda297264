/**
 * The ports of the application layer (src/app/): what the run service, generation runs, the
 * overlay comparison, batch export and the run lists' score need from the outside, as small
 * interfaces. The browser's composition root (src/ui/main.ts, through src/ui/browser-store.ts)
 * implements them with IndexedDB (adapters/store/app-ports.ts), the import worker (pairing) and
 * the sql.js worker pool (executors); a test implements them over memory and Node's SQL pool.
 * The app imports the core, these ports, its records (records.ts) and the store's port
 * interfaces (store-ports.ts).
 */
import type { ProbeResult } from '../core/episode/types.ts';
import type { SqlExecutor } from '../core/eval/executor.ts';
import type { ReadOnlyQuery } from '../core/prompt/omnisql-schema.ts';
import type { SchemaSource } from '../core/prompt/schema-source.ts';
import type { RunHeader, SampleRecord } from '../core/run/types.ts';
import type { FactsStore, VerdictStore } from '../core/run/verdict-cache.ts';
import type { SuiteCache } from '../core/ts/suite.ts';
import type { EvalItem } from '../core/types.ts';
import type { GoldOverlayRecord } from '../core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../core/run/version-effects.ts';
import type {
  DatasetRecord,
  GenerationPlan,
  PairJob,
  PairedPredictions,
  PairedSeriesDump,
  SeriesDumpJob,
  SeriesRecord,
} from './records.ts';
import type { DbSource } from './db-source.ts';
import type { SeriesRepository } from './store-ports.ts';

/** Where database bytes come from (declared apart: the store's ports name it too). */
export type { DbSource, LoadedDb, PagedDb } from './db-source.ts';

/** The service the screens call (declared with the store's other ports the UI receives). */
export type { RunService } from './store-ports.ts';

/** A run's writing session (the store's: IndexedDB in the browser, memory in tests), opened by `RunSessionPort.open`. */
export interface RunSession {
  /** Aborted by the caller's signal (with its reason) or by a storage failure. */
  readonly signal: AbortSignal;
  push(sample: SampleRecord): void;
  /**
   * Closes the writer and stores the run's final status: `failed` when `failure` or a write
   * failed, else `status`. Throws the failure (a full disk as QUOTA_EXCEEDED naming the run).
   */
  finish(
    failure: unknown,
    status: RunHeader['status'],
    counts: { doneBefore: number; total: number },
    patch?: Partial<RunHeader>,
  ): Promise<RunHeader>;
}

/** What a run needs to be resumed: its items (replay) or its generation plan. */
export interface RunInputs {
  items: EvalItem[];
  generation?: GenerationPlan;
}

/** Runs as the services read and write them: headers, inputs, stored samples. */
export interface RunRepositoryPort {
  /** Stores a new run's header and inputs together (one transaction). */
  create(header: RunHeader, inputs: RunInputs): Promise<void>;
  /** The run; NOT_FOUND naming it when it is not stored. */
  get(runId: string): Promise<RunHeader>;
  /** Replaces the stored header. */
  put(header: RunHeader): Promise<void>;
  /** Every stored run's header (the playground finds its scratch run among them). */
  list(): Promise<RunHeader[]>;
  /** Replaces a run's stored inputs (a scratch run gains an attempt). */
  putInputs(runId: string, inputs: RunInputs): Promise<void>;
  inputs(runId: string): Promise<RunInputs | undefined>;
  /** `sampleKey`s of the stored samples (a resume skips them). */
  storedKeys(runId: string): Promise<Set<string>>;
  /** Every stored sample in (index, sample) order. */
  samples(runId: string): Promise<SampleRecord[]>;
  /** Deletes a run with its inputs and samples (a series step that was cancelled). */
  delete(runId: string): Promise<void>;
}

/** Datasets and their stored databases, as the services read them. */
interface DatasetPort {
  /** The dataset; NOT_FOUND naming it when it is not stored. */
  get(datasetId: string): Promise<DatasetRecord>;
  /** Gold positions of the dataset's questions whose database is stored. */
  questionsWithDatabase(dataset: DatasetRecord): Promise<number[]>;
  /** Ids of the databases (db_id -> sha256) whose bytes are stored. */
  storedDbIds(databases: Record<string, string>): Promise<Set<string>>;
  /** The stored databases as the SQL workers read them. */
  source(databases: Record<string, string>, datasetName: string): DbSource;
  /** Where metric ts keeps the test suites built on these databases. */
  suiteCache(databases: Record<string, string>): SuiteCache;
}

/**
 * What is stored with a run besides its samples, by run id: the corrected-gold overlay
 * (docs/gold-overlays.md) and the version check (docs/version-effects.md).
 */
interface RunExtrasPort {
  overlay(runId: string): Promise<GoldOverlayRecord | undefined>;
  /** Replaces the run's overlay. */
  putOverlay(record: GoldOverlayRecord): Promise<void>;
  removeOverlay(runId: string): Promise<void>;
  versionCheck(runId: string): Promise<VersionCheckRecord | undefined>;
  /** Replaces the run's version check. */
  putVersionCheck(record: VersionCheckRecord): Promise<void>;
}

/** Locks and writing sessions: one writer per run across tabs. */
interface RunSessionPort {
  /** Runs `body` holding the run's lock; throws LOCKED with `lockedMessage` when another tab holds it. */
  withLock<T>(runId: string, lockedMessage: string, body: () => Promise<T>): Promise<T>;
  /** Opens a writing session on `run` (the caller holds its lock). */
  open(run: RunHeader, signal?: AbortSignal): Promise<RunSession>;
}

/** Parses and pairs a predictions file with a dataset (the core's replay plan, off the page's thread). */
interface PairingPort {
  pair(job: PairJob): Promise<PairedPredictions>;
  /** sha256 and size of a text (the self-test's gold file). */
  hashText(text: string): Promise<{ sha256: string; bytes: number }>;
}

/**
 * A run's SQL executor. `probe`: one read-only statement of a multi-turn policy in a worker of
 * the pool's own, with the isolation a prediction gets (the browser's and Node's SqlPool);
 * absent, the app refuses multi-turn presets.
 */
interface RunExecutor extends SqlExecutor {
  probe?(dbId: string, sql: string, options: { timeoutMs: number }): Promise<ProbeResult>;
}

/** SQL executors and schema readers over stored databases. */
export interface ExecutorFactory {
  /** Written into each run header, e.g. `sql.js in Web Workers (browser)`. */
  readonly name: string;
  /**
   * The engine and its version as the verdict cache keys them (`sql.js 1.17.0`, as the CLI's);
   * absent: runs take no verdict from the cache and put none in it.
   */
  readonly verdictExecutor?: string;
  createExecutor(source: DbSource, extras?: { suiteCache?: SuiteCache }): RunExecutor;
  /**
   * The older SQLite generation (sql.js 1.8.0, SQLite 3.39.3) that re-runs version-sensitive
   * samples, loaded on demand (docs/version-effects.md); absent where there is none.
   */
  createOlderExecutor?(source: DbSource): Promise<SqlExecutor>;
  /**
   * A SQL worker of its own that reads schemas and sample rows (prompts); `dispose` ends it.
   * `query`: read-only queries on the same worker (OmniSQL's example values of a preset's schema).
   */
  openSchemaSource(
    source: DbSource,
    cacheBytes: number,
  ): Promise<{ source: SchemaSource; query?: ReadOnlyQuery; dispose: () => void }>;
}

export interface AppPorts {
  runs: RunRepositoryPort;
  datasets: DatasetPort;
  extras: RunExtrasPort;
  sessions: RunSessionPort;
  pairing: PairingPort;
  executors: ExecutorFactory;
  /**
   * The verdict cache across runs (src/core/run/verdict-cache.ts): a run re-evaluating SQL seen
   * before takes its verdicts from here, and its databases' facts (a run answered whole from
   * the cache opens no database). Absent: every item is executed.
   */
  verdicts?: VerdictStore & FactsStore;
}

/** One file of a training run read as steps and paired with the gold (the import worker). */
interface SeriesDumpPort {
  read(job: SeriesDumpJob): Promise<PairedSeriesDump>;
}

/** A series file read, validated and stored whole (the import worker). */
interface SeriesFilePort {
  importSeriesFile(file: Blob, fileName: string): Promise<SeriesRecord>;
}

/** A folder the app follows (a File System Access directory in the browser, any folder in a test). */
export interface FolderPort {
  readonly name: string;
  /** Its dump files (hidden files and folders left out), paths relative to the folder, with their size and modification time (ms). */
  list(): Promise<Array<{ name: string; size: number; lastModified: number }>>;
  read(name: string): Promise<Blob>;
}

/** The series service's ports: the app's, the series repository, and the workers that read dumps and series files. */
export interface SeriesAppPorts extends AppPorts {
  series: SeriesRepository;
  dumps: SeriesDumpPort;
  seriesFiles: SeriesFilePort;
}
