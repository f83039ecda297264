/**
 * OmniSQL's schema text ("db_details"): one `CREATE TABLE` per table of BIRD's tables.json entry,
 * each column as `    name type, -- comment, example: [...]`, then `PRIMARY KEY (...)` and one
 * `CONSTRAINT fk_<table>_<column> FOREIGN KEY (...) REFERENCES t (c)` per foreign key. It
 * reproduces `obtain_db_details` and `sample_table_values` of OmniSQL's
 * train_and_evaluate/process_dataset.py (RUCKBReasoning/OmniSQL a66d732) for BIRD in dev mode
 * (every column, nothing shuffled) with `--value_limit_num 2`:
 *
 * - columns, types and comments come from tables.json (`column_names_original`,
 *   `column_types`, `column_names`); a comment is printed unless it is blank or equals the name
 *   (case-insensitively, also with spaces as `_` or removed);
 * - example values: per column the first N distinct values that are neither NULL nor '' (the
 *   database's own order), strings cut to 40 characters, duplicates dropped after the cut, at
 *   most 6, printed as a Python list;
 * - identifiers that are in OmniSQL's reserved-word list or contain a character other than
 *   `[A-Za-z0-9_]` are wrapped in backticks.
 *
 * OmniSQL's published BIRD prompts also add values found by a BM25 search (pyserini/Lucene) of
 * the question over the database's contents; that retrieval is not reproduced (valueRetrieval
 * 'none' in the presets), so the example values are the sampled ones only.
 */
import type { SqlValue } from '../types.ts';
import { pyListRepr } from './py-repr.ts';
import type { StorageClass } from './schema-source.ts';

/** One database of a BIRD/Spider tables.json (dev_tables.json). */
export interface BirdTablesEntry {
  db_id: string;
  table_names_original: string[];
  column_names_original: Array<[number, string]>;
  /** Readable column names, used by OmniSQL as column comments. */
  column_names: Array<[number, string]>;
  column_types: string[];
  primary_keys: Array<number | number[]>;
  foreign_keys: Array<[number, number]>;
}

/** A read-only query on a database (the SQL worker's `query`, sql.js in Node). */
export type ReadOnlyQuery = (dbId: string, sql: string) => Promise<SqlValue[][]>;

/** Example values per `table.column` (lower-case), as OmniSQL's `sample_table_values` returns them. */
type OmniSqlValues = Map<string, { values: SqlValue[]; classes: StorageClass[] }>;

/** OmniSQL's SQL_RESERVED_WORDS (process_dataset.py), sorted. */
const OMNISQL_RESERVED_WORDS: ReadonlySet<string> = new Set(
  (
    'ACCESS ADD AFTER ALL ALTER ANALYZE AND AS ASC AVG BEFORE BEGIN BETWEEN BIGINT BINARY BIT BLOB ' +
    'BOOLEAN BOTH BREAK BY CALL CASCADE CASE CAST CHAR CHARACTER CHECK CLOB COLLATE COLUMN COMMENT ' +
    'COMMIT CONDITION CONNECT CONSTRAINT CONTINUE CONVERT COUNT CREATE CROSS CURRENT CURRENT_DATE ' +
    'CURRENT_TIME CURRENT_TIMESTAMP CURSOR DATABASE DATE DAY DEC DECIMAL DECLARE DEFAULT DELETE DESC ' +
    'DESCRIBE DISTINCT DO DOUBLE DROP EACH ELSE ELSEIF END ESCAPE EXCEPT EXEC EXECUTE EXISTS EXIT ' +
    'EXPLAIN EXTEND EXTERNAL FALSE FETCH FILTER FLOAT FOR FOREIGN FROM FULL FUNCTION GENERATED GLOBAL ' +
    'GRANT GROUP HAVING HOLD HOUR IDENTIFIED IF IGNORE ILIKE IN INDEX INNER INOUT INSENSITIVE INSERT INT ' +
    'INTEGER INTERSECT INTERVAL INTO IS ITERATE JOIN KEY LANGUAGE LEADING LEAVE LEFT LIKE LIMIT LOCAL ' +
    'LOCALTIME LOCALTIMESTAMP LOCK LOOP MATCH MAX MERGE MIN MINUTE MODIFIES MODULE MONTH NATURAL NCHAR ' +
    'NEW NO NOT NULL NUMERIC OF OFFSET OLD ON ONLY OPEN OR ORDER OUT OUTER OVER PARTITION PERCENT ' +
    'PLACING POSITION PRECISION PRIMARY PROCEDURE RANGE READS REAL RECURSIVE REFERENCES REGEXP RELEASE ' +
    'RENAME REPEAT REPLACE RESIGNAL RESTRICT RETURN REVOKE RIGHT RLIKE ROLE ROLLBACK ROW ROWNUM ROWS ' +
    'SAVEPOINT SCHEMA SELECT SENSITIVE SESSION SET SIGNAL SMALLINT SOME SPECIFIC SQL SQLEXCEPTION ' +
    'SQLSTATE SQLWARNING START STATIC SUBSTRING SUM SYSDATE TABLE TERMINATED THEN TIME TIMESTAMP TO TOP ' +
    'TRAILING TRIGGER TRUE UNDO UNION UNIQUE UNKNOWN UNLOCK UPDATE USAGE USER USING VALUE VALUES VARCHAR ' +
    'VARYING VIEW WHEN WHERE WHILE WITH WITHIN YEAR ZONE'
  )
    .split(/\s+/)
    .filter((w) => w !== ''),
);

const SPECIAL_CHARS = /[^a-zA-Z0-9_]/;

export function omnisqlIdentifier(name: string): string {
  return OMNISQL_RESERVED_WORDS.has(name.toUpperCase()) || SPECIAL_CHARS.test(name) ? `\`${name}\`` : name;
}

/** The queries OmniSQL runs (backtick-quoted as it does), plus `typeof` so values print as Python would. */
const OMNISQL_QUERIES = {
  columns: (table: string) => `PRAGMA table_info(\`${table}\`);`,
  values: (table: string, column: string, limit: number) =>
    `SELECT \`${column}\`, typeof(\`${column}\`) FROM (SELECT DISTINCT \`${column}\` FROM \`${table}\` ` +
    `WHERE \`${column}\` IS NOT NULL and \`${column}\` != '') AS unique_values LIMIT ${limit};`,
};

const MAX_VALUE_CHARS = 40;
const MAX_VALUES = 6;

/** OmniSQL's `sample_table_values(db, table_names_original, limit)`. */
export async function loadOmniSqlValues(
  query: ReadOnlyQuery,
  entry: BirdTablesEntry,
  limit: number,
): Promise<OmniSqlValues> {
  const out: OmniSqlValues = new Map();
  for (const table of entry.table_names_original) {
    const columns = (await query(entry.db_id, OMNISQL_QUERIES.columns(table))).map((r) => String(r[1]));
    for (const column of columns) {
      const rows = await query(entry.db_id, OMNISQL_QUERIES.values(table, column, limit));
      if (rows.length === 0) continue;
      out.set(`${table}.${column}`.toLowerCase(), {
        values: rows.map((r) => (typeof r[0] === 'string' ? [...r[0]].slice(0, MAX_VALUE_CHARS).join('') : r[0]!)),
        classes: rows.map((r) => String(r[1]) as StorageClass),
      });
    }
  }
  return out;
}

/** Python dict-key identity: 1 == 1.0, str and bytes by content. */
function pyKey(v: SqlValue): string {
  if (v === null) return 'None';
  if (v instanceof Uint8Array) return `b:${Array.from(v).join(',')}`;
  if (typeof v === 'number' || typeof v === 'bigint') return `n:${v.toString()}`;
  return `s:${v}`;
}

function columnValues(values: OmniSqlValues, key: string): string | null {
  const found = values.get(key);
  if (!found) return null;
  const seen = new Set<string>();
  const kept: SqlValue[] = [];
  const classes: StorageClass[] = [];
  found.values.forEach((v, i) => {
    const k = pyKey(v);
    if (seen.has(k)) return;
    seen.add(k);
    kept.push(v);
    classes.push(found.classes[i]!);
  });
  if (kept.length === 0) return null;
  return pyListRepr(kept.slice(0, MAX_VALUES), classes.slice(0, MAX_VALUES));
}

function commentIsName(column: string, comment: string): boolean {
  const c = comment.toLowerCase();
  const n = column.toLowerCase();
  return n === c || n === c.replaceAll(' ', '_') || n === c.replaceAll(' ', '') || comment.trim() === '';
}

/** OmniSQL's `obtain_db_details(db_info, 'bird', sampled, {}, ..., 'dev', ...)`. */
export function renderOmniSqlSchema(entry: BirdTablesEntry, values: OmniSqlValues): string {
  const cols = entry.column_names_original;
  const ddls: string[] = [];
  entry.table_names_original.forEach((table, tableIdx) => {
    const lines: string[] = [];
    const pk: string[] = [];
    const fk: string[] = [];
    cols.forEach(([inner, column], columnIdx) => {
      if (inner !== tableIdx) return;
      const comment = entry.column_names[columnIdx]![1];
      const type = entry.column_types[columnIdx]!;
      const example = columnValues(values, `${table}.${column}`.toLowerCase());
      let line = `    ${omnisqlIdentifier(column)} ${type},`;
      if (commentIsName(column, comment)) {
        if (example !== null) line += ` -- example: ${example}`;
      } else {
        line += ` -- ${comment}`;
        if (example !== null) line += `, example: ${example}`;
      }
      lines.push(line);
      for (const key of entry.primary_keys) {
        if (typeof key === 'number' ? key === columnIdx : key.includes(columnIdx)) pk.push(column);
      }
      for (const [source, target] of entry.foreign_keys) {
        if (source !== columnIdx) continue;
        const [sourceTable, sourceColumn] = cols[source]!;
        const [targetTable, targetColumn] = cols[target]!;
        const sourceTableName = entry.table_names_original[sourceTable]!;
        const targetTableName = entry.table_names_original[targetTable]!;
        fk.push(
          `    CONSTRAINT fk_${sourceTableName.toLowerCase().replaceAll(' ', '_')}_${sourceColumn.toLowerCase().replaceAll(' ', '_')}` +
            ` FOREIGN KEY (${omnisqlIdentifier(sourceColumn)}) REFERENCES ${omnisqlIdentifier(targetTableName)}` +
            ` (${omnisqlIdentifier(targetColumn)}),`,
        );
      }
    });
    if (lines.length === 0) return;
    const pkColumns = [...new Set(pk)];
    const pkLine = pkColumns.length > 0 ? [`    PRIMARY KEY (${pkColumns.map(omnisqlIdentifier).join(', ')}),`] : [];
    let ddl = `CREATE TABLE ${omnisqlIdentifier(table)} (\n${[...lines, ...pkLine, ...new Set(fk)].join('\n')}`;
    if (ddl.endsWith(',')) ddl = ddl.slice(0, -1);
    ddls.push(`${ddl}\n);`);
  });
  return ddls.join('\n\n');
}
