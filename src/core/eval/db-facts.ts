/**
 * What the version scan needs from the databases, read through the same SqlExecutor port that
 * scores the run (no second way into the workers): the SQLite version the verdicts come from
 * (`select sqlite_version()`) and every column's declared type. One tiny item per database,
 * whose prediction is the schema query and whose rows come back as the item's preview.
 */
import type { AbortSignalLike, EvalOptions, SqlExecutor } from './executor.ts';
import type { EvalItem } from '../types.ts';
import type { ColumnTypes } from '../sql/version-features.ts';

export const DB_FACTS_SQL =
  'SELECT sqlite_version(), m.name, p.name, p.type FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p ' +
  "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

export interface DbFacts {
  /** e.g. `3.54.1`; null when no database could be read. */
  sqliteVersion: string | null;
  /** Per database id; a database that is missing or failed is absent (its items scan without types). */
  columnTypes: Record<string, ColumnTypes>;
}

const MAX_COLUMNS = 100_000;

/** The facts read, and per database the sha256 of the bytes they were read from (when the executor says). */
interface DbFactsRead extends DbFacts {
  readFrom: Record<string, string>;
}

export async function readDbFacts(
  executor: SqlExecutor,
  dbIds: readonly string[],
  signal?: AbortSignalLike,
): Promise<DbFactsRead> {
  const ids = [...new Set(dbIds)].sort();
  const items: EvalItem[] = ids.map((dbId, i) => ({
    index: i,
    questionId: -1,
    dbId,
    difficulty: 'unknown',
    predSql: DB_FACTS_SQL,
    goldSql: 'SELECT 1',
    extraction: { rule: 'sql-line', thinkStripped: false },
    sample: i,
  }));
  const options: EvalOptions = {
    metrics: ['ex'],
    timeoutMs: 30_000,
    readOnly: true,
    vesIterations: 1,
    previewRows: MAX_COLUMNS,
    reuse: false,
  };
  const facts: DbFactsRead = { sqliteVersion: null, columnTypes: {}, readFrom: {} };
  if (items.length === 0) return facts;
  await executor.evaluate(items, options, {
    signal,
    onEvent: (e) => {
      if (e.type !== 'item' || e.preview === null || e.result.status !== 'ok') return;
      const dbId = ids[e.result.sample ?? e.result.index];
      if (dbId === undefined) return;
      const types: Record<string, Record<string, string>> = {};
      for (const row of e.preview.predRows) {
        const [version, table, column, type] = row.map((v) => String(v ?? ''));
        facts.sqliteVersion ??= version!;
        (types[table!.toLowerCase()] ??= {})[column!.toLowerCase()] = type!;
      }
      facts.columnTypes[dbId] = types;
      if (e.result.dbSha256 !== undefined) facts.readFrom[dbId] = e.result.dbSha256;
    },
  });
  return facts;
}
