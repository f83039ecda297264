import { DuckDBInstance } from '@duckdb/node-api';

/** Rows of one SQL query in a fresh in-memory DuckDB: an independent reader of the exports (Parquet, CSV, JSON). */
export async function duck<T = Record<string, unknown>>(sql: string): Promise<T[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson() as T[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
