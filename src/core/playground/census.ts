/**
 * What a writing attempt changed, read through the executor port alone: BIRD's evaluator runs
 * the prediction and then the gold on one connection, so an item whose "gold" is a census of
 * the database (its schema, then each table's row count) shows the database as the gold query
 * saw it after the attempt. Compared with the census of the untouched database, it names the
 * tables emptied, dropped, grown or shadowed.
 */
import type { SqlValue } from '../types.ts';

/** Schema census: every object of main and temp. */
export const SCHEMA_CENSUS_SQL =
  "SELECT 'main' AS db, type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' " +
  "UNION ALL SELECT 'temp', type, name FROM sqlite_temp_master";

const quoteName = (n: string) => `"${n.replace(/"/g, '""')}"`;
const quoteText = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Row counts of `tables` in the schema `db` (`main` or `temp`); null when there is no table. */
export function countCensusSql(tables: readonly { db: 'main' | 'temp'; name: string }[]): string | null {
  if (tables.length === 0) return null;
  return tables
    .map((t) => `SELECT ${quoteText(t.db)}, ${quoteText(t.name)}, (SELECT count(*) FROM ${t.db}.${quoteName(t.name)})`)
    .join(' UNION ALL ');
}

interface SchemaObject {
  db: 'main' | 'temp';
  type: string;
  name: string;
}

export function readSchemaCensus(rows: readonly (readonly SqlValue[])[]): SchemaObject[] {
  return rows.map((r) => ({
    db: String(r[0]) === 'temp' ? 'temp' : 'main',
    type: String(r[1] ?? ''),
    name: String(r[2] ?? ''),
  }));
}

export function readCountCensus(rows: readonly (readonly SqlValue[])[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) m.set(`${String(r[0])}.${String(r[1]).toLowerCase()}`, Number(r[2]));
  return m;
}

export interface DbChange {
  kind: 'dropped' | 'created' | 'shadowed' | 'rows';
  /** `main.superhero`, `temp.superhero`. */
  object: string;
  detail: string;
}

export interface Census {
  schema: SchemaObject[];
  counts: Map<string, number>;
}

/** The changes between the untouched database and the database after the attempt. */
export function diffCensus(before: Census, after: Census): DbChange[] {
  const key = (o: SchemaObject) => `${o.db}.${o.name.toLowerCase()}`;
  const beforeKeys = new Map(before.schema.map((o) => [key(o), o]));
  const afterKeys = new Map(after.schema.map((o) => [key(o), o]));
  const changes: DbChange[] = [];
  for (const [k, o] of beforeKeys) {
    if (!afterKeys.has(k)) changes.push({ kind: 'dropped', object: k, detail: `${o.type} ${o.name} no longer exists` });
  }
  for (const [k, o] of afterKeys) {
    if (beforeKeys.has(k)) continue;
    const shadows = o.db === 'temp' && beforeKeys.has(`main.${o.name.toLowerCase()}`);
    changes.push(
      shadows
        ? {
            kind: 'shadowed',
            object: k,
            detail: `TEMP ${o.type} ${o.name} hides main.${o.name} from every later query on the connection, the gold's included`,
          }
        : { kind: 'created', object: k, detail: `new ${o.db === 'temp' ? 'TEMP ' : ''}${o.type} ${o.name}` },
    );
  }
  for (const [k, n] of before.counts) {
    const m = after.counts.get(k);
    if (m !== undefined && m !== n) changes.push({ kind: 'rows', object: k, detail: `${n} → ${m} rows` });
  }
  for (const [k, m] of after.counts) {
    if (!before.counts.has(k) && afterKeys.has(k)) changes.push({ kind: 'rows', object: k, detail: `${m} rows` });
  }
  return changes;
}
