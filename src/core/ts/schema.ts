/**
 * What the suite generator needs to know about a database, read through a small connection
 * port (the SQL worker implements it on sql.js; the core has no SQLite of its own).
 */
import type { SqlValue } from '../types.ts';

/** Port: one SQLite connection. `all` returns rows with INTEGER beyond 2^53 as bigint. */
export interface SqlConn {
  all(sql: string, params?: readonly SqlValue[]): SqlValue[][];
  run(sql: string, params?: readonly SqlValue[]): void;
}

interface ColumnInfo {
  name: string;
  /** Declared type as written ('' when none). */
  type: string;
  notNull: boolean;
  /** Position in the primary key (0 = not part of it). */
  pk: number;
}

interface ForeignKey {
  from: string;
  table: string;
  /** The referenced column; null when the reference names the parent's primary key implicitly. */
  to: string | null;
}

export interface TableInfo {
  name: string;
  /** The CREATE TABLE statement, replayed as it is on every suite database. */
  sql: string;
  columns: ColumnInfo[];
  foreignKeys: ForeignKey[];
  /** Columns that are unique on their own (a single-column UNIQUE index or primary key). */
  unique: string[];
  withoutRowid: boolean;
}

export interface SchemaInfo {
  /** Tables in an order where a referenced table comes before the tables that reference it (when acyclic). */
  tables: TableInfo[];
  /** CREATE INDEX / VIEW statements, run after the rows are in; triggers are left out (they would rewrite the generated rows). */
  afterRows: string[];
}

export const quoteName = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function readSchema(conn: SqlConn): SchemaInfo {
  const master = conn.all(
    "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
  );
  const tables: TableInfo[] = [];
  const afterRows: string[] = [];
  for (const [type, name, sql] of master) {
    const n = String(name);
    const text = String(sql);
    if (type === 'index' || type === 'view') afterRows.push(text);
    if (type !== 'table' || /^\s*CREATE\s+VIRTUAL/i.test(text)) continue;
    const columns = conn.all(`PRAGMA table_info(${quoteName(n)})`).map((r) => ({
      name: String(r[1]),
      type: String(r[2] ?? ''),
      notNull: Number(r[3]) === 1,
      pk: Number(r[5]),
    }));
    const foreignKeys = conn.all(`PRAGMA foreign_key_list(${quoteName(n)})`).map((r) => ({
      table: String(r[2]),
      from: String(r[3]),
      to: r[4] === null ? null : String(r[4]),
    }));
    const unique = columns.filter((c) => c.pk === 1 && columns.filter((d) => d.pk > 0).length === 1).map((c) => c.name);
    for (const idx of conn.all(`PRAGMA index_list(${quoteName(n)})`)) {
      if (Number(idx[2]) !== 1) continue;
      const cols = conn.all(`PRAGMA index_info(${quoteName(String(idx[1]))})`);
      if (cols.length === 1 && cols[0]![2] !== null && !unique.includes(String(cols[0]![2])))
        unique.push(String(cols[0]![2]));
    }
    tables.push({
      name: n,
      sql: text,
      columns,
      foreignKeys,
      unique,
      withoutRowid: /\)\s*WITHOUT\s+ROWID\s*;?\s*$/i.test(text),
    });
  }
  return { tables: parentsFirst(tables), afterRows };
}

/** Referenced tables first (depth-first on foreign keys; a cycle keeps the original order). */
function parentsFirst(tables: TableInfo[]): TableInfo[] {
  const byName = new Map(tables.map((t) => [t.name.toLowerCase(), t]));
  const out: TableInfo[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: TableInfo) => {
    const k = t.name.toLowerCase();
    if (state.has(k)) return;
    state.set(k, 'visiting');
    for (const fk of t.foreignKeys) {
      const parent = byName.get(fk.table.toLowerCase());
      if (parent && parent !== t) visit(parent);
    }
    state.set(k, 'done');
    out.push(t);
  };
  for (const t of tables) visit(t);
  return out;
}
