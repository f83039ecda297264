/**
 * SchemaSource for Node tests: sql.js opened directly on ../shared/data/bird/databases, with
 * the same queries as the browser's SQL-worker source, and the description CSVs read from disk.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import initSqlJs, { type Database } from 'sql.js';
import { folderDescriptionFiles } from '../../src/adapters/node/sql-worker-host.ts';
import { SCHEMA_QUERIES, splitSampleRow, type SchemaSource } from '../../src/core/prompt/schema-source.ts';
import type { SqlValue } from '../../src/core/types.ts';

export async function sqljsSchemaSource(dbRoot: string): Promise<SchemaSource & { close(): void }> {
  const SQL = await initSqlJs();
  const open = new Map<string, Database>();
  const db = (dbId: string): Database => {
    let d = open.get(dbId);
    if (!d) {
      d = new SQL.Database(readFileSync(path.join(dbRoot, dbId, `${dbId}.sqlite`)));
      open.set(dbId, d);
    }
    return d;
  };
  const rows = (dbId: string, sql: string): SqlValue[][] => (db(dbId).exec(sql)[0]?.values ?? []) as SqlValue[][];
  return {
    async tables(dbId) {
      return rows(dbId, SCHEMA_QUERIES.tables).map(([name, sql]) => ({
        name: String(name),
        createSql: String(sql),
        columns: rows(dbId, SCHEMA_QUERIES.columns(String(name))).map((r) => String(r[0])),
      }));
    },
    async sampleRows(dbId, table, limit) {
      const columns = rows(dbId, SCHEMA_QUERIES.columns(table)).map((r) => String(r[0]));
      const split = rows(dbId, SCHEMA_QUERIES.sample(table, columns, limit)).map((r) =>
        splitSampleRow(r, columns.length),
      );
      return { columns, rows: split.map((s) => s.values), classes: split.map((s) => s.classes) };
    },
    descriptionFiles: (dbId) => folderDescriptionFiles(dbRoot, dbId),
    close() {
      for (const d of open.values()) d.close();
      open.clear();
    },
  };
}
