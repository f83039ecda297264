/**
 * What the SQL worker does, written against an initialised sql.js module so that it can be
 * exercised directly in tests. workers/sql.worker.ts is the only place that loads sql.js.
 *
 * Semantics follow BIRD's official evaluator (docs/evaluator.md): the
 * prediction runs first, then the gold query, on the same connection; Python sqlite3's
 * statement rules apply; values keep their SQLite storage class (INTEGER beyond 2^53 is read
 * as a bigint). A prediction that writes is seen by its own gold query; after any execution
 * that changed the connection (a write, an ATTACH, a PRAGMA...) the database is re-opened from
 * its pristine bytes before the next execution of any kind (the next item, or an R-VES timing
 * repetition: officially each timed execution opens its own connection and commits nothing),
 * so nothing leaks.
 */
import type { Database, SqlJsStatic, Statement } from 'sql.js';
import { executionMatch } from '../src/core/compare/ex.ts';
import { spiderExecMatch } from '../src/core/compare/spider-ex.ts';
import { spiderOrderMatters, spiderQueryText } from '../src/core/sql/spider-text.ts';
import { MAX_BLOCK_RUNS, blockSpanMs, clockTick, timeBlock, type BlockTiming } from '../src/core/compare/r-ves.ts';
import { softF1 } from '../src/core/compare/soft-f1.ts';
import { errorMessage, WorkbenchError } from '../src/core/errors.ts';
import { looksLikeQuery } from '../src/core/sql/python-statement.ts';
import { resultKey } from '../src/core/rl/result-key.ts';
import { WRITES, isNonDeterministic, viewIsNonDeterministic } from '../src/core/run/reuse.ts';
import type { SqlValue } from '../src/core/types.ts';
import { suiteKey } from '../src/core/ts/suite.ts';
import type {
  CheckDone,
  ExecDone,
  ExecRequest,
  NeedDb,
  NeedSuite,
  ProbeDone,
  QueryResult,
  SqlWorkerApi,
  TimeRequest,
  WorkerInit,
} from './sql.api.ts';
import { OpenSuite, buildSuiteOn, orderCheck } from './sql-suite.ts';
import { runPython, type FetchedRows } from './sql-result.ts';
import {
  VACUUM_INTO_MESSAGE,
  changed,
  isVacuumInto,
  mayWrite,
  prepareFingerprint,
  readFingerprint,
  wrote,
  type Fingerprint,
} from './sql-writes.ts';
import { HEAP_LIMIT, missingModule, overBudget, pinConnection } from './sql-bounds.ts';
import { BlockCache, PagedFile } from './paged-file.ts';
import { openSource, type SyncFs } from './page-sources.ts';

export { MAX_RESULT_BYTES, MAX_RESULT_VALUES } from './sql-result.ts';
export { HEAP_LIMIT, WRITE_BUDGET } from './sql-bounds.ts';

interface OpenDb {
  db: Database;
  /**
   * The bytes given to loadDb, never written: every re-open starts from them. Let go once the
   * connection runs on a private copy (not to hold a database twice), except while R-VES
   * repetitions need them; without them, a changed connection is dropped and the pool opens
   * the database again.
   */
  pristine: Uint8Array | BlockCache | null;
  /**
   * The in-memory file system uses `pristine` itself as the database file (see openSharing).
   * A database read by pages (a BlockCache: paged-file.ts) is never copied: every connection
   * reads the source through the cache, a private one keeps its writes in its own overlay, and
   * its pristine source is never let go.
   */
  shared: boolean;
  /** The last execution changed the connection: re-open it before the next one. */
  dirty: boolean;
  /** The fingerprint query, prepared once per connection (see sql-writes.ts). */
  fpStmt: Statement | null;
  /**
   * The fingerprint read after the last execution on this connection: nothing runs on it
   * between two executions but settings outside the fingerprint, so it is the next
   * execution's "before" (one fingerprint per execution instead of two). Null after a re-open
   * or anything else run on the connection.
   */
  lastFp: Fingerprint | null;
  sizeBytes: number;
  /**
   * A view of the database whose definition is not deterministic (reuse.ts's
   * viewIsNonDeterministic), or null: a query may read it whatever its own text says, so no
   * gold is reused and each result says so (ExecDone.nondeterministicView).
   */
  nondeterministicView: string | null;
}

/** One execution and what it did to the connection. */
interface Ran {
  result: FetchedRows | null;
  error: Error | null;
  /** It changed the database or the databases attached (`mutated_db`). */
  wrote: boolean;
  ms: number;
}

const SQLITE_HEADER = 'SQLite format 3\u0000';

/** Values (rows x columns) of gold results a worker keeps for reuse; a larger result is run again each time. */
const GOLD_CACHE_VALUES = 4_000_000;

/**
 * Opens `bytes` without copying them. sql.js writes the bytes into its in-memory file system,
 * whose first write of a file keeps `data.slice(0, n)`: a second copy of the whole database,
 * alive beside the first while the database opens (twice the memory of a large file). Here
 * `slice` of the whole array returns the array itself for the time of the open, so the file
 * system reads the caller's bytes in place. Reading never writes to the database file; a
 * statement that may write runs only on a private copy (the caller's bytes are never changed).
 */
function openSharing(SQL: SqlJsStatic, bytes: Uint8Array): Database {
  const n = bytes.length;
  Object.defineProperty(bytes, 'slice', {
    configurable: true,
    value(this: Uint8Array, start?: number, end?: number) {
      return start === 0 && end === n ? this : Uint8Array.prototype.slice.call(this, start, end);
    },
  });
  try {
    return new SQL.Database(bytes);
  } finally {
    delete (bytes as { slice?: unknown }).slice;
  }
}

/** A connection with the worker's settings (closed again if they cannot be set). */
function pinned(db: Database, sizeBytes: number): Database {
  try {
    pinConnection(db, sizeBytes);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Bytes of page cache each database read by pages may hold (its blocks, shared by its connections). */
export const PAGE_CACHE_BYTES = 32 * 1024 * 1024;

const heldBytes = (e: OpenDb) =>
  e.pristine instanceof BlockCache ? e.pristine.capacityBytes : e.sizeBytes * (!e.shared && e.pristine ? 2 : 1);

/** A connection on a view of a database read by pages: its writes stay in the view's overlay. */
function openPaged(SQL: SqlJsStatic, cache: BlockCache): Database {
  return new SQL.Database(new PagedFile(cache) as unknown as Uint8Array);
}

/** Why a database read by pages can no longer be trusted (its source failed or changed), or null. */
const pagedFailure = (e: OpenDb): string | null => (e.pristine instanceof BlockCache ? e.pristine.failure : null);

type Api = SqlWorkerApi;
type GivenDb = Parameters<Api['loadDb']>[1];
type CheckRequest = Parameters<Api['checkItem']>[0];
type TimeDone = Exclude<Awaited<ReturnType<Api['timeQueries']>>, NeedDb>;

/** The fingerprint of a connection (the statement prepared once per connection). */
const fingerprint = (entry: OpenDb): Fingerprint =>
  readFingerprint((entry.fpStmt ??= prepareFingerprint(entry.db)), entry.db);

function closeQuietly(db: Database): void {
  try {
    db.close();
  } catch {
    // closing a broken handle must not hide the error that led here
  }
}

/**
 * Gold results on the pristine database, by database and gold text (reuse.ts in the core says
 * which golds qualify): every sample of a question runs the same gold, so it is executed once
 * per worker while its result fits GOLD_CACHE_VALUES, even when the database is evicted and
 * loaded again. A worker serves one pool, whose DbSource gives each db_id one file, and a
 * database id given bytes it did not have before forgets its golds (`loaded`).
 */
class GoldCache {
  readonly #golds = new Map<string, { result: FetchedRows | null; error: string | null; values: number }>();
  #values = 0;
  /** Size of the bytes each database id was last loaded with (other bytes forget its golds). */
  readonly #seenSize = new Map<string, number>();

  static key(dbId: string, sql: string): string {
    return `${dbId}\u0000${sql}`;
  }

  static reusable(sql: string): boolean {
    return !isNonDeterministic(sql) && !WRITES.test(sql);
  }

  /** The gold kept under `key`, if any, made the most recently used. */
  take(key: string): { result: FetchedRows | null; error: string | null } | undefined {
    const known = this.#golds.get(key);
    if (known) {
      this.#golds.delete(key);
      this.#golds.set(key, known);
    }
    return known;
  }

  /** The gold kept under `key`, if any, its place left as it is. */
  peek(key: string): { result: FetchedRows | null; error: string | null } | undefined {
    return this.#golds.get(key);
  }

  keep(key: string, result: FetchedRows | null, error: string | null): void {
    const values = result ? result.rows.length * Math.max(1, result.columns.length) : 0;
    if (values > GOLD_CACHE_VALUES) return;
    this.#golds.set(key, { result, error, values });
    this.#values += values;
    for (const [k, g] of this.#golds) {
      if (this.#values <= GOLD_CACHE_VALUES) break;
      this.#golds.delete(k);
      this.#values -= g.values;
    }
  }

  /** `dbId` is loaded with bytes of `size`; `held`: the size of the bytes it holds open now, if any. */
  loaded(dbId: string, size: number, held: number | undefined): void {
    const before = held ?? this.#seenSize.get(dbId);
    if (before !== undefined && before !== size) this.#forget(dbId);
    this.#seenSize.set(dbId, size);
  }

  #forget(dbId: string): void {
    for (const [k, g] of this.#golds)
      if (k.startsWith(`${dbId}\u0000`)) {
        this.#golds.delete(k);
        this.#values -= g.values;
      }
  }
}

/**
 * Whether the worker can still be trusted. An execution that hit a bound (the worker's wasm
 * memory grew to the heap limit) asks the pool, in the next evaluate result, to replace the
 * worker; one that changed SQLite's heap limits in spite of the PRAGMA policy, or a failed
 * check of the worker's state, poisons it (every evaluate result says so).
 */
class WorkerHealth {
  #retire: string | null = null;
  #poisoned: string | null = null;
  #pristineLimits: string | null = null;

  /** The reason to replace the worker after this item, once (a poisoned worker says it every time). */
  take(): { retire?: string } {
    const r = this.#poisoned ?? this.#retire;
    this.#retire = null;
    return r ? { retire: r } : {};
  }

  overBudget(reason: string): void {
    this.#retire ??= reason;
  }

  /**
   * The check around an execution failed, so the worker's state cannot be confirmed: fail
   * closed. SQLite's own statements fail this way once its heap limit was lowered (
   * `EXPLAIN PRAGMA hard_heap_limit = 200000` left every later item "out of memory" while the
   * check's failure was only taken as a changed connection).
   */
  checkFailed(err: unknown): void {
    this.#poisoned ??= `the check of the worker's state around an execution failed (${errorMessage(err)})`;
  }

  /** Compares the heap limits after an execution with the worker's own. */
  checkLimits(before: Fingerprint, after: Fingerprint): void {
    this.#pristineLimits ??= before.limits;
    if (after.limits !== this.#pristineLimits)
      this.#poisoned ??= `SQLite's heap limits of the worker changed (${this.#pristineLimits} -> ${after.limits})`;
  }
}

/** The databases the worker holds open, most recently used last, within `cacheBytes`. */
class Connections {
  SQL: SqlJsStatic | null = null;
  cacheBytes = 512 * 1024 * 1024;
  // Map iteration order is insertion order: delete + set moves an entry to the MRU end.
  readonly open = new Map<string, OpenDb>();

  sql(): SqlJsStatic {
    if (!this.SQL) throw new WorkbenchError('INTERNAL', 'SQL worker used before init()');
    return this.SQL;
  }

  touch(dbId: string): OpenDb | undefined {
    const entry = this.open.get(dbId);
    if (entry) {
      this.open.delete(dbId);
      this.open.set(dbId, entry);
    }
    return entry;
  }

  drop(dbId: string): void {
    const entry = this.open.get(dbId);
    if (!entry) return;
    this.open.delete(dbId);
    closeQuietly(entry.db);
    if (entry.pristine instanceof BlockCache) entry.pristine.close();
  }

  evict(keep: string): void {
    let total = 0;
    for (const e of this.open.values()) total += heldBytes(e);
    for (const id of [...this.open.keys()]) {
      if (total <= this.cacheBytes) break;
      if (id === keep) continue;
      total -= heldBytes(this.open.get(id)!);
      this.drop(id);
    }
  }

  /**
   * Before every execution: a connection that the last execution changed is re-opened from the
   * pristine bytes, and one that reads them in place is re-opened on a private copy when a text
   * may write (and back on the bytes in place once only reads follow). False when the pristine
   * bytes are no longer held: the database is dropped, and the caller answers need-db.
   */
  prepare(dbId: string, entry: OpenDb, texts: string[], keepPristine = false): boolean {
    const writable = texts.some(mayWrite);
    if (!entry.dirty && !(entry.shared && writable)) return true;
    const bytes = entry.pristine;
    if (!bytes) {
      this.drop(dbId);
      return false;
    }
    closeQuietly(entry.db);
    entry.fpStmt = null;
    entry.lastFp = null;
    if (bytes instanceof BlockCache) {
      // A fresh view: no copy, whatever the texts may do (a write stays in its overlay).
      entry.db = pinned(openPaged(this.sql(), bytes), bytes.size);
      entry.shared = !writable;
      entry.dirty = false;
      return true;
    }
    entry.db = pinned(writable ? new (this.sql().Database)(bytes) : openSharing(this.sql(), bytes), bytes.length);
    entry.shared = !writable;
    entry.dirty = false;
    if (writable && !keepPristine) entry.pristine = null;
    if (writable) this.evict(dbId);
    return true;
  }

  /** The open database `dbId`, ready for `texts` (prepare), or null: the caller answers need-db. */
  ready(dbId: string, texts: string[]): OpenDb | null {
    const entry = this.touch(dbId);
    return entry && this.prepare(dbId, entry, texts) ? entry : null;
  }

  /** After an execution: a changed connection that cannot be restored in place is dropped now. */
  settle(dbId: string, entry: OpenDb): void {
    if (entry.dirty && !entry.pristine) this.drop(dbId);
  }
}

/** What one worker holds: its databases, its golds, its test suites, its health, its clock's step. */
interface Engine {
  readonly conns: Connections;
  readonly golds: GoldCache;
  readonly health: WorkerHealth;
  /** Test suites this worker holds open, by suiteKey (database and spec). */
  readonly suites: Map<string, OpenSuite>;
  /** node:fs where the worker runs in Node: databases given as a file are read by pages from it. */
  readonly fs: SyncFs | null;
  /** The clock's step in this worker (ms): 100 µs on a page that is not cross-origin isolated. */
  tickMs: number;
}

export function createSqlEngine(
  loadSqlJs: (init: WorkerInit) => Promise<SqlJsStatic>,
  /** node:fs where the worker runs in Node: databases given as a file are read by pages from it. */
  fs: SyncFs | null = null,
): SqlWorkerApi {
  const e: Engine = {
    conns: new Connections(),
    golds: new GoldCache(),
    health: new WorkerHealth(),
    suites: new Map(),
    fs,
    tickMs: 0,
  };
  return {
    init: (options) => init(e, loadSqlJs, options),
    loadDb: async (dbId, given, options) => loadDb(e, dbId, given, options?.checked === true),
    evaluate: async (req) => evaluate(e, req),
    timeQueries: async (req) => timeQueries(e, req),
    query: async (dbId, text, maxRows) => query(e, dbId, text, maxRows),
    probe: async (dbId, text) => probe(e, dbId, text),
    buildSuite: async (dbId, spec, golds, onProgress) => {
      const entry = e.conns.ready(dbId, []);
      if (!entry) return { kind: 'need-db' };
      // Read only: the sample is taken in place, so the original is never copied.
      entry.lastFp = null;
      const suite = buildSuiteOn(e.conns.sql(), entry.db, golds, spec, onProgress);
      keepSuite(e, suiteKey(dbId, spec), new OpenSuite(e.conns.sql(), suite));
      return { kind: 'done', suite };
    },
    loadSuite: async (dbId, suite) => keepSuite(e, suiteKey(dbId, suite.spec), new OpenSuite(e.conns.sql(), suite)),
    checkItem: async (req) => checkItem(e, req),
    openDbs: async () => [...e.conns.open.keys()],
  };
}

function keepSuite(e: Engine, key: string, suite: OpenSuite): void {
  e.suites.get(key)?.close();
  e.suites.set(key, suite);
}

async function init(
  e: Engine,
  loadSqlJs: (init: WorkerInit) => Promise<SqlJsStatic>,
  options: WorkerInit,
): Promise<{ sqliteVersion: string; clockTickMs: number }> {
  e.conns.cacheBytes = options.cacheBytes;
  const SQL = (e.conns.SQL = await loadSqlJs(options));
  const db = new SQL.Database();
  // Process-wide (this worker's SQLite), so set once on any connection.
  db.exec(`PRAGMA hard_heap_limit = ${HEAP_LIMIT}`);
  const v = String(db.exec('select sqlite_version()')[0]!.values[0]![0]);
  db.close();
  e.tickMs = clockTick(() => performance.now());
  return { sqliteVersion: v, clockTickMs: e.tickMs };
}

// ---- Loading a database: its source, its header, its journal mode, a check of its content.

function loadDb(
  e: Engine,
  dbId: string,
  given: GivenDb,
  checked: boolean,
): { sizeBytes: number; tables: number; quickChecked: boolean } {
  // Bytes are opened in place (openSharing); a file or a Blob is read by pages, never whole.
  const cache = given instanceof Uint8Array ? null : pagedCache(e, dbId, given);
  const size = cache ? cache.size : (given as Uint8Array).length;
  const headBytes = cache
    ? new PagedFile(cache).subarray(0, Math.min(100, size))
    : (given as Uint8Array).subarray(0, 100);
  checkHeader(dbId, size, headBytes, cache);
  toRollbackJournal(headBytes, given, cache);
  e.golds.loaded(dbId, size, e.conns.open.get(dbId)?.sizeBytes);
  e.conns.drop(dbId);
  const db = cache ? openPaged(e.conns.sql(), cache) : openSharing(e.conns.sql(), given as Uint8Array);
  const { tables, nondeterministicView } = inspect(dbId, db, size, cache, checked);
  e.conns.open.set(dbId, {
    db,
    pristine: cache ?? (given as Uint8Array),
    shared: true,
    dirty: false,
    fpStmt: null,
    lastFp: null,
    sizeBytes: size,
    nondeterministicView,
  });
  e.conns.evict(dbId);
  return { sizeBytes: size, tables, quickChecked: !checked };
}

/** A file or a Blob, read by pages through a cache of PAGE_CACHE_BYTES. */
function pagedCache(e: Engine, dbId: string, given: Exclude<GivenDb, Uint8Array>): BlockCache {
  let source;
  try {
    source = openSource(given, e.fs);
  } catch (err) {
    throw new WorkbenchError('BAD_DATABASE', errorMessage(err), `database ${dbId}`, { cause: err });
  }
  return new BlockCache(source, PAGE_CACHE_BYTES);
}

/** Refuses what is not an SQLite 3 file (the cache, if any, closed). */
function checkHeader(dbId: string, size: number, headBytes: Uint8Array, cache: BlockCache | null): void {
  const head = String.fromCharCode(...headBytes.subarray(0, 16));
  if (size >= 100 && head === SQLITE_HEADER) return;
  cache?.close();
  throw new WorkbenchError(
    'BAD_DATABASE',
    `database ${dbId}: not an SQLite 3 file (${size} bytes, header ${JSON.stringify(head.slice(0, 15))}); ` +
      `replace it with the .sqlite file of ${dbId}`,
  );
}

/**
 * WAL databases cannot be opened from memory; the copy we hold is switched to rollback
 * journal mode (bytes 18-19), which changes nothing about its content (a non-empty -wal
 * beside the file is refused where the bytes are read). The user's file is never written:
 * a database read by pages gets the two bytes as a patch over its source.
 */
function toRollbackJournal(headBytes: Uint8Array, given: GivenDb, cache: BlockCache | null): void {
  if (headBytes[18] !== 2 && headBytes[19] !== 2) return;
  if (cache) cache.patch(18, Uint8Array.of(1, 1));
  else {
    (given as Uint8Array)[18] = 1;
    (given as Uint8Array)[19] = 1;
  }
}

/**
 * Pins the new connection and checks what it holds: its tables counted, its pages checked
 * (quick_check, which reads every page: skipped when `checked`, these bytes having passed it at
 * an earlier opening), the first view whose definition is not deterministic named. Anything
 * wrong closes it (and the cache) and is refused as an unreadable file.
 */
function inspect(
  dbId: string,
  db: Database,
  size: number,
  cache: BlockCache | null,
  checked: boolean,
): { tables: number; nondeterministicView: string | null } {
  try {
    pinConnection(db, size);
    const tables = Number(db.exec("SELECT count(*) FROM sqlite_master WHERE type='table'")[0]!.values[0]![0]);
    // quick_check reports damage as a row (it throws only when it cannot read at all).
    const check = checked ? 'ok' : String(db.exec('PRAGMA main.quick_check(1)')[0]?.values[0]?.[0] ?? 'ok');
    const failure = cache?.failure ?? null;
    if (failure !== null) throw new WorkbenchError('BAD_DATABASE', failure);
    if (check !== 'ok')
      throw new WorkbenchError(
        'BAD_DATABASE',
        `damaged: ${check.replace(/\s+/g, ' ').replace('*** in database main *** ', '')}`,
      );
    const views = db.exec("SELECT name, sql FROM sqlite_master WHERE type = 'view'")[0]?.values ?? [];
    const unstable = views.find(([, text]) => typeof text !== 'string' || viewIsNonDeterministic(text));
    return { tables, nondeterministicView: unstable ? String(unstable[0]) : null };
  } catch (err) {
    db.close();
    cache?.close();
    throw new WorkbenchError(
      'BAD_DATABASE',
      `unreadable SQLite file (${errorMessage(err)}); import an intact copy of it again`,
      `database ${dbId}`,
      { cause: err },
    );
  }
}

// ---- One execution: the fingerprint before, the text under the worker's bounds, the fingerprint after.

/**
 * Runs one text and compares the connection before and after it: any change marks the
 * connection dirty, so it is re-opened before the next execution.
 */
function execute(health: WorkerHealth, entry: OpenDb, text: string, readOnly: boolean, classes = false): Ran {
  if (isVacuumInto(text))
    return { result: null, error: new WorkbenchError('REFUSED', VACUUM_INTO_MESSAGE), wrote: true, ms: 0 };
  let before: Fingerprint;
  try {
    before = entry.lastFp ?? fingerprint(entry);
  } catch (err) {
    health.checkFailed(err);
    throw err;
  }
  entry.lastFp = null;
  const { result, error, ms } = runBounded(health, entry, text, readOnly, classes);
  const failure = pagedFailure(entry);
  if (failure !== null) {
    // What was read may be zeros in place of the file's bytes: no result of it stands.
    entry.dirty = true;
    return { result: null, error: new WorkbenchError('BAD_DATABASE', failure), wrote: false, ms };
  }
  return compareAfter(health, entry, text, before, { result, error, ms });
}

/** The text run (read only under SQLite's query_only when asked), its error named by the worker's bounds. */
function runBounded(
  health: WorkerHealth,
  entry: OpenDb,
  text: string,
  readOnly: boolean,
  classes: boolean,
): { result: FetchedRows | null; error: Error | null; ms: number } {
  let result: FetchedRows | null = null;
  let error: Error | null = null;
  const t0 = performance.now();
  try {
    if (readOnly) entry.db.exec('PRAGMA query_only = 1');
    try {
      result = runPython(entry.db, text, { classes });
    } finally {
      if (readOnly) entry.db.exec('PRAGMA query_only = 0');
    }
  } catch (err) {
    error = err instanceof Error ? err : new Error(errorMessage(err));
    const over = overBudget(error);
    if (over) {
      error = new WorkbenchError('REFUSED', over);
      health.overBudget(over);
    }
    const module = missingModule(error);
    if (module) error = new WorkbenchError('UNSUPPORTED', module);
  }
  return { result, error, ms: performance.now() - t0 };
}

/** The connection after the text, compared with `before`: what changed marks it dirty; a failed check fails closed. */
function compareAfter(
  health: WorkerHealth,
  entry: OpenDb,
  text: string,
  before: Fingerprint,
  ran: { result: FetchedRows | null; error: Error | null; ms: number },
): Ran {
  try {
    const after = fingerprint(entry);
    entry.lastFp = after;
    health.checkLimits(before, after);
    if (!looksLikeQuery(text) || changed(before, after)) entry.dirty = true;
    return { ...ran, wrote: wrote(before, after) };
  } catch (err) {
    entry.dirty = true;
    health.checkFailed(err);
    return { ...ran, wrote: true };
  }
}

// ---- One item: the prediction, then the gold (kept or run), then the verdict.

/** What the prediction and the gold of one item gave. */
interface PairRun {
  pred: FetchedRows | null;
  gold: FetchedRows | null;
  error: string | null;
  mutatedDb: boolean;
  predKey?: string;
  goldReused: boolean;
}

function evaluate(e: Engine, given: ExecRequest): ExecDone | NeedDb {
  // Spider's rule executes its normalised texts (spiderQueryText), as test-suite-sql-eval does.
  const req =
    given.exRule === 'spider'
      ? { ...given, predSql: spiderQueryText(given.predSql), goldSql: spiderQueryText(given.goldSql) }
      : given;
  const entry = e.conns.ready(req.dbId, [req.predSql, req.goldSql]);
  if (!entry) return { kind: 'need-db' };
  const t0 = performance.now();
  const ran = runPair(e, entry, req);
  e.conns.settle(req.dbId, entry);
  const elapsedMs = performance.now() - t0;
  const view = entry.nondeterministicView;
  const tail = {
    ...(ran.goldReused ? { goldReused: true } : {}),
    ...(view === null ? {} : { nondeterministicView: view }),
    ...e.health.take(),
  };
  return ran.error !== null || !ran.pred || !ran.gold
    ? errorVerdict(req, ran, elapsedMs, tail)
    : okVerdict(req, { ...ran, pred: ran.pred, gold: ran.gold }, elapsedMs, tail);
}

/** The prediction, then the gold on the same connection (or the gold kept for this database). */
function runPair(e: Engine, entry: OpenDb, req: ExecRequest): PairRun {
  const out: PairRun = { pred: null, gold: null, error: null, mutatedDb: false, goldReused: false };
  try {
    const p = execute(e.health, entry, req.predSql, req.readOnly);
    out.mutatedDb = p.wrote;
    out.pred = p.result;
    if (p.error) out.error = `prediction: ${p.error.message}`;
    else if (p.wrote && req.readOnly) out.error = 'prediction: writes to the database, which --read-only forbids';
    else {
      // The prediction executed: its result votes in self-consistency even if gold fails.
      out.predKey = resultKey(out.pred!.rows);
      runGold(e, entry, req, p.wrote, out);
    }
  } catch (err) {
    entry.dirty = true;
    out.error = `prediction: ${errorMessage(err)}`;
  }
  return out;
}

/**
 * The gold of a pristine database is the same for every sample whose prediction left it
 * untouched: executed once, then taken from the gold cache (it adds no time to the item).
 */
function runGold(e: Engine, entry: OpenDb, req: ExecRequest, predWrote: boolean, out: PairRun): void {
  const key =
    req.reuseGold &&
    !entry.dirty &&
    !predWrote &&
    entry.nondeterministicView === null &&
    GoldCache.reusable(req.goldSql)
      ? GoldCache.key(req.dbId, req.goldSql)
      : null;
  const known = key === null ? undefined : e.golds.take(key);
  if (known) {
    out.goldReused = true;
    out.gold = known.result;
    if (known.error !== null) out.error = known.error;
    return;
  }
  const g = execute(e.health, entry, req.goldSql, false);
  if (g.error) out.error = `gold: ${g.error.message}`;
  out.gold = g.result;
  if (key !== null && !g.wrote && !entry.dirty) e.golds.keep(key, g.result, g.error ? out.error : null);
}

const preview = (rows: SqlValue[][], n: number): SqlValue[][] => (n > 0 ? rows.slice(0, n) : []);

/** What follows the verdict's fields: gold reuse, an unstable view, a reason to replace the worker. */
type VerdictTail = { goldReused?: boolean; nondeterministicView?: string; retire?: string };

function errorVerdict(req: ExecRequest, ran: PairRun, elapsedMs: number, tail: VerdictTail): ExecDone {
  const { pred, gold } = ran;
  return {
    kind: 'done',
    status: 'error',
    ex: 0,
    softF1: req.softF1 ? 0 : null,
    error: ran.error,
    mutatedDb: ran.mutatedDb,
    predRowCount: pred?.rows.length ?? null,
    goldRowCount: gold?.rows.length ?? null,
    predColumns: pred?.columns ?? [],
    goldColumns: gold?.columns ?? [],
    predPreview: preview(pred?.rows ?? [], req.previewRows),
    goldPreview: [],
    elapsedMs,
    ...(ran.predKey !== undefined ? { resultKey: ran.predKey } : {}),
    ...tail,
  };
}

function okVerdict(
  req: ExecRequest,
  ran: PairRun & { pred: FetchedRows; gold: FetchedRows },
  elapsedMs: number,
  tail: VerdictTail,
): ExecDone {
  const { pred, gold } = ran;
  return {
    kind: 'done',
    status: 'ok',
    ex:
      req.exRule === 'spider'
        ? spiderExecMatch(pred.rows, gold.rows, spiderOrderMatters(req.goldSql))
        : executionMatch(pred.rows, gold.rows),
    softF1: req.softF1 ? softF1(pred.rows, gold.rows) : null,
    error: null,
    mutatedDb: ran.mutatedDb,
    predRowCount: pred.rows.length,
    goldRowCount: gold.rows.length,
    predColumns: pred.columns,
    goldColumns: gold.columns,
    predPreview: preview(pred.rows, req.previewRows),
    goldPreview: preview(gold.rows, req.previewRows),
    elapsedMs,
    resultKey: ran.predKey!,
    ...tail,
  };
}

// ---- R-VES timings: blocks of runs, each from the pristine database.

/** One timing session: the database, its texts, the block's span, and what the blocks found. */
interface Timing {
  readonly e: Engine;
  readonly req: TimeRequest;
  readonly entry: OpenDb;
  readonly texts: string[];
  readonly minSpanMs: number;
  notTimed: string | null;
  maxRuns: number;
}

function timeQueries(e: Engine, req: TimeRequest): TimeDone | NeedDb {
  const entry = e.conns.touch(req.dbId);
  const texts = [req.predSql, req.goldSql];
  // Each timed execution starts from the pristine database, as each of the official
  // evaluator's opens a connection of its own and commits nothing: the pristine bytes are
  // kept for the repetitions (a connection without them is opened again by the pool).
  if (entry && !entry.pristine && texts.some(mayWrite)) e.conns.drop(req.dbId);
  if (!entry || !e.conns.open.has(req.dbId) || !e.conns.prepare(req.dbId, entry, texts, true))
    return { kind: 'need-db' };
  // A block of runs per timing (docs/r-ves-timing.md): it spans 2 ms at least (20 steps of a
  // coarser clock), the same on every host, so a query faster than one step is timed too. A
  // text that may write must start from the pristine database each time: one run per timing.
  const t: Timing = { e, req, entry, texts, minSpanMs: blockSpanMs(e.tickMs), notTimed: null, maxRuns: 1 };
  const ratios: number[] = [];
  try {
    for (let i = 0; i < req.iterations && t.notTimed === null; i++) {
      const predMs = timeText(t, req.predSql, 'prediction');
      const goldMs = predMs === null ? null : timeText(t, req.goldSql, 'gold');
      if (predMs !== null && goldMs !== null) ratios.push(goldMs / predMs);
    }
  } catch (err) {
    t.notTimed = `a timed run failed: ${errorMessage(err)}`;
  } finally {
    // Back to holding the database once: a private copy lets the pristine bytes go.
    if (!entry.shared && !(entry.pristine instanceof BlockCache)) entry.pristine = null;
    e.conns.settle(req.dbId, entry);
  }
  const { notTimed } = t;
  return {
    kind: 'done',
    ratios,
    clockTickMs: e.tickMs,
    maxRuns: t.maxRuns,
    ...(notTimed !== null ? { notTimed } : {}),
  };
}

/** One timing of `text` in ms, or null (with `notTimed` set) when it cannot be timed. */
function timeText(t: Timing, text: string, side: string): number | null {
  const { e, req, entry } = t;
  if (!e.conns.prepare(req.dbId, entry, t.texts, true))
    throw new WorkbenchError('INTERNAL', 'the database was dropped between repetitions');
  if (mayWrite(text) || !looksLikeQuery(text)) {
    const r = execute(e.health, entry, text, false);
    if (r.error) throw new WorkbenchError('FAILED', r.error.message, side, { cause: r.error });
    if (r.ms > 0) return r.ms;
    t.notTimed = `the ${side} changes the database, so it runs once per timing, and it took less than the clock's step (${e.tickMs} ms)`;
    return null;
  }
  const block = timeQueryBlock(e.health, entry, text, side, t.minSpanMs);
  if (!block) {
    t.notTimed = `the clock did not move while the ${side} ran ${MAX_BLOCK_RUNS} times`;
    return null;
  }
  if (block.runs > t.maxRuns) t.maxRuns = block.runs;
  return block.ms;
}

/**
 * A block of runs of a query alone (no fingerprint per run, which would be timed with it);
 * the connection is compared once around the block, as execute() compares around one run.
 */
function timeQueryBlock(
  health: WorkerHealth,
  entry: OpenDb,
  text: string,
  side: string,
  minSpanMs: number,
): BlockTiming | null {
  let before: Fingerprint;
  try {
    before = fingerprint(entry);
  } catch (err) {
    health.checkFailed(err);
    throw err;
  }
  try {
    return timeBlock(
      () => void runPython(entry.db, text),
      () => performance.now(),
      minSpanMs,
    );
  } catch (err) {
    throw new WorkbenchError('FAILED', errorMessage(err), side, { cause: err });
  } finally {
    try {
      const after = fingerprint(entry);
      health.checkLimits(before, after);
      if (changed(before, after)) entry.dirty = true;
    } catch (err) {
      entry.dirty = true;
      health.checkFailed(err);
    }
  }
}

// ---- Read-only queries: for display, and a policy's probe.

function query(e: Engine, dbId: string, text: string, maxRows: number): QueryResult | NeedDb {
  const entry = e.conns.ready(dbId, [text]);
  if (!entry) return { kind: 'need-db' };
  const r = execute(e.health, entry, text, true);
  e.conns.settle(dbId, entry);
  if (r.error) throw r.error;
  if (r.wrote) throw new WorkbenchError('REFUSED', 'writes to the database: only queries are shown');
  return {
    columns: r.result!.columns,
    rows: r.result!.rows.slice(0, maxRows),
    truncated: r.result!.rows.length > maxRows,
  };
}

function probe(e: Engine, dbId: string, text: string): ProbeDone | NeedDb {
  const entry = e.conns.ready(dbId, [text]);
  if (!entry) return { kind: 'need-db' };
  const r = execute(e.health, entry, text, true, true);
  e.conns.settle(dbId, entry);
  const none = { kind: 'done' as const, columns: [], rows: [], classes: [] };
  if (r.error) return { ...none, error: r.error.message };
  // query_only refuses writes with SQLite's own message; whatever changed the connection
  // anyway (an ATTACH, a temp object) is refused here, and the connection was re-opened.
  if (r.wrote)
    return {
      ...none,
      error: 'the probe changed the database or the connection (a write or an ATTACH), which probes may not',
    };
  return { kind: 'done', columns: r.result!.columns, rows: r.result!.rows, classes: r.result!.classes ?? [] };
}

// ---- Metric ts: the row-order check, then the test suite.

function checkItem(e: Engine, req: CheckRequest): CheckDone | NeedDb | NeedSuite {
  const suite = req.exAccepted ? e.suites.get(suiteKey(req.dbId, req.spec)) : undefined;
  if (req.exAccepted && !suite) return { kind: 'need-suite' };
  const texts = [req.predSql, req.goldSql];
  let order = { goldOrderDependent: null as boolean | null, passesByRowOrder: null as boolean | null };
  // A text that may write is left out of the order check (it would need the pristine bytes again).
  if (!texts.some(mayWrite)) {
    const entry = e.conns.ready(req.dbId, texts);
    if (!entry) return { kind: 'need-db' };
    order = orderCheck(
      (text, reversed) => runForOrder(e, entry, req.dbId, text, reversed),
      req.predSql,
      req.goldSql,
      req.exAccepted,
    );
    e.conns.settle(req.dbId, entry);
  }
  if (!suite) return { kind: 'done', ts: null, counterexample: null, ...order };
  const verdict = suite.check(req.predSql, req.goldSql);
  return { kind: 'done', ts: verdict.ts, counterexample: verdict.counterexample, ...order };
}

/** A text's result for the order check, rows in SQLite's usual or reversed unordered order (null when it fails or writes). */
function runForOrder(e: Engine, entry: OpenDb, dbId: string, text: string, reversed: boolean): FetchedRows | null {
  // The gold in the usual order is usually known from the item's EX (gold reuse).
  const known =
    reversed || entry.nondeterministicView !== null || !GoldCache.reusable(text)
      ? undefined
      : e.golds.peek(GoldCache.key(dbId, text));
  if (known) return known.error === null ? known.result : null;
  if (reversed) entry.db.exec('PRAGMA reverse_unordered_selects = ON');
  try {
    const r = execute(e.health, entry, text, true);
    return r.error || r.wrote ? null : r.result;
  } finally {
    if (reversed) {
      entry.db.exec('PRAGMA reverse_unordered_selects = OFF');
      entry.lastFp = null;
    }
  }
}
