/**
 * The test suite in the SQL worker: sql.js behind the core's ports (src/core/ts/), and the
 * per-item check. An item is TS-correct when pred and gold match on the original (EX, done by
 * the engine) and on every suite database where the gold runs; pred runs first, then gold, on
 * one connection, as on the original. A suite database is opened fresh from its bytes for an
 * item that may write, so nothing leaks between items.
 */
import type { Database, SqlJsStatic } from 'sql.js';
import { executionMatch } from '../src/core/compare/ex.ts';
import { rowDiff } from '../src/core/compare/row-diff.ts';
import { rowKey } from '../src/core/compare/value-key.ts';
import { tieProbe } from '../src/core/ts/order-ties.ts';
import type { SqlConn } from '../src/core/ts/schema.ts';
import { buildSuite, type BuiltSuite, type SuiteDbHandle, type SuiteSpec } from '../src/core/ts/suite.ts';
import type { SqlValue, TsCounterexample, TsCell } from '../src/core/types.ts';
import { runPython, type FetchedRows } from './sql-result.ts';
import { mayWrite } from './sql-writes.ts';
import { pinConnection } from './sql-bounds.ts';

/** A suite database with the worker's bounds (sql-bounds.ts): a write to it grows it by the write budget at most. */
function openPinned(SQL: SqlJsStatic, bytes?: Uint8Array): Database {
  const db = new SQL.Database(bytes);
  pinConnection(db, bytes?.length ?? 0);
  return db;
}

/** Rows of each side kept in a counterexample. */
const COUNTEREXAMPLE_ROWS = 20;

const getExact = (stmt: ReturnType<Database['prepare']>): SqlValue[] =>
  (stmt.get as unknown as (p: null, c: { useBigInt: boolean }) => SqlValue[]).call(stmt, null, { useBigInt: true });

export function sqlConn(db: Database): SqlConn {
  return {
    all(sql, params) {
      const stmt = db.prepare(sql);
      try {
        if (params) stmt.bind(params as never);
        const rows: SqlValue[][] = [];
        while (stmt.step()) rows.push(getExact(stmt));
        return rows;
      } finally {
        stmt.free();
      }
    },
    run(sql, params) {
      if (!params) return void db.exec(sql);
      const stmt = db.prepare(sql);
      try {
        stmt.bind(params as never);
        stmt.step();
      } finally {
        stmt.free();
      }
    },
  };
}

// The handle keeps its Database here (the core's port has no field for it).
const dbOf = new WeakMap<SuiteDbHandle, Database>();
function handleOf(db: Database): SuiteDbHandle {
  const h: SuiteDbHandle = { ...sqlConn(db), export: () => db.export(), close: () => db.close() };
  dbOf.set(h, db);
  return h;
}

/** Builds a suite on the original database `original` (only read). */
export function buildSuiteOn(
  SQL: SqlJsStatic,
  original: Database,
  golds: readonly string[],
  spec: SuiteSpec,
  onProgress?: (done: number, total: number) => void,
): BuiltSuite {
  return buildSuite(
    golds,
    spec,
    {
      // A remote callback (comlink) returns a promise nobody needs: progress is fire and forget.
      onProgress: onProgress ? (done, total) => void onProgress(done, total) : undefined,
      original: sqlConn(original),
      newDb: () => handleOf(openPinned(SQL)),
      query: (db, sql) => {
        try {
          return runPython(dbOf.get(db)!, sql).rows;
        } catch {
          return null;
        }
      },
    },
    () => performance.now(),
  );
}

/** A suite held by a worker: the bytes, and each database open for items that only read. */
export class OpenSuite {
  private readonly open: Database[];
  constructor(
    private readonly SQL: SqlJsStatic,
    readonly suite: BuiltSuite,
  ) {
    this.open = suite.dbs.map((b) => openPinned(SQL, b));
  }

  close(): void {
    for (const db of this.open) db.close();
  }

  /** Verdict of a prediction that EX accepted: 1, or 0 with the first suite database where pred and gold differ. */
  check(predSql: string, goldSql: string): { ts: 0 | 1; counterexample: TsCounterexample | null; goldRan: number } {
    const writes = mayWrite(predSql) || mayWrite(goldSql);
    let goldRan = 0;
    for (let i = 0; i < this.open.length; i++) {
      const db = writes ? openPinned(this.SQL, this.suite.dbs[i]!) : this.open[i]!;
      try {
        let pred: FetchedRows | null = null;
        let predError: string | null = null;
        try {
          pred = runPython(db, predSql);
        } catch (err) {
          predError = (err as Error).message;
        }
        let gold: FetchedRows;
        try {
          gold = runPython(db, goldSql);
        } catch {
          continue; // only suite databases where the gold runs count
        }
        goldRan++;
        if (pred && executionMatch(pred.rows, gold.rows) === 1) continue;
        return { ts: 0, counterexample: counterexample(i, pred, predError, gold), goldRan };
      } finally {
        if (writes) db.close();
      }
    }
    return { ts: 1, counterexample: null, goldRan };
  }
}

function cell(v: SqlValue): TsCell {
  if (typeof v === 'bigint') return { int: v.toString() };
  if (v instanceof Uint8Array) return { blob: [...v].map((b) => b.toString(16).padStart(2, '0')).join('') };
  return v;
}

function counterexample(
  suiteDb: number,
  pred: FetchedRows | null,
  predError: string | null,
  gold: FetchedRows,
): TsCounterexample {
  const diff = rowDiff(pred?.rows ?? [], gold.rows);
  const keep = (rows: SqlValue[][]) => rows.slice(0, COUNTEREXAMPLE_ROWS).map((r) => r.map(cell));
  const flagged = (xs: boolean[]) => xs.flatMap((x, i) => (x ? [i] : []));
  return {
    suiteDb,
    predError,
    predColumns: pred?.columns ?? [],
    goldColumns: gold.columns,
    predRows: keep(pred?.rows ?? []),
    goldRows: keep(gold.rows),
    predRowCount: pred?.rows.length ?? null,
    goldRowCount: gold.rows.length,
    predOnly: flagged(diff.predOnly),
    goldOnly: flagged(diff.goldOnly),
  };
}

/**
 * Row-order sensitivity (a gold that cuts through a tie at its LIMIT counts as order-dependent
 * too, see tiesAtLimit): the gold (and, when EX accepted it, the prediction) once more with
 * `PRAGMA reverse_unordered_selects = ON`, which makes SQLite return rows that no ORDER BY fixes
 * in another order (so LIMIT among ties, or a bare column beside an aggregate, may pick other
 * rows). `run` executes a text in the usual order or reversed; null when it fails.
 */
export function orderCheck(
  run: (text: string, reversed: boolean) => FetchedRows | null,
  predSql: string,
  goldSql: string,
  exAccepted: boolean,
): { goldOrderDependent: boolean | null; passesByRowOrder: boolean | null } {
  const gold = run(goldSql, false);
  const goldRev = gold ? run(goldSql, true) : null;
  let goldOrderDependent = gold && goldRev ? executionMatch(gold.rows, goldRev.rows) === 0 : null;
  if (gold && !goldOrderDependent && tiesAtLimit((text) => run(text, false), goldSql)) goldOrderDependent = true;
  if (!exAccepted || !goldRev) return { goldOrderDependent, passesByRowOrder: null };
  // Officially the prediction runs first, then the gold, on one connection: both reversed here.
  const predRev = run(predSql, true);
  return { goldOrderDependent, passesByRowOrder: !predRev || executionMatch(predRev.rows, goldRev.rows) === 0 };
}

/**
 * The gold cuts through a tie at its LIMIT (src/core/ts/order-ties.ts): the two rows around
 * the cut have equal ORDER BY keys and different columns. Null when the gold cannot be probed.
 */
function tiesAtLimit(run: (text: string) => FetchedRows | null, goldSql: string): boolean | null {
  const probe = tieProbe(goldSql);
  if (!probe) return null;
  const r = run(probe.sql);
  if (!r) return null;
  if (r.rows.length < 2) return false;
  const [a, b] = r.rows as [SqlValue[], SqlValue[]];
  const sameKeys = rowKey(a.slice(0, probe.keys)) === rowKey(b.slice(0, probe.keys));
  return sameKeys && rowKey(a.slice(probe.keys)) !== rowKey(b.slice(probe.keys));
}
