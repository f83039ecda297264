/**
 * What the SQL worker does, written against an initialised sql.js module so that it can be
 * exercised directly in tests. workers/sql.worker.ts is the only place that loads sql.js.
 *
 * Semantics follow BIRD's official evaluator (../shared/docs/EVAL_SEMANTICS.md): the
 * prediction runs first, then the gold query, on the same connection; Python sqlite3's
 * statement rules apply; values keep their SQLite storage class (INTEGER beyond 2^53 is read
 * as a bigint). A prediction that writes is seen by its own gold query, then the database is
 * re-opened from pristine bytes so nothing leaks into the next item.
 */
import type { Database, SqlJsStatic, Statement } from 'sql.js';
import { executionMatch } from '../src/core/compare/ex.ts';
import { softF1 } from '../src/core/compare/soft-f1.ts';
import {
  MULTIPLE_STATEMENTS_MESSAGE,
  NUL_MESSAGE,
  firstSignificantIndex,
  hasTrailingStatement,
  leadingKeyword,
  looksLikeQuery,
} from '../src/core/sql/python-statement.ts';
import { resultKey } from '../src/core/rl/result-key.ts';
import type { SqlValue } from '../src/core/types.ts';
import type { ExecDone, ExecRequest, NeedDb, QueryResult, SqlWorkerApi, TimeRequest, WorkerInit } from './sql.api.ts';

interface OpenDb {
  db: Database;
  sizeBytes: number;
  /**
   * The bytes given to loadDb while the in-memory file system uses them as the database file
   * (see openSharing); null once the connection runs on a private copy.
   */
  shared: Uint8Array | null;
  /** The fingerprint query, prepared once per connection (see fingerprint()). */
  fpStmt: Statement | null;
}

interface Fingerprint {
  data: string;
  connection: string;
}

interface Result {
  columns: string[];
  rows: SqlValue[][];
}

const SQLITE_HEADER = 'SQLite format 3\u0000';
const MAX_SAFE = 9007199254740991;

/**
 * Memory bounds of a worker, far above what any benchmark query needs (they change no result
 * of a normal query). SQLite's heap (strings, blobs, sorter and hash memory before spilling)
 * stops at HEAP_LIMIT with "out of memory": a recursive CTE that doubles a string fails in a
 * few seconds instead of growing the worker to gigabytes. A result is kept in memory to be
 * compared, so one of more than MAX_RESULT_VALUES values (rows x columns, about 1 GB of
 * JavaScript arrays) is an error rather than a crashed worker; the official evaluator would
 * try to hold it too. Sorts that spill to temporary files are bounded by the item timeout.
 */
export const HEAP_LIMIT = 512 * 1024 * 1024;
export const MAX_RESULT_VALUES = 8_000_000;

/** sql.js reads INTEGER as bigint with `useBigInt` (its typings omit the second argument). */
const getExact = (stmt: Statement): SqlValue[] =>
  (stmt.get as unknown as (p: null, c: { useBigInt: boolean }) => SqlValue[]).call(stmt, null, { useBigInt: true });

/**
 * Opens `bytes` without copying them. sql.js writes the bytes into its in-memory file system,
 * whose first write of a file keeps `data.slice(0, n)`: a second copy of the whole database,
 * alive beside the first while the database opens (twice the memory of a large file). Here
 * `slice` of the whole array returns the array itself for the time of the open, so the file
 * system reads the caller's bytes in place. Reading never writes to the database file; a
 * statement that may write runs only after privatize() (the caller's bytes are never changed).
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

/**
 * Only SELECT and VALUES statements never write. Anything else may (WITH ... DELETE, DML, DDL,
 * PRAGMA, a leading empty statement before a write...).
 */
function mayWrite(text: string): boolean {
  const k = leadingKeyword(text);
  return k !== 'SELECT' && k !== 'VALUES';
}

const FINGERPRINT_SQL =
  'SELECT total_changes(), (SELECT schema_version FROM pragma_schema_version), ' +
  '(SELECT group_concat(name) FROM pragma_database_list)';

/** Thrown inside the engine to tag which query failed. */
class SideError extends Error {}

export function createSqlEngine(loadSqlJs: (init: WorkerInit) => Promise<SqlJsStatic>): SqlWorkerApi {
  let SQL: SqlJsStatic | null = null;
  let cacheBytes = 512 * 1024 * 1024;
  // Map iteration order is insertion order: delete + set moves an entry to the MRU end.
  const open = new Map<string, OpenDb>();

  function sql(): SqlJsStatic {
    if (!SQL) throw new Error('SQL worker used before init()');
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

  function drop(dbId: string): void {
    const entry = open.get(dbId);
    if (!entry) return;
    open.delete(dbId);
    try {
      entry.db.close();
    } catch {
      // closing a broken handle must not hide the error that led here
    }
  }

  function evict(keep: string): void {
    let total = 0;
    for (const e of open.values()) total += e.sizeBytes;
    for (const id of [...open.keys()]) {
      if (total <= cacheBytes) break;
      if (id === keep) continue;
      total -= open.get(id)!.sizeBytes;
      drop(id);
    }
  }

  /**
   * Before a statement that may write: a connection that reads the caller's bytes in place is
   * re-opened on a copy of them (the connection is clean here: anything that changed it has
   * dropped it). At most once per load, and only for items that are not plain queries.
   */
  function privatize(entry: OpenDb, ...texts: string[]): void {
    if (!entry.shared || !texts.some(mayWrite)) return;
    const bytes = entry.shared;
    entry.db.close();
    entry.db = new (sql().Database)(bytes);
    entry.shared = null;
    entry.fpStmt = null;
  }

  /** Runs one SQL text under Python sqlite3's rules and fetches every row. */
  function runPython(db: Database, text: string): Result {
    if (text.includes('\u0000')) throw new Error(NUL_MESSAGE);
    const start = firstSignificantIndex(text);
    if (start < 0) return { columns: [], rows: [] };
    const it = db.iterateStatements(text);
    const first = it.next();
    // SQLite skips empty statements (';'), so `done` here means the text held nothing else.
    if (first.done) return { columns: [], rows: [] };
    const stmt: Statement = first.value;
    try {
      // Python checks the rest of the text before it executes anything.
      if (hasTrailingStatement(it.getRemainingSQL())) throw new Error(MULTIPLE_STATEMENTS_MESSAGE);
      const rows: SqlValue[][] = [];
      const width = Math.max(1, stmt.getColumnNames().length);
      while (stmt.step()) {
        if ((rows.length + 1) * width > MAX_RESULT_VALUES) {
          throw new Error(
            `the result has more than ${MAX_RESULT_VALUES.toLocaleString('en-US')} values (${rows.length.toLocaleString('en-US')} rows of ${width} columns so far): too large to hold for the comparison`,
          );
        }
        let row = stmt.get() as SqlValue[];
        for (const v of row) {
          if (typeof v === 'number' && (v > MAX_SAFE || v < -MAX_SAFE) && Number.isInteger(v)) {
            // An INTEGER beyond 2^53 arrived as a rounded double: read the row again exactly.
            row = getExact(stmt);
            break;
          }
        }
        rows.push(row);
      }
      return { columns: stmt.getColumnNames(), rows };
    } finally {
      stmt.free();
    }
  }

  /**
   * What a statement can change on the connection: rows (total_changes), the main schema,
   * and the list of databases (ATTACH, or a temp database appearing for a TEMP table).
   * Only the first two modify the database itself (`mutated_db`); any change means the
   * connection is re-opened before the next item. The temp schema is not read here
   * because reading it would create the temp database.
   */
  function fingerprint(entry: OpenDb): Fingerprint {
    // Prepared once per connection and reset at once: a reset statement holds no lock, and
    // SQLite prepares it again by itself after a schema change.
    const stmt = (entry.fpStmt ??= entry.db.prepare(FINGERPRINT_SQL));
    try {
      stmt.step();
      const r = stmt.get();
      return { data: `${r[0]}/${r[1]}`, connection: String(r[2]) };
    } finally {
      stmt.reset();
    }
  }

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
      return { sqliteVersion: v };
    },

    async loadDb(dbId, bytes) {
      const head = String.fromCharCode(...bytes.subarray(0, 16));
      if (bytes.length < 100 || head !== SQLITE_HEADER) {
        throw new Error(
          `database ${dbId}: not an SQLite 3 file (${bytes.length} bytes, header ${JSON.stringify(head.slice(0, 15))}); ` +
            `replace it with the .sqlite file of ${dbId}`,
        );
      }
      // WAL databases cannot be opened from memory; the copy we hold is switched to rollback
      // journal mode (bytes 18-19), which changes nothing about its content. The user's file
      // is never written.
      if (bytes[18] === 2 || bytes[19] === 2) {
        bytes[18] = 1;
        bytes[19] = 1;
      }
      drop(dbId);
      const db = openSharing(sql(), bytes);
      let tables: number;
      try {
        tables = Number(db.exec("SELECT count(*) FROM sqlite_master WHERE type='table'")[0]!.values[0]![0]);
        // quick_check reports damage as a row (it throws only when it cannot read at all).
        const check = String(db.exec('PRAGMA main.quick_check(1)')[0]?.values[0]?.[0] ?? 'ok');
        if (check !== 'ok') throw new Error(`damaged: ${check.replace(/\s+/g, ' ').replace('*** in database main *** ', '')}`);
      } catch (err) {
        db.close();
        throw new Error(`database ${dbId}: unreadable SQLite file (${(err as Error).message}); import an intact copy of it again`);
      }
      open.set(dbId, { db, sizeBytes: bytes.length, shared: bytes, fpStmt: null });
      evict(dbId);
      return { sizeBytes: bytes.length, tables };
    },

    async evaluate(req: ExecRequest): Promise<ExecDone | NeedDb> {
      const entry = touch(req.dbId);
      if (!entry) return { kind: 'need-db' };
      privatize(entry, req.predSql, req.goldSql);
      const db = entry.db;
      const t0 = performance.now();
      const before = fingerprint(entry);
      let dirty = !looksLikeQuery(req.predSql);
      let pred: Result | null = null;
      let gold: Result | null = null;
      let error: string | null = null;
      let mutatedDb = false;
      let predKey: string | undefined;
      try {
        if (req.readOnly) db.exec('PRAGMA query_only = 1');
        try {
          pred = runPython(db, req.predSql);
        } catch (err) {
          throw new SideError(`prediction: ${(err as Error).message}`);
        } finally {
          const after = fingerprint(entry);
          mutatedDb = after.data !== before.data;
          dirty ||= mutatedDb || after.connection !== before.connection;
          if (req.readOnly) db.exec('PRAGMA query_only = 0');
        }
        if (mutatedDb && req.readOnly) {
          throw new SideError('prediction: writes to the database, which --read-only forbids');
        }
        // The prediction executed: its result votes in self-consistency even if gold fails.
        predKey = resultKey(pred.rows);
        try {
          gold = runPython(db, req.goldSql);
        } catch (err) {
          throw new SideError(`gold: ${(err as Error).message}`);
        }
      } catch (err) {
        error = err instanceof SideError ? err.message : `prediction: ${(err as Error).message}`;
      } finally {
        // Re-open from pristine bytes after anything that may have left state behind.
        if (dirty) drop(req.dbId);
      }
      const elapsedMs = performance.now() - t0;
      if (error !== null || !pred || !gold) {
        return {
          kind: 'done', status: 'error', ex: 0, softF1: req.softF1 ? 0 : null, error, mutatedDb,
          predRowCount: pred?.rows.length ?? null, goldRowCount: gold?.rows.length ?? null,
          predColumns: pred?.columns ?? [], goldColumns: gold?.columns ?? [],
          predPreview: preview(pred?.rows ?? [], req.previewRows), goldPreview: [], elapsedMs,
          ...(predKey !== undefined ? { resultKey: predKey } : {}),
        };
      }
      return {
        kind: 'done', status: 'ok', ex: executionMatch(pred.rows, gold.rows),
        softF1: req.softF1 ? softF1(pred.rows, gold.rows) : null, error: null, mutatedDb,
        predRowCount: pred.rows.length, goldRowCount: gold.rows.length,
        predColumns: pred.columns, goldColumns: gold.columns,
        predPreview: preview(pred.rows, req.previewRows), goldPreview: preview(gold.rows, req.previewRows),
        elapsedMs, resultKey: predKey!,
      };
    },

    async timeQueries(req: TimeRequest) {
      const entry = touch(req.dbId);
      if (!entry) return { kind: 'need-db' };
      privatize(entry, req.predSql, req.goldSql);
      const ratios: number[] = [];
      for (let i = 0; i < req.iterations; i++) {
        const t0 = performance.now();
        runPython(entry.db, req.predSql);
        const t1 = performance.now();
        runPython(entry.db, req.goldSql);
        const t2 = performance.now();
        ratios.push((t2 - t1) / (t1 - t0));
      }
      return { kind: 'done', ratios };
    },

    async query(dbId, text, maxRows): Promise<QueryResult | NeedDb> {
      const entry = touch(dbId);
      if (!entry) return { kind: 'need-db' };
      privatize(entry, text);
      const db = entry.db;
      db.exec('PRAGMA query_only = 1');
      try {
        const r = runPython(db, text);
        return { columns: r.columns, rows: r.rows.slice(0, maxRows), truncated: r.rows.length > maxRows };
      } finally {
        db.exec('PRAGMA query_only = 0');
        if (!looksLikeQuery(text)) drop(dbId);
      }
    },

    async openDbs() {
      return [...open.keys()];
    },
  };
  return api;
}
