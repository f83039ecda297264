/**
 * The memory bounds of the SQL worker and the settings every connection starts from
 * (docs/isolation.md). Shared by the engine (sql-engine.ts) and the test suites (sql-suite.ts).
 */
import type { Database } from 'sql.js';
import { MAX_RESULT_BYTES } from './sql-result.ts';

/**
 * Memory bounds of a worker (docs/isolation.md), far above what any benchmark query needs (they
 * change no result of a normal query). SQLite's heap stops at HEAP_LIMIT with "out of memory":
 * strings, blobs, the page cache, and, because every connection is pinned to
 * `temp_store = MEMORY` and `journal_mode = MEMORY` (pinConnection), sorts, temporary tables,
 * indexes and rollback journals too, which otherwise go to sql.js's in-memory file system
 * without any bound (a sorting SELECT reached 4.5 GB). A write grows a database file by at most
 * WRITE_BUDGET (`max_page_count`), then fails with "database or disk is full". Results are
 * bounded by their number of values and their bytes (sql-result.ts).
 */
export const HEAP_LIMIT = 512 * 1024 * 1024;

/** How far one item's writes may grow a database file of the in-memory file system. */
export const WRITE_BUDGET = 64 * 1024 * 1024;

const MiB = 1024 * 1024;

/** What a worker's runtime takes besides the bounds below (V8 isolate, sql.js code, the wasm module's base memory). */
const WORKER_RUNTIME_BYTES = 96 * MiB;

/**
 * The memory budget of one SQL worker holding databases of `dbBytes` in all (at most its LRU
 * cache, 512 MiB by default): the runtime, SQLite's heap, the write budget, the two results of
 * an item, and the database bytes twice (the pristine bytes and the private copy a writing
 * prediction runs on). docs/isolation.md; the bench's `worker_peak_rss_mib_hostile` is measured
 * against it.
 */
export function workerBudgetBytes(dbBytes: number): number {
  return WORKER_RUNTIME_BYTES + HEAP_LIMIT + WRITE_BUDGET + 2 * MAX_RESULT_BYTES + 2 * dbBytes;
}

/**
 * The settings every connection starts from (after each open): the bounds above. The PRAGMAs
 * that would change them, or state of the whole worker, are refused (sql-pragmas.ts).
 */
export function pinConnection(db: Database, sizeBytes: number): void {
  const pageSize = Number(db.exec('PRAGMA page_size')[0]?.values[0]?.[0] ?? 4096);
  const pages = Math.ceil(sizeBytes / pageSize) + Math.ceil(WRITE_BUDGET / pageSize);
  db.exec(`PRAGMA temp_store = MEMORY; PRAGMA journal_mode = MEMORY; PRAGMA max_page_count = ${pages}`);
}

/**
 * SQLite's messages for the two bounds, with the bound named: `over_budget` tells the pool to
 * replace the worker after the item (its wasm memory, grown to the heap limit, is returned).
 */
/**
 * SQLite's "no such module: fts5" with what it means here: sql.js is built without that
 * virtual-table module (FTS3 only), so the table cannot be read in this worker, where Python's
 * sqlite3 usually can (the item's verdict differs from the official evaluator's).
 */
export function missingModule(err: Error): string | null {
  const m = /^no such module: (\S+)$/.exec(err.message);
  if (!m) return null;
  return (
    `no such module: ${m[1]} (this SQL worker's SQLite, sql.js, is built without the ${m[1]} virtual-table module: a table using it cannot be read here, ` +
    "though Python's sqlite3 usually can; docs/isolation.md)"
  );
}

export function overBudget(err: Error): string | null {
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_NOMEM' || err.message === 'out of memory') {
    return `out of memory: over the worker's ${HEAP_LIMIT / MiB} MiB SQLite heap budget (sorts, temporary tables and journals are held in it; docs/isolation.md)`;
  }
  if (code === 'SQLITE_FULL' || err.message === 'database or disk is full') {
    return `database or disk is full: the write grew the database by more than the worker's ${WRITE_BUDGET / MiB} MiB write budget (docs/isolation.md)`;
  }
  return null;
}
