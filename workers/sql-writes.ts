/**
 * How the SQL worker tells that a statement wrote, or may write: before it runs (its text) and
 * after (a fingerprint of the connection, compared with the one taken before it ran).
 */
import type { Database, Statement } from 'sql.js';
import { firstSignificantIndex, leadingKeyword } from '../src/core/sql/python-statement.ts';

/**
 * Only SELECT and VALUES statements never write. Anything else may (WITH ... DELETE, DML, DDL,
 * PRAGMA, a leading empty statement before a write...).
 */
export function mayWrite(text: string): boolean {
  const k = leadingKeyword(text);
  return k !== 'SELECT' && k !== 'VALUES';
}

/** The next token at `pos` (a word, or a quoted name or string), or null at the end. */
function tokenAt(sql: string, pos: number): { text: string; end: number } | null {
  const i = firstSignificantIndex(sql, pos);
  if (i < 0) return null;
  const c = sql[i]!;
  const close = c === '"' ? '"' : c === '`' ? '`' : c === '[' ? ']' : c === "'" ? "'" : null;
  if (close) {
    const j = sql.indexOf(close, i + 1);
    return { text: sql.slice(i, j < 0 ? sql.length : j + 1), end: j < 0 ? sql.length : j + 1 };
  }
  const m = /^[A-Za-z0-9_$\u0080-\uffff]+/.exec(sql.slice(i, i + 256));
  return m ? { text: m[0], end: i + m[0].length } : { text: c, end: i + 1 };
}

/**
 * `VACUUM [schema] INTO 'file'`: writes a whole copy of the database to a file. In the worker
 * that file lives in sql.js's in-memory file system, which the worker cannot clear (sql.js does
 * not expose it), so six copies of a 500 MB database took 4.7 GB: the worker refuses it.
 */
export function isVacuumInto(sql: string): boolean {
  let t = tokenAt(sql, 0);
  while (t?.text === ';') t = tokenAt(sql, t.end);
  if (t?.text.toUpperCase() !== 'VACUUM') return false;
  for (let n = 0; n < 2; n++) {
    t = tokenAt(sql, t.end);
    if (!t) return false;
    if (t.text.toUpperCase() === 'INTO') return true;
  }
  return false;
}

export const VACUUM_INTO_MESSAGE =
  'VACUUM INTO writes a copy of the database to a file, which the SQL worker refuses (the copy would stay in its memory; the official evaluator would write it to disk)';

/**
 * What a statement can change on the connection. `data`: rows (total_changes), the main
 * schema and the header fields a PRAGMA sets (user_version, application_id); `attached`: the
 * databases ATTACHed; `temp`: the objects of the temp schema (a TEMP table, view or trigger
 * shadows the database's own for the gold query: a write). Any of them counts as a
 * write (`mutated_db`). `connection` also sees a temp database appearing without objects (a
 * read of sqlite_temp_master opens it): not a write, but the connection is re-opened before
 * the next execution all the same. `limits`: SQLite's heap limits, which belong to the whole
 * worker (a change that slipped past the PRAGMA policy retires the worker, sql-pragmas.ts).
 * The temp schema is read only when the temp database is open (reading it would open it).
 */
export interface Fingerprint {
  data: string;
  attached: string;
  connection: string;
  temp: string;
  limits: string;
}

const FINGERPRINT_SQL =
  'SELECT total_changes(), (SELECT schema_version FROM pragma_schema_version), ' +
  '(SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id), ' +
  "(SELECT group_concat(name) FROM pragma_database_list WHERE name <> 'temp'), " +
  '(SELECT group_concat(name) FROM pragma_database_list), ' +
  '(SELECT * FROM pragma_hard_heap_limit), (SELECT * FROM pragma_soft_heap_limit)';

const TEMP_SQL =
  "SELECT count(*), total(rootpage), group_concat(type || ' ' || name || ' ' || coalesce(sql, ''), ';') FROM temp.sqlite_master";

/** Runs the connection's prepared fingerprint statement (prepared once, reset at once: a reset statement holds no lock). */
export function readFingerprint(stmt: Statement, db: Database): Fingerprint {
  let f: Fingerprint;
  try {
    stmt.step();
    const r = stmt.get();
    f = {
      data: `${r[0]}/${r[1]}/${r[2]}/${r[3]}`,
      attached: String(r[4]),
      connection: String(r[5]),
      temp: '',
      limits: `${r[6]}/${r[7]}`,
    };
  } finally {
    stmt.reset();
  }
  if (f.connection.split(',').includes('temp')) {
    const t = db.exec(TEMP_SQL)[0]?.values[0] ?? [];
    if (Number(t[0]) > 0) f.temp = t.map(String).join('/');
  }
  return f;
}

export function prepareFingerprint(db: Database): Statement {
  return db.prepare(FINGERPRINT_SQL);
}

/** The statement changed the database (or what the connection reads as its databases, a TEMP shadow included). */
export const wrote = (before: Fingerprint, after: Fingerprint): boolean =>
  after.data !== before.data || after.attached !== before.attached || after.temp !== before.temp;

/** Anything changed: the connection must be re-opened before it runs anything else. */
export const changed = (before: Fingerprint, after: Fingerprint): boolean =>
  wrote(before, after) || after.connection !== before.connection;
