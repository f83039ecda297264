/**
 * The native reference: the same items executed by native SQLite (better-sqlite3 12, in this
 * Node process, on the main thread) and compared with the same functions as our workers
 * (src/core/compare). What it mirrors of workers/sql-engine.ts:
 *
 * - Python sqlite3's statement rules: a NUL character is an error; empty / blank / comment-only
 *   SQL (and leading empty statements `;`) return no rows; anything significant after the first
 *   statement is "You can only execute one statement at a time." better-sqlite3 itself accepts
 *   extra `;` after a statement, so the end of the first statement is found here by a scanner
 *   that skips string literals, quoted identifiers and comments (CREATE TRIGGER bodies contain
 *   `;`: for those better-sqlite3's own check is left to decide).
 * - Configuration: better-sqlite3 is compiled with SQLITE_DQS=0 (no double-quoted string
 *   literals), foreign keys on and a 16 MB page cache. Each connection gets `foreign_keys = OFF`
 *   and `cache_size = -2000` (SQLite's defaults, as in Python and sql.js), and a statement that
 *   fails on a double-quoted token naming no column is prepared again with that token as a
 *   string literal (dqsFallback), which is what the legacy rule does.
 * - Values: INTEGER is read exactly (`safeIntegers`: bigint), rows as arrays (`.raw()`); the
 *   comparison keys treat 5 and 5n alike, as Python does, so EX and Soft-F1 see the same values.
 * - Prediction first, then gold, on the same connection: a prediction that writes is seen by its
 *   gold query, and nothing leaks into the next item. Each database is deserialized once into
 *   an in-memory copy (`new Database(buffer)`, the user's file is never opened for writing), and
 *   every item whose prediction starts like a query (SELECT / WITH / VALUES) runs inside
 *   `SAVEPOINT` ... `ROLLBACK TO` + `RELEASE` (which also undoes a `WITH ... DELETE`). A
 *   prediction that does not start like a query (DML, DDL, PRAGMA, ATTACH, BEGIN...) runs in
 *   autocommit as with Python, and the copy is deserialized again afterwards, as our workers
 *   re-open theirs.
 */
import Database from 'better-sqlite3';
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
import type { EvalItem, SqlValue } from '../src/core/types.ts';

export interface NativeResult {
  status: 'ok' | 'error';
  ex: 0 | 1;
  softF1: number | null;
  error: string | null;
  predRowCount: number | null;
  goldRowCount: number | null;
}

export { dqsFallback, firstStatementEnd } from '../src/core/sql/statement-scan.ts';
import { firstStatementEnd, prepareLegacy } from '../src/core/sql/statement-scan.ts';

class SideError extends Error {}

const prepare = (db: Database.Database, text: string): Database.Statement =>
  prepareLegacy(
    (sql) => db.prepare(sql),
    text,
    (err) => err instanceof RangeError && /more than one statement/.test(err.message),
    MULTIPLE_STATEMENTS_MESSAGE,
  );

/** Runs one SQL text under Python sqlite3's rules and fetches every row. */
function runPython(db: Database.Database, text: string): SqlValue[][] {
  if (text.includes('\u0000')) throw new Error(NUL_MESSAGE);
  let start = firstSignificantIndex(text);
  // SQLite skips empty statements.
  while (start >= 0 && text[start] === ';') start = firstSignificantIndex(text, start + 1);
  if (start < 0) return [];
  const isTrigger = leadingKeyword(text) === 'CREATE' && /\bTRIGGER\b/i.test(text);
  if (!isTrigger) {
    const end = firstStatementEnd(text, start);
    if (end < text.length && hasTrailingStatement(text.slice(end))) throw new Error(MULTIPLE_STATEMENTS_MESSAGE);
  }
  const stmt = prepare(db, text);
  if (!stmt.reader) {
    stmt.run();
    return [];
  }
  return stmt.raw(true).safeIntegers(true).all() as SqlValue[][];
}

/** One process's native evaluator: each database is deserialized once, on first use. */
export class NativeEvaluator {
  private readonly pristine = new Map<string, Buffer>();
  private readonly open = new Map<string, Database.Database>();

  constructor(
    private readonly loadBytes: (dbId: string) => Buffer,
    private readonly withSoftF1: boolean,
  ) {}

  private connection(dbId: string): Database.Database {
    let db = this.open.get(dbId);
    if (!db) {
      let bytes = this.pristine.get(dbId);
      if (!bytes) this.pristine.set(dbId, (bytes = this.loadBytes(dbId)));
      db = new Database(bytes);
      // better-sqlite3 is built with SQLITE_DEFAULT_FOREIGN_KEYS=1 and a 16 MB page cache;
      // Python's sqlite3 (the official evaluator) and sql.js use SQLite's defaults.
      db.pragma('foreign_keys = OFF');
      db.pragma('cache_size = -2000');
      this.open.set(dbId, db);
    }
    return db;
  }

  private reset(dbId: string): void {
    this.open.get(dbId)?.close();
    this.open.delete(dbId);
  }

  evaluate(item: Pick<EvalItem, 'dbId' | 'predSql' | 'goldSql'>): NativeResult {
    const db = this.connection(item.dbId);
    const guarded = looksLikeQuery(item.predSql);
    let pred: SqlValue[][] | null = null;
    let gold: SqlValue[][] | null = null;
    let error: string | null = null;
    if (guarded) db.exec('SAVEPOINT bench_item');
    try {
      try {
        pred = runPython(db, item.predSql);
      } catch (err) {
        throw new SideError(`prediction: ${(err as Error).message}`);
      }
      try {
        gold = runPython(db, item.goldSql);
      } catch (err) {
        throw new SideError(`gold: ${(err as Error).message}`);
      }
    } catch (err) {
      error = (err as Error).message;
    } finally {
      if (guarded) {
        try {
          db.exec('ROLLBACK TO bench_item');
          db.exec('RELEASE bench_item');
        } catch {
          this.reset(item.dbId);
        }
      } else {
        this.reset(item.dbId);
      }
    }
    if (error !== null || !pred || !gold) {
      return {
        status: 'error',
        ex: 0,
        softF1: this.withSoftF1 ? 0 : null,
        error,
        predRowCount: pred?.length ?? null,
        goldRowCount: gold?.length ?? null,
      };
    }
    return {
      status: 'ok',
      ex: executionMatch(pred, gold),
      softF1: this.withSoftF1 ? softF1(pred, gold) : null,
      error: null,
      predRowCount: pred.length,
      goldRowCount: gold.length,
    };
  }

  close(): void {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }
}
