/**
 * `eval --engine native`: the part of sql.js's API that the SQL worker's engine uses
 * (workers/sql-engine.ts, sql-result.ts, sql-writes.ts), over better-sqlite3 (native SQLite),
 * so that the one engine, with its Python sqlite3 rules, read-only mode, write detection, result
 * bounds and gold reuse, runs on either. What differs from sql.js and is made up for here:
 * - better-sqlite3 executes one statement per prepare: the first statement's end is found by
 *   src/core/sql/statement-scan.ts (the rest is what `getRemainingSQL` returns);
 * - it is compiled with SQLITE_DQS=0 (no double-quoted string literals): a statement that fails
 *   on a double-quoted token naming no column is prepared again with it as a string (dqsFallback);
 * - foreign keys on and a 16 MB page cache by default: each connection gets SQLite's defaults
 *   (`foreign_keys = OFF`, `cache_size = -2000`), as Python's sqlite3 and sql.js have;
 * - INTEGER values are read exactly (bigint) and given as numbers when they fit in a double
 *   exactly, as sql.js does; BLOBs are Buffers (Uint8Arrays).
 * One difference stays: SQLite's heap limit (`PRAGMA hard_heap_limit`) is per process here,
 * shared by the worker threads, where each sql.js worker has its own.
 */
import { WorkbenchError } from '../../core/errors.ts';
import { createRequire } from 'node:module';
import { MULTIPLE_STATEMENTS_MESSAGE, firstSignificantIndex, leadingKeyword } from '../../core/sql/python-statement.ts';
import { firstStatementEnd, prepareLegacy as prepareWith } from '../../core/sql/statement-scan.ts';
import type { SqlValue } from '../../core/types.ts';

interface NativeStatement {
  readonly reader: boolean;
  raw(toggle?: boolean): this;
  safeIntegers(toggle?: boolean): this;
  columns(): { name: string }[];
  iterate(...params: unknown[]): IterableIterator<unknown[]>;
  all(...params: unknown[]): unknown[][];
  run(...params: unknown[]): unknown;
}
interface NativeDatabase {
  prepare(sql: string): NativeStatement;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): void;
}
type NativeConstructor = new (filenameOrBuffer?: string | Buffer) => NativeDatabase;

/** sql.js's `get()`: INTEGER as a double; with `useBigInt`, exactly. */
const toJs = (v: unknown, exact: boolean): SqlValue => (typeof v === 'bigint' && !exact ? Number(v) : (v as SqlValue));

const severalStatements = (err: unknown) => err instanceof RangeError && /more than one statement/.test(err.message);
const prepareLegacy = (db: NativeDatabase, text: string) =>
  prepareWith((sql) => db.prepare(sql), text, severalStatements, MULTIPLE_STATEMENTS_MESSAGE);

/** sql.js's Statement, the part the engine uses: step / get / getColumnNames / reset / free. */
class Statement {
  private rows: IterableIterator<unknown[]> | null = null;
  private row: unknown[] | null = null;
  private ran = false;
  constructor(private readonly stmt: NativeStatement) {
    if (stmt.reader) stmt.raw(true).safeIntegers(true);
  }
  step(): boolean {
    if (!this.stmt.reader) {
      if (!this.ran) this.stmt.run();
      this.ran = true;
      return false;
    }
    this.rows ??= this.stmt.iterate();
    const next = this.rows.next();
    this.row = next.done ? null : next.value;
    if (next.done) this.rows = null;
    return !next.done;
  }
  get(_params?: unknown, config?: { useBigInt?: boolean }): SqlValue[] {
    const exact = config?.useBigInt === true;
    return (this.row ?? []).map((v) => toJs(v, exact));
  }
  getColumnNames(): string[] {
    return this.stmt.reader ? this.stmt.columns().map((c) => c.name) : [];
  }
  reset(): boolean {
    this.rows?.return?.();
    this.rows = null;
    this.row = null;
    this.ran = false;
    return true;
  }
  free(): boolean {
    return this.reset();
  }
}

class Database {
  private readonly db: NativeDatabase;
  constructor(Native: NativeConstructor, bytes?: Uint8Array) {
    this.db = bytes
      ? new Native(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
      : new Native(':memory:');
    this.db.pragma('foreign_keys = OFF');
    this.db.pragma('cache_size = -2000');
  }
  prepare(sql: string): Statement {
    return new Statement(prepareLegacy(this.db, sql));
  }
  /** The engine's pragmas and small queries, statement by statement, as sql.js's result list. */
  exec(sql: string): { columns: string[]; values: SqlValue[][] }[] {
    const out: { columns: string[]; values: SqlValue[][] }[] = [];
    let rest = sql;
    for (;;) {
      const start = firstSignificantIndex(rest);
      if (start < 0) return out;
      if (rest[start] === ';') {
        rest = rest.slice(start + 1);
        continue;
      }
      const end = firstStatementEnd(rest, start);
      const s = this.prepare(rest.slice(start, end));
      const values: SqlValue[][] = [];
      try {
        while (s.step()) values.push(s.get());
        const columns = s.getColumnNames();
        if (columns.length > 0) out.push({ columns, values });
      } finally {
        s.free();
      }
      rest = rest.slice(end);
    }
  }
  /** The first statement of `text` and what follows it, as sql.js's iterator gives them. */
  iterateStatements(text: string) {
    let start = firstSignificantIndex(text);
    while (start >= 0 && text[start] === ';') start = firstSignificantIndex(text, start + 1);
    // CREATE TRIGGER bodies hold `;`: better-sqlite3's own one-statement check decides then.
    const trigger = start >= 0 && leadingKeyword(text) === 'CREATE' && /\bTRIGGER\b/i.test(text);
    const end = start < 0 ? text.length : trigger ? text.length : firstStatementEnd(text, start);
    let given = false;
    return {
      next: (): { done: true; value: undefined } | { done: false; value: Statement } => {
        if (given || start < 0) return { done: true, value: undefined };
        given = true;
        return { done: false, value: this.prepare(text.slice(start, end)) };
      },
      getRemainingSQL: () => text.slice(end),
    };
  }
  close(): void {
    this.db.close();
  }
}

/** sql.js's module object over better-sqlite3, or a clear error when it cannot be loaded here. */
export async function loadNativeSqlJs(): Promise<unknown> {
  let Native: NativeConstructor;
  try {
    // The specifier is a variable: this module types the part it uses itself (the package ships no types).
    const name = 'better-sqlite3';
    Native = ((await import(name)) as { default: NativeConstructor }).default;
  } catch (err) {
    throw new WorkbenchError(
      'UNSUPPORTED',
      `--engine native needs better-sqlite3 (native SQLite for Node), which could not be loaded here (${(err as Error).message}): ` +
        'install it with `npm install better-sqlite3`, or leave out --engine native to use sql.js',
      undefined,
      { cause: err },
    );
  }
  return {
    Database: class extends Database {
      constructor(bytes?: Uint8Array) {
        super(Native, bytes);
      }
    },
  };
}

/** `better-sqlite3 12.11.1`, the executor named in reports. */
export function nativeExecutorName(): string {
  try {
    const req = createRequire(import.meta.url);
    return `better-sqlite3 ${(req('better-sqlite3/package.json') as { version: string }).version}`;
  } catch {
    return 'better-sqlite3';
  }
}
