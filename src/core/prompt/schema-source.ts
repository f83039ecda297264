/**
 * The SchemaSource port: where prompt building gets a database's tables and sample rows.
 * Implemented over the SQL worker's read-only `query` in the browser
 * (src/adapters/engines/sql-worker-schema-source.ts) and over sql.js directly in Node tests.
 */
import type { SqlValue, StorageClass } from '../types.ts';

// SQLite's `typeof()` of a value (a core data shape): sql.js returns 1.0 as the number 1, so the class travels apart.
export type { StorageClass };

export interface TableInfo {
  /** Name as stored in sqlite_master. */
  name: string;
  /** The CREATE TABLE statement exactly as stored in sqlite_master.sql. */
  createSql: string;
  /** Column names in declaration order. */
  columns: string[];
}

export interface SampleRows {
  columns: string[];
  rows: SqlValue[][];
  /** The storage class of every cell, same shape as `rows`. */
  classes: StorageClass[][];
}

/** One BIRD `database_description/<table>.csv` file, undecoded. */
export interface DescriptionFile {
  /** File name, e.g. `budget.csv`; the table name is the name without `.csv`. */
  name: string;
  bytes: Uint8Array;
}

export interface SchemaSource {
  /** User tables in sqlite_master order (sqlite_% internal tables excluded). */
  tables(dbId: string): Promise<TableInfo[]>;
  /** `SELECT * FROM <table> LIMIT <limit>`. */
  sampleRows(dbId: string, table: string, limit: number): Promise<SampleRows>;
  /** BIRD's column description files of the database, or null when there are none. */
  descriptionFiles?(dbId: string): Promise<DescriptionFile[] | null>;
}

/** Quotes an identifier for SQLite ("a""b"). */
function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The queries a SchemaSource runs, shared by every implementation so they agree exactly. */
export const SCHEMA_QUERIES = {
  tables:
    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND sql IS NOT NULL ORDER BY rowid",
  columns: (table: string) => `SELECT name FROM pragma_table_info(${quoteLiteral(table)}) ORDER BY cid`,
  /** Values and their storage classes in one pass (same rows for both). */
  sample: (table: string, columns: readonly string[], limit: number) =>
    `SELECT ${[...columns.map(quoteIdent), ...columns.map((c) => `typeof(${quoteIdent(c)})`)].join(', ')} FROM ${quoteIdent(table)} LIMIT ${Math.max(0, Math.floor(limit))}`,
};

function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** Splits a row of the `sample` query into values and classes. */
export function splitSampleRow(
  row: readonly SqlValue[],
  width: number,
): { values: SqlValue[]; classes: StorageClass[] } {
  return { values: row.slice(0, width), classes: row.slice(width, 2 * width).map((c) => String(c) as StorageClass) };
}
