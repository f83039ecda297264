/**
 * SchemaSource over the SQL worker's read-only `query` (workers/sql.api.ts): the same worker
 * module that scores SQL also reads schemas and sample rows for prompts. When the worker does
 * not hold the database it is opened from `dbSource` and the query is retried once: by pages
 * where the source offers them (DbSource.openPaged), as the SQL pools open it, else from a copy of
 * its bytes (the demo, tests). A content that passed SQLite's quick_check in this process (the
 * pools' `checkedDbs`) is not checked again.
 * Description files come from the caller (the dataset's stored `database_description/`).
 */
import type { DescriptionFile, SampleRows, SchemaSource, TableInfo } from '../../core/prompt/schema-source.ts';
import { SCHEMA_QUERIES, splitSampleRow } from '../../core/prompt/schema-source.ts';
import type { NeedDb, QueryResult } from '../../../workers/sql.api.ts';
import type { DbSource } from '../../app/ports.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { DbFileRef, SqlValue } from '../../core/types.ts';
import { checkedInProcess, type CheckedContents } from '../sql-pool.ts';

/** The part of the SQL worker API this source uses (a comlink Remote satisfies it). */
interface SqlQueryApi {
  query(dbId: string, sql: string, maxRows: number): Promise<QueryResult | NeedDb>;
  loadDb(
    dbId: string,
    given: Uint8Array | DbFileRef,
    options?: { checked?: boolean },
  ): Promise<{ quickChecked: boolean }>;
}

interface SqlWorkerSchemaSourceOptions {
  api: SqlQueryApi;
  dbSource: DbSource;
  /** BIRD description files of a database, or null. */
  descriptionFiles?: (dbId: string) => Promise<DescriptionFile[] | null>;
  /** Wraps bytes for the worker call (comlink's `transfer`); default: pass as is. */
  transferBytes?: (bytes: Uint8Array) => Uint8Array;
  /** Contents (by sha256) that passed quick_check (default: this process's, shared with its pools). */
  checkedDbs?: CheckedContents;
}

const MAX_ROWS = 100_000;

/** The schema source, and read-only queries on the same worker (the rows as the worker returns them). */
interface SqlWorkerSchemaSource extends SchemaSource {
  query(dbId: string, sql: string): Promise<SqlValue[][]>;
}

export function createSqlWorkerSchemaSource(options: SqlWorkerSchemaSourceOptions): SqlWorkerSchemaSource {
  const { api, dbSource } = options;
  const checkedDbs = options.checkedDbs ?? checkedInProcess;
  const open = async (dbId: string): Promise<void> => {
    let given: Uint8Array | DbFileRef;
    let sha256: string | null;
    if (dbSource.openPaged) {
      ({ ref: given, sha256 } = await dbSource.openPaged(dbId));
    } else {
      const loaded = await dbSource.load(dbId);
      ({ sha256 } = loaded);
      given = options.transferBytes ? options.transferBytes(loaded.bytes) : loaded.bytes;
    }
    const r = await api.loadDb(dbId, given, { checked: sha256 !== null && checkedDbs.has(sha256) });
    if (r.quickChecked && sha256 !== null) checkedDbs.add(sha256);
  };
  const run = async (dbId: string, sql: string): Promise<QueryResult> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await api.query(dbId, sql, MAX_ROWS);
      if (!('kind' in r)) return r;
      if (!(await dbSource.has(dbId)))
        throw new WorkbenchError('NOT_FOUND', `database ${dbId} not found: expected ${dbSource.describe(dbId)}`);
      await open(dbId);
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
