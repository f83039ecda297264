/**
 * The contract of the SQL worker (workers/sql.worker.ts), shared by the browser (Web Workers)
 * and Node (worker_threads). Plain data only; database bytes are transferred, not copied.
 */
import type { BuiltSuite, SuiteSpec } from '../src/core/ts/suite.ts';
import type { DbFileRef, SqlValue, TsCounterexample } from '../src/core/types.ts';
import type { StorageClass } from '../src/core/prompt/schema-source.ts';

export interface WorkerInit {
  /** URL of sql-wasm.wasm (browser builds); Node finds it next to sql.js itself. */
  wasmUrl?: string;
  /**
   * sql.js's WebAssembly compiled once by the pool's host and handed to every worker: they
   * share its machine code (V8 compiles functions lazily and optimises the hot ones once, for
   * all of them), where each worker compiling the bytes itself would compile and optimise the
   * same code again. It must be the module of the worker's own sql.js.
   */
  wasmModule?: WebAssembly.Module;
  /** Opened databases are kept in an LRU bounded by this many bytes (the one in use always stays). */
  cacheBytes: number;
}

export interface ExecRequest {
  dbId: string;
  predSql: string;
  goldSql: string;
  /** Any write by the prediction becomes an error instead of being seen by the gold query. */
  readOnly: boolean;
  softF1: boolean;
  /** Rows of each result to send back for display (0 for none). */
  previewRows: number;
  /** Take the gold's result from an earlier item on the pristine database when there is one (default off). */
  reuseGold?: boolean;
  /** `spider`: test-suite-sql-eval's execution match on its normalised texts (docs/spider-rules.md); default BIRD's set equality. */
  exRule?: 'bird' | 'spider';
}

export interface ExecDone {
  kind: 'done';
  status: 'ok' | 'error';
  ex: 0 | 1;
  softF1: number | null;
  error: string | null;
  mutatedDb: boolean;
  predRowCount: number | null;
  goldRowCount: number | null;
  predColumns: string[];
  goldColumns: string[];
  predPreview: SqlValue[][];
  goldPreview: SqlValue[][];
  elapsedMs: number;
  /**
   * Signature of the predicted result (src/core/rl/result-key.ts), present when the
   * prediction executed: EX-equal results share it, so samples can vote on their results.
   */
  resultKey?: string;
  /** The gold's result came from an earlier item (it was not executed for this one). */
  goldReused?: boolean;
  /** The database holds a view that is not deterministic (its name): the verdict is neither shared nor cached. */
  nondeterministicView?: string;
  /**
   * Replace this worker after the item, and why: an execution went over one of its memory
   * bounds (its wasm memory grew to the heap limit), or SQLite's heap limits were changed
   * (docs/isolation.md).
   */
  retire?: string;
}

/** The worker does not hold the database (never loaded, evicted, or reset after a write). */
export interface NeedDb {
  kind: 'need-db';
}

export interface TimeRequest {
  dbId: string;
  predSql: string;
  goldSql: string;
  iterations: number;
}

interface TimeDone {
  kind: 'done';
  ratios: number[];
  /** The clock's step in the worker (ms), and the most runs one timing's block took. */
  clockTickMs: number;
  maxRuns: number;
  /** Why the item could not be timed (then `ratios` is incomplete and is not used). */
  notTimed?: string;
}

export interface QueryResult {
  columns: string[];
  rows: SqlValue[][];
  truncated: boolean;
}

/**
 * One probe of a multi-turn episode (src/core/episode): a single read-only statement, every row
 * in the query's order with each value's storage class; a failure is `error`, never thrown.
 */
export interface ProbeDone {
  kind: 'done';
  columns: string[];
  rows: SqlValue[][];
  classes: StorageClass[][];
  /** SQLite's (or the worker's) message: a write, an ATTACH or a refused PRAGMA included. */
  error?: string;
}

/** Metric `ts`: the checks that follow an item's EX (docs/test-suite.md). */
interface CheckRequest {
  dbId: string;
  predSql: string;
  goldSql: string;
  spec: SuiteSpec;
  /** EX accepted the prediction: run it on the suite, and once more with unordered selects reversed. */
  exAccepted: boolean;
}

export interface CheckDone {
  kind: 'done';
  /** 0 or 1 when EX accepted the prediction (otherwise the pool sets it). */
  ts: 0 | 1 | null;
  counterexample: TsCounterexample | null;
  /** Null when not checked (a text that may write, or a gold that fails). */
  goldOrderDependent: boolean | null;
  passesByRowOrder: boolean | null;
}

/** The worker holds no suite for the database and spec: build or load one, then ask again. */
export interface NeedSuite {
  kind: 'need-suite';
}

export interface SqlWorkerApi {
  /** Builds the test suite of an open database from its golds, keeps it open, and returns it (to be cached). */
  buildSuite(
    dbId: string,
    spec: SuiteSpec,
    golds: string[],
    onProgress?: (done: number, total: number) => void,
  ): Promise<{ kind: 'done'; suite: BuiltSuite } | NeedDb>;
  /** Opens a suite built before (by this worker or another). */
  loadSuite(dbId: string, suite: BuiltSuite): Promise<void>;
  checkItem(req: CheckRequest): Promise<CheckDone | NeedDb | NeedSuite>;
  /** `clockTickMs`: the smallest step of `performance.now()` in the worker (R-VES timing, docs/r-ves-timing.md). */
  init(options: WorkerInit): Promise<{ sqliteVersion: string; clockTickMs?: number }>;
  /**
   * Opens a database from its bytes. Throws a clear error for bytes that are not SQLite. Bytes
   * (transferred), or a file or Blob the worker reads by pages (workers/paged-file.ts).
   * `checked`: these exact bytes (by sha256) passed SQLite's quick_check at an earlier opening,
   * so the whole-file check is skipped; `quickChecked` says whether it ran this time.
   */
  loadDb(
    dbId: string,
    bytes: Uint8Array | DbFileRef,
    options?: { checked?: boolean },
  ): Promise<{ sizeBytes: number; tables: number; quickChecked: boolean }>;
  evaluate(req: ExecRequest): Promise<ExecDone | NeedDb>;
  /** R-VES timings: gold_time / pred_time for each repetition, each time taken as a block of runs (docs/r-ves-timing.md). */
  timeQueries(req: TimeRequest): Promise<TimeDone | NeedDb>;
  /** A read-only query for display (schemas, sample rows). */
  query(dbId: string, sql: string, maxRows: number): Promise<QueryResult | NeedDb>;
  /**
   * A policy's probe (multi-turn episodes): read-only (SQLite's query_only), on the database as
   * loaded; a text that changed the connection anyway (an ATTACH, a setting) is answered with an
   * error, and the connection is re-opened from the pristine bytes before anything else runs.
   */
  probe(dbId: string, sql: string): Promise<ProbeDone | NeedDb>;
  /** Database ids currently open, most recently used last. */
  openDbs(): Promise<string[]>;
}
