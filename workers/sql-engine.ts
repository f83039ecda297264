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
  ExecDone,
  ExecRequest,
  NeedDb,
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

export function createSqlEngine(
  loadSqlJs: (init: WorkerInit) => Promise<SqlJsStatic>,
  /** node:fs where the worker runs in Node: databases given as a file are read by pages from it. */
  fs: SyncFs | null = null,
): SqlWorkerApi {
  let SQL: SqlJsStatic | null = null;
  /** The clock's step in this worker (ms): 100 µs on a page that is not cross-origin isolated. */
  let tickMs = 0;
  let cacheBytes = 512 * 1024 * 1024;
  // Map iteration order is insertion order: delete + set moves an entry to the MRU end.
  const open = new Map<string, OpenDb>();
  /**
   * Gold results on the pristine database, by database and gold text (reuse.ts in the core says
   * which golds qualify): every sample of a question runs the same gold, so it is executed once
   * per worker while its result fits GOLD_CACHE_VALUES, even when the database is evicted and
   * loaded again. A worker serves one pool, whose DbSource gives each db_id one file, and
   * `forgetGolds` is called when a database id is given bytes it did not have before.
   */
  const golds = new Map<string, { result: FetchedRows | null; error: string | null; values: number }>();
  let goldValues = 0;
  /** Size of the bytes each database id was last loaded with (other bytes forget its golds). */
  const seenSize = new Map<string, number>();
  const goldKey = (dbId: string, sql: string) => `${dbId}\u0000${sql}`;
  function forgetGolds(dbId: string): void {
    for (const [k, g] of golds)
      if (k.startsWith(`${dbId}\u0000`)) {
        golds.delete(k);
        goldValues -= g.values;
      }
  }
  function keepGold(key: string, result: FetchedRows | null, error: string | null): void {
    const values = result ? result.rows.length * Math.max(1, result.columns.length) : 0;
    if (values > GOLD_CACHE_VALUES) return;
    golds.set(key, { result, error, values });
    goldValues += values;
    for (const [k, g] of golds) {
      if (goldValues <= GOLD_CACHE_VALUES) break;
      golds.delete(k);
      goldValues -= g.values;
    }
  }

  /** Test suites this worker holds open, by suiteKey (database and spec). */
  const suites = new Map<string, OpenSuite>();
  function keepSuite(key: string, suite: OpenSuite): void {
    suites.get(key)?.close();
    suites.set(key, suite);
  }

  function sql(): SqlJsStatic {
    if (!SQL) throw new WorkbenchError('INTERNAL', 'SQL worker used before init()');
    return SQL;
  }

  function touch(dbId: string): OpenDb | undefined {
    const entry = open.get(dbId);
    if (entry) {
      open.delete(dbId);
      open.set(dbId, entry);
    }
    return entry;
  }

  function closeQuietly(db: Database): void {
    try {
      db.close();
    } catch {
      // closing a broken handle must not hide the error that led here
    }
  }

  function drop(dbId: string): void {
    const entry = open.get(dbId);
    if (!entry) return;
    open.delete(dbId);
    closeQuietly(entry.db);
    if (entry.pristine instanceof BlockCache) entry.pristine.close();
  }

  function evict(keep: string): void {
    let total = 0;
    for (const e of open.values()) total += heldBytes(e);
    for (const id of [...open.keys()]) {
      if (total <= cacheBytes) break;
      if (id === keep) continue;
      total -= heldBytes(open.get(id)!);
      drop(id);
    }
  }

  /**
   * Before every execution: a connection that the last execution changed is re-opened from the
   * pristine bytes, and one that reads them in place is re-opened on a private copy when a text
   * may write (and back on the bytes in place once only reads follow). False when the pristine
   * bytes are no longer held: the database is dropped, and the caller answers need-db.
   */
  function prepare(dbId: string, entry: OpenDb, texts: string[], keepPristine = false): boolean {
    const writable = texts.some(mayWrite);
    if (!entry.dirty && !(entry.shared && writable)) return true;
    const bytes = entry.pristine;
    if (!bytes) {
      drop(dbId);
      return false;
    }
    closeQuietly(entry.db);
    entry.fpStmt = null;
    entry.lastFp = null;
    if (bytes instanceof BlockCache) {
      // A fresh view: no copy, whatever the texts may do (a write stays in its overlay).
      entry.db = pinned(openPaged(sql(), bytes), bytes.size);
      entry.shared = !writable;
      entry.dirty = false;
      return true;
    }
    entry.db = pinned(writable ? new (sql().Database)(bytes) : openSharing(sql(), bytes), bytes.length);
    entry.shared = !writable;
    entry.dirty = false;
    if (writable && !keepPristine) entry.pristine = null;
    if (writable) evict(dbId);
    return true;
  }

  /** After an execution: a changed connection that cannot be restored in place is dropped now. */
  function settle(dbId: string, entry: OpenDb): void {
    if (entry.dirty && !entry.pristine) drop(dbId);
  }

  /**
   * Set when an execution hit a bound (the worker's wasm memory grew to the heap limit) or
   * changed SQLite's heap limits in spite of the PRAGMA policy: the next evaluate result asks
   * the pool to replace the worker.
   */
  let retire: string | null = null;
  /** Heap limits changed: this worker cannot be trusted again (every evaluate result says so). */
  let poisoned: string | null = null;
  let pristineLimits: string | null = null;
  /** The reason to replace the worker after this item, once (a poisoned worker says it every time). */
  const takeRetire = (): { retire?: string } => {
    const r = poisoned ?? retire;
    retire = null;
    return r ? { retire: r } : {};
  };
  /**
   * The check around an execution failed, so the worker's state cannot be confirmed: fail
   * closed. SQLite's own statements fail this way once its heap limit was lowered (
   * `EXPLAIN PRAGMA hard_heap_limit = 200000` left every later item "out of memory" while the
   * check's failure was only taken as a changed connection).
   */
  const checkFailed = (err: unknown): void => {
    poisoned ??= `the check of the worker's state around an execution failed (${errorMessage(err)})`;
  };
  /** Compares the heap limits after an execution with the worker's own. */
  const checkLimits = (before: Fingerprint, after: Fingerprint): void => {
    pristineLimits ??= before.limits;
    if (after.limits !== pristineLimits)
      poisoned ??= `SQLite's heap limits of the worker changed (${pristineLimits} -> ${after.limits})`;
  };

  /**
   * Runs one text and compares the connection before and after it: any change marks the
   * connection dirty, so it is re-opened before the next execution.
   */
  function execute(entry: OpenDb, text: string, readOnly: boolean, classes = false): Ran {
    if (isVacuumInto(text))
      return { result: null, error: new WorkbenchError('REFUSED', VACUUM_INTO_MESSAGE), wrote: true, ms: 0 };
    const fp = () => readFingerprint((entry.fpStmt ??= prepareFingerprint(entry.db)), entry.db);
    let before: Fingerprint;
    try {
      before = entry.lastFp ?? fp();
    } catch (err) {
      checkFailed(err);
      throw err;
    }
    entry.lastFp = null;
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
        retire ??= over;
      }
      const module = missingModule(error);
      if (module) error = new WorkbenchError('UNSUPPORTED', module);
    }
    const ms = performance.now() - t0;
    const failure = pagedFailure(entry);
    if (failure !== null) {
      // What was read may be zeros in place of the file's bytes: no result of it stands.
      entry.dirty = true;
      return { result: null, error: new WorkbenchError('BAD_DATABASE', failure), wrote: false, ms };
    }
    try {
      const after = fp();
      entry.lastFp = after;
      checkLimits(before, after);
      if (!looksLikeQuery(text) || changed(before, after)) entry.dirty = true;
      return { result, error, wrote: wrote(before, after), ms };
    } catch (err) {
      entry.dirty = true;
      checkFailed(err);
      return { result, error, wrote: true, ms };
    }
  }

  const goldReusable = (sql: string) => !isNonDeterministic(sql) && !WRITES.test(sql);

  function preview(rows: SqlValue[][], n: number): SqlValue[][] {
    return n > 0 ? rows.slice(0, n) : [];
  }

  const api: SqlWorkerApi = {
    async init(options) {
      cacheBytes = options.cacheBytes;
      SQL = await loadSqlJs(options);
      const db = new SQL.Database();
      // Process-wide (this worker's SQLite), so set once on any connection.
      db.exec(`PRAGMA hard_heap_limit = ${HEAP_LIMIT}`);
      const v = String(db.exec('select sqlite_version()')[0]!.values[0]![0]);
      db.close();
      tickMs = clockTick(() => performance.now());
      return { sqliteVersion: v, clockTickMs: tickMs };
    },

    async loadDb(dbId, given) {
      // Bytes are opened in place (openSharing); a file or a Blob is read by pages, never whole.
      let cache: BlockCache | null = null;
      if (!(given instanceof Uint8Array)) {
        let source;
        try {
          source = openSource(given, fs);
        } catch (err) {
          throw new WorkbenchError('BAD_DATABASE', errorMessage(err), `database ${dbId}`, { cause: err });
        }
        cache = new BlockCache(source, PAGE_CACHE_BYTES);
      }
      const size = cache ? cache.size : (given as Uint8Array).length;
      const headBytes = cache
        ? new PagedFile(cache).subarray(0, Math.min(100, size))
        : (given as Uint8Array).subarray(0, 100);
      const head = String.fromCharCode(...headBytes.subarray(0, 16));
      if (size < 100 || head !== SQLITE_HEADER) {
        cache?.close();
        throw new WorkbenchError(
          'BAD_DATABASE',
          `database ${dbId}: not an SQLite 3 file (${size} bytes, header ${JSON.stringify(head.slice(0, 15))}); ` +
            `replace it with the .sqlite file of ${dbId}`,
        );
      }
      // WAL databases cannot be opened from memory; the copy we hold is switched to rollback
      // journal mode (bytes 18-19), which changes nothing about its content (a non-empty -wal
      // beside the file is refused where the bytes are read). The user's file is never written:
      // a database read by pages gets the two bytes as a patch over its source.
      if (headBytes[18] === 2 || headBytes[19] === 2) {
        if (cache) cache.patch(18, Uint8Array.of(1, 1));
        else {
          (given as Uint8Array)[18] = 1;
          (given as Uint8Array)[19] = 1;
        }
      }
      const before = open.get(dbId)?.sizeBytes ?? seenSize.get(dbId);
      if (before !== undefined && before !== size) forgetGolds(dbId);
      seenSize.set(dbId, size);
      drop(dbId);
      const db = cache ? openPaged(sql(), cache) : openSharing(sql(), given as Uint8Array);
      let tables: number;
      let nondeterministicView: string | null = null;
      try {
        pinConnection(db, size);
        tables = Number(db.exec("SELECT count(*) FROM sqlite_master WHERE type='table'")[0]!.values[0]![0]);
        // quick_check reports damage as a row (it throws only when it cannot read at all).
        const check = String(db.exec('PRAGMA main.quick_check(1)')[0]?.values[0]?.[0] ?? 'ok');
        const failure = cache?.failure ?? null;
        if (failure !== null) throw new WorkbenchError('BAD_DATABASE', failure);
        if (check !== 'ok')
          throw new WorkbenchError(
            'BAD_DATABASE',
            `damaged: ${check.replace(/\s+/g, ' ').replace('*** in database main *** ', '')}`,
          );
        const views = db.exec("SELECT name, sql FROM sqlite_master WHERE type = 'view'")[0]?.values ?? [];
        const unstable = views.find(([, text]) => typeof text !== 'string' || viewIsNonDeterministic(text));
        if (unstable) nondeterministicView = String(unstable[0]);
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
      open.set(dbId, {
        db,
        pristine: cache ?? (given as Uint8Array),
        shared: true,
        dirty: false,
        fpStmt: null,
        lastFp: null,
        sizeBytes: size,
        nondeterministicView,
      });
      evict(dbId);
      return { sizeBytes: size, tables };
    },

    async evaluate(given: ExecRequest): Promise<ExecDone | NeedDb> {
      // Spider's rule executes its normalised texts (spiderQueryText), as test-suite-sql-eval does.
      const req =
        given.exRule === 'spider'
          ? { ...given, predSql: spiderQueryText(given.predSql), goldSql: spiderQueryText(given.goldSql) }
          : given;
      const entry = touch(req.dbId);
      if (!entry || !prepare(req.dbId, entry, [req.predSql, req.goldSql])) return { kind: 'need-db' };
      const t0 = performance.now();
      let pred: FetchedRows | null = null;
      let gold: FetchedRows | null = null;
      let error: string | null = null;
      let mutatedDb = false;
      let predKey: string | undefined;
      let goldReused = false;
      try {
        const p = execute(entry, req.predSql, req.readOnly);
        mutatedDb = p.wrote;
        pred = p.result;
        if (p.error) error = `prediction: ${p.error.message}`;
        else if (mutatedDb && req.readOnly) error = 'prediction: writes to the database, which --read-only forbids';
        else {
          // The prediction executed: its result votes in self-consistency even if gold fails.
          predKey = resultKey(pred!.rows);
          // The gold of a pristine database is the same for every sample whose prediction left
          // it untouched: executed once, then taken from `golds` (it adds no time to the item).
          const key =
            req.reuseGold &&
            !entry.dirty &&
            !p.wrote &&
            entry.nondeterministicView === null &&
            goldReusable(req.goldSql)
              ? goldKey(req.dbId, req.goldSql)
              : null;
          const known = key === null ? undefined : golds.get(key);
          if (known) {
            golds.delete(key!);
            golds.set(key!, known);
            goldReused = true;
            gold = known.result;
            if (known.error !== null) error = known.error;
          } else {
            const g = execute(entry, req.goldSql, false);
            if (g.error) error = `gold: ${g.error.message}`;
            gold = g.result;
            if (key !== null && !g.wrote && !entry.dirty) keepGold(key, g.result, g.error ? error : null);
          }
        }
      } catch (err) {
        entry.dirty = true;
        error = `prediction: ${errorMessage(err)}`;
      }
      settle(req.dbId, entry);
      const elapsedMs = performance.now() - t0;
      const view = entry.nondeterministicView;
      const unstable = view === null ? {} : { nondeterministicView: view };
      if (error !== null || !pred || !gold) {
        return {
          kind: 'done',
          status: 'error',
          ex: 0,
          softF1: req.softF1 ? 0 : null,
          error,
          mutatedDb,
          predRowCount: pred?.rows.length ?? null,
          goldRowCount: gold?.rows.length ?? null,
          predColumns: pred?.columns ?? [],
          goldColumns: gold?.columns ?? [],
          predPreview: preview(pred?.rows ?? [], req.previewRows),
          goldPreview: [],
          elapsedMs,
          ...(predKey !== undefined ? { resultKey: predKey } : {}),
          ...(goldReused ? { goldReused } : {}),
          ...unstable,
          ...takeRetire(),
        };
      }
      return {
        kind: 'done',
        status: 'ok',
        ex:
          req.exRule === 'spider'
            ? spiderExecMatch(pred.rows, gold.rows, spiderOrderMatters(req.goldSql))
            : executionMatch(pred.rows, gold.rows),
        softF1: req.softF1 ? softF1(pred.rows, gold.rows) : null,
        error: null,
        mutatedDb,
        predRowCount: pred.rows.length,
        goldRowCount: gold.rows.length,
        predColumns: pred.columns,
        goldColumns: gold.columns,
        predPreview: preview(pred.rows, req.previewRows),
        goldPreview: preview(gold.rows, req.previewRows),
        elapsedMs,
        resultKey: predKey!,
        ...(goldReused ? { goldReused } : {}),
        ...unstable,
        ...takeRetire(),
      };
    },

    async timeQueries(req: TimeRequest) {
      const entry = touch(req.dbId);
      const texts = [req.predSql, req.goldSql];
      // Each timed execution starts from the pristine database, as each of the official
      // evaluator's opens a connection of its own and commits nothing: the pristine bytes are
      // kept for the repetitions (a connection without them is opened again by the pool).
      if (entry && !entry.pristine && texts.some(mayWrite)) drop(req.dbId);
      if (!entry || !open.has(req.dbId) || !prepare(req.dbId, entry, texts, true)) return { kind: 'need-db' };
      // A block of runs per timing (docs/r-ves-timing.md): it spans 2 ms at least (20 steps of a
      // coarser clock), the same on every host, so a query faster than one step is timed too. A
      // text that may write must start from the pristine database each time: one run per timing.
      const minSpanMs = blockSpanMs(tickMs);
      const now = () => performance.now();
      let notTimed: string | null = null;
      let maxRuns = 1;
      const timed = (text: string, side: string): number | null => {
        if (!prepare(req.dbId, entry, texts, true))
          throw new WorkbenchError('INTERNAL', 'the database was dropped between repetitions');
        if (mayWrite(text) || !looksLikeQuery(text)) {
          const r = execute(entry, text, false);
          if (r.error) throw new WorkbenchError('FAILED', r.error.message, side, { cause: r.error });
          if (r.ms > 0) return r.ms;
          notTimed = `the ${side} changes the database, so it runs once per timing, and it took less than the clock's step (${tickMs} ms)`;
          return null;
        }
        // The block runs the query alone (no fingerprint per run, which would be timed with it);
        // the connection is compared once around the block, as execute() compares around one run.
        const fp = () => readFingerprint((entry.fpStmt ??= prepareFingerprint(entry.db)), entry.db);
        let before: Fingerprint;
        try {
          before = fp();
        } catch (err) {
          checkFailed(err);
          throw err;
        }
        let block: BlockTiming | null;
        try {
          block = timeBlock(() => void runPython(entry.db, text), now, minSpanMs);
        } catch (err) {
          throw new WorkbenchError('FAILED', errorMessage(err), side, { cause: err });
        } finally {
          try {
            const after = fp();
            checkLimits(before, after);
            if (changed(before, after)) entry.dirty = true;
          } catch (err) {
            entry.dirty = true;
            checkFailed(err);
          }
        }
        if (!block) {
          notTimed = `the clock did not move while the ${side} ran ${MAX_BLOCK_RUNS} times`;
          return null;
        }
        if (block.runs > maxRuns) maxRuns = block.runs;
        return block.ms;
      };
      const ratios: number[] = [];
      try {
        for (let i = 0; i < req.iterations && notTimed === null; i++) {
          const predMs = timed(req.predSql, 'prediction');
          const goldMs = predMs === null ? null : timed(req.goldSql, 'gold');
          if (predMs !== null && goldMs !== null) ratios.push(goldMs / predMs);
        }
      } catch (err) {
        notTimed = `a timed run failed: ${errorMessage(err)}`;
      } finally {
        // Back to holding the database once: a private copy lets the pristine bytes go.
        if (!entry.shared && !(entry.pristine instanceof BlockCache)) entry.pristine = null;
        settle(req.dbId, entry);
      }
      return { kind: 'done', ratios, clockTickMs: tickMs, maxRuns, ...(notTimed !== null ? { notTimed } : {}) };
    },

    async query(dbId, text, maxRows): Promise<QueryResult | NeedDb> {
      const entry = touch(dbId);
      if (!entry || !prepare(dbId, entry, [text])) return { kind: 'need-db' };
      const r = execute(entry, text, true);
      settle(dbId, entry);
      if (r.error) throw r.error;
      if (r.wrote) throw new WorkbenchError('REFUSED', 'writes to the database: only queries are shown');
      return {
        columns: r.result!.columns,
        rows: r.result!.rows.slice(0, maxRows),
        truncated: r.result!.rows.length > maxRows,
      };
    },

    async probe(dbId, text): Promise<ProbeDone | NeedDb> {
      const entry = touch(dbId);
      if (!entry || !prepare(dbId, entry, [text])) return { kind: 'need-db' };
      const r = execute(entry, text, true, true);
      settle(dbId, entry);
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
    },

    async buildSuite(dbId, spec, golds, onProgress) {
      const entry = touch(dbId);
      if (!entry || !prepare(dbId, entry, [])) return { kind: 'need-db' };
      // Read only: the sample is taken in place, so the original is never copied.
      entry.lastFp = null;
      const suite = buildSuiteOn(sql(), entry.db, golds, spec, onProgress);
      keepSuite(suiteKey(dbId, spec), new OpenSuite(sql(), suite));
      return { kind: 'done', suite };
    },

    async loadSuite(dbId, suite) {
      keepSuite(suiteKey(dbId, suite.spec), new OpenSuite(sql(), suite));
    },

    async checkItem(req) {
      const suite = req.exAccepted ? suites.get(suiteKey(req.dbId, req.spec)) : undefined;
      if (req.exAccepted && !suite) return { kind: 'need-suite' };
      const texts = [req.predSql, req.goldSql];
      let order = { goldOrderDependent: null as boolean | null, passesByRowOrder: null as boolean | null };
      // A text that may write is left out of the order check (it would need the pristine bytes again).
      if (!texts.some(mayWrite)) {
        const entry = touch(req.dbId);
        if (!entry || !prepare(req.dbId, entry, texts)) return { kind: 'need-db' };
        const run = (text: string, reversed: boolean) => {
          // The gold in the usual order is usually known from the item's EX (gold reuse).
          const known =
            reversed || entry.nondeterministicView !== null || !goldReusable(text)
              ? undefined
              : golds.get(goldKey(req.dbId, text));
          if (known) return known.error === null ? known.result : null;
          if (reversed) entry.db.exec('PRAGMA reverse_unordered_selects = ON');
          try {
            const r = execute(entry, text, true);
            return r.error || r.wrote ? null : r.result;
          } finally {
            if (reversed) {
              entry.db.exec('PRAGMA reverse_unordered_selects = OFF');
              entry.lastFp = null;
            }
          }
        };
        order = orderCheck(run, req.predSql, req.goldSql, req.exAccepted);
        settle(req.dbId, entry);
      }
      if (!suite) return { kind: 'done', ts: null, counterexample: null, ...order };
      const verdict = suite.check(req.predSql, req.goldSql);
      return { kind: 'done', ts: verdict.ts, counterexample: verdict.counterexample, ...order };
    },

    async openDbs() {
      return [...open.keys()];
    },
  };
  return api;
}
