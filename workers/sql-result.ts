/**
 * Runs one SQL text under Python sqlite3's statement rules and fetches every row, within the
 * worker's result bounds. A result is kept in memory to be compared (the official evaluator
 * holds it too), so it is bounded twice: by its number of values, and by the memory its values
 * take. Rows of large texts or BLOBs (a join that lost its condition over a table of 1 KB
 * texts) reach gigabytes long before the value count does and would end the worker, or the
 * whole process, out of memory; here they end the item with an error naming the limit.
 */
import type { Database, Statement } from 'sql.js';
import {
  MULTIPLE_STATEMENTS_MESSAGE,
  NUL_MESSAGE,
  firstSignificantIndex,
  hasTrailingStatement,
} from '../src/core/sql/python-statement.ts';
import type { SqlValue } from '../src/core/types.ts';
import type { StorageClass } from '../src/core/prompt/schema-source.ts';
import { WorkbenchError } from '../src/core/errors.ts';
import { refusedPragma, refusedPragmaMessage } from './sql-pragmas.ts';

export interface FetchedRows {
  columns: string[];
  rows: SqlValue[][];
  /** The storage class of every value (same shape as `rows`), when asked (`runPython(..., { classes: true })`). */
  classes?: StorageClass[][];
}

/** INTEGER is read as a bigint with `useBigInt`, REAL as a number: the class survives (1.0 stays REAL). */
function classOf(v: SqlValue): StorageClass {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return 'real';
  return typeof v === 'string' ? 'text' : 'blob';
}

/** At most this many values (rows x columns, about 1 GB of JavaScript arrays) in one result. */
export const MAX_RESULT_VALUES = 8_000_000;
/**
 * At most this much memory for the values of one result: text counted at 2 bytes a character
 * (JavaScript's widest string form), a BLOB at its length, any other value at 8 bytes. Both
 * results of an item, and the keys the comparison builds from them, fit in a worker well
 * below the 4 GB a JavaScript heap can reach.
 */
export const MAX_RESULT_BYTES = 256 * 1024 * 1024;

const MAX_SAFE = 9007199254740991;
const mib = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`;
const count = (n: number) => n.toLocaleString('en-US');

/** sql.js reads INTEGER as bigint with `useBigInt` (its typings omit the second argument). */
const getExact = (stmt: Statement): SqlValue[] =>
  (stmt.get as unknown as (p: null, c: { useBigInt: boolean }) => SqlValue[]).call(stmt, null, { useBigInt: true });

function valueBytes(v: SqlValue): number {
  if (typeof v === 'string') return 2 * v.length;
  if (v instanceof Uint8Array) return v.byteLength;
  return 8;
}

export function runPython(db: Database, text: string, options: { classes?: boolean } = {}): FetchedRows {
  if (text.includes('\u0000')) throw new WorkbenchError('REFUSED', NUL_MESSAGE);
  // Before SQLite sees it: what a re-open of the connection cannot undo (sql-pragmas.ts).
  const refused = refusedPragma(text);
  if (refused) throw new WorkbenchError('REFUSED', refusedPragmaMessage(refused));
  const start = firstSignificantIndex(text);
  if (start < 0) return { columns: [], rows: [] };
  const it = db.iterateStatements(text);
  const first = it.next();
  // SQLite skips empty statements (';'), so `done` here means the text held nothing else.
  if (first.done) return { columns: [], rows: [] };
  const stmt: Statement = first.value;
  try {
    // Python checks the rest of the text before it executes anything.
    if (hasTrailingStatement(it.getRemainingSQL())) throw new WorkbenchError('REFUSED', MULTIPLE_STATEMENTS_MESSAGE);
    const rows: SqlValue[][] = [];
    const classes: StorageClass[][] | undefined = options.classes ? [] : undefined;
    const width = Math.max(1, stmt.getColumnNames().length);
    let bytes = 0;
    while (stmt.step()) {
      if ((rows.length + 1) * width > MAX_RESULT_VALUES) {
        throw new WorkbenchError(
          'TOO_LARGE',
          `the result has more than ${count(MAX_RESULT_VALUES)} values (${count(rows.length)} rows of ${width} columns so far): too large to hold for the comparison`,
        );
      }
      let row: SqlValue[];
      if (classes) {
        // Every value read exactly, its class kept; an INTEGER within 2^53 is then a number again.
        const exact = getExact(stmt);
        classes.push(exact.map(classOf));
        row = exact.map((v) => (typeof v === 'bigint' && v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v));
      } else {
        row = stmt.get() as SqlValue[];
        for (const v of row) {
          if (typeof v === 'number' && (v > MAX_SAFE || v < -MAX_SAFE) && Number.isInteger(v)) {
            // An INTEGER beyond 2^53 arrived as a rounded double: read the row again exactly.
            row = getExact(stmt);
            break;
          }
        }
      }
      for (const v of row) bytes += valueBytes(v);
      if (bytes > MAX_RESULT_BYTES) {
        throw new WorkbenchError(
          'TOO_LARGE',
          `the result's values take more than ${mib(MAX_RESULT_BYTES)} (the limit per result; ${count(rows.length + 1)} rows of ${width} columns so far, ` +
            'text counted at 2 bytes a character, BLOBs by their length): too large to hold for the comparison',
        );
      }
      rows.push(row);
    }
    return { columns: stmt.getColumnNames(), rows, ...(classes ? { classes } : {}) };
  } finally {
    stmt.free();
  }
}
