/**
 * SchemaSource over the SQL worker's read-only `query` (workers/sql.api.ts): the same worker
 * module that scores SQL also reads schemas and sample rows for prompts. When the worker does
 * not hold the database it is opened from `dbSource` and the query is retried once.
 * Description files come from the caller (the dataset's stored `database_description/`).
 */
import type { DescriptionFile, SampleRows, SchemaSource, TableInfo } from '../../core/prompt/schema-source.ts';
import { SCHEMA_QUERIES, splitSampleRow } from '../../core/prompt/schema-source.ts';
import type { NeedDb, QueryResult } from '../../../workers/sql.api.ts';
import type { DbSource } from '../../app/ports.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { SqlValue } from '../../core/types.ts';

/** The part of the SQL worker API this source uses (a comlink Remote satisfies it). */
interface SqlQueryApi {
  query(dbId: string, sql: string, maxRows: number): Promise<QueryResult | NeedDb>;
  loadDb(dbId: string, bytes: Uint8Array): Promise<unknown>;
}

interface SqlWorkerSchemaSourceOptions {
  api: SqlQueryApi;
  dbSource: DbSource;
  /** BIRD description files of a database, or null. */
  descriptionFiles?: (dbId: string) => Promise<DescriptionFile[] | null>;
  /** Wraps bytes for the worker call (comlink's `transfer`); default: pass as is. */
  transferBytes?: (bytes: Uint8Array) => Uint8Array;
}

const MAX_ROWS = 100_000;

/** The schema source, and read-only queries on the same worker (the rows as the worker returns them). */
interface SqlWorkerSchemaSource extends SchemaSource {
  query(dbId: string, sql: string): Promise<SqlValue[][]>;
}

export function createSqlWorkerSchemaSource(options: SqlWorkerSchemaSourceOptions): SqlWorkerSchemaSource {
  const { api, dbSource } = options;
  const run = async (dbId: string, sql: string): Promise<QueryResult> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await api.query(dbId, sql, MAX_ROWS);
      if (!('kind' in r)) return r;
      if (!(await dbSource.has(dbId)))
        throw new WorkbenchError('NOT_FOUND', `database ${dbId} not found: expected ${dbSource.describe(dbId)}`);
      const { bytes } = await dbSource.load(dbId);
      await api.loadDb(dbId, options.transferBytes ? options.transferBytes(bytes) : bytes);
    }
    throw new WorkbenchError(
      'FAILED',
      `database ${dbId} could not be kept open in the SQL worker (it was dropped twice while its schema was read): try again with fewer databases open`,
    );
  };
  // Column names per database and table, read once (tables() then sampleRows() of each table).
  const columnsRead = new Map<string, Promise<string[]>>();
  const columns = (dbId: string, table: string): Promise<string[]> => {
    const key = JSON.stringify([dbId, table]);
    let cols = columnsRead.get(key);
    if (!cols) {
      cols = run(dbId, SCHEMA_QUERIES.columns(table)).then((r) => r.rows.map((c) => String(c[0])));
      columnsRead.set(key, cols);
      cols.catch(() => columnsRead.delete(key));
    }
    return cols;
  };
  const source: SqlWorkerSchemaSource = {
    query: async (dbId, sql) => (await run(dbId, sql)).rows,
    async tables(dbId): Promise<TableInfo[]> {
      const r = await run(dbId, SCHEMA_QUERIES.tables);
      const out: TableInfo[] = [];
      for (const [name, sql] of r.rows)
        out.push({ name: String(name), createSql: String(sql), columns: await columns(dbId, String(name)) });
      return out;
    },
    async sampleRows(dbId, table, limit): Promise<SampleRows> {
      const cols = await columns(dbId, table);
      const r = await run(dbId, SCHEMA_QUERIES.sample(table, cols, limit));
      const split = r.rows.map((row) => splitSampleRow(row, cols.length));
      return { columns: cols, rows: split.map((s) => s.values), classes: split.map((s) => s.classes) };
    },
  };
  if (options.descriptionFiles) source.descriptionFiles = options.descriptionFiles;
  return source;
}
