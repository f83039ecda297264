/**
 * The suite generator: from a database's schema and a seeded sample of its rows, derived
 * databases with the same schema and few rows (Zhong, Yu, Klein 2020, section 3.1: "fuzzing").
 * Every value comes from its column's own domain: a sampled row kept as it is (so whole rows
 * repeat: duplicates), another row's value (ties), a neighbour (v - 1, v + 1), the sample's
 * smallest or largest value (boundaries), or a literal the golds compare the column with and its
 * neighbours (comparedLiterals). Constraints hold: the original CREATE statements are replayed
 * (PRIMARY KEY, UNIQUE, NOT NULL, CHECK: a row that breaks one is skipped by INSERT OR IGNORE),
 * NOT NULL columns get no NULL, and a foreign key column takes the values its referenced column
 * has on the same derived database (parents are generated first).
 *
 * The original is read only by a streaming sample: `sampleDatabase` picks at most `sampleRows`
 * rows per table by seeded rowid probes (one indexed lookup each), never a copy of a table.
 */
import { mulberry32, randomIndex, type Rng } from '../util/rng.ts';
import type { SqlValue } from '../types.ts';
import { quoteName, type SchemaInfo, type SqlConn, type TableInfo } from './schema.ts';

interface GenerateOptions {
  /** Rows per table of a derived database, at most. */
  maxRows: number;
}

/** Rows sampled from each table of the original, by table name. */
type DbSample = Map<string, SqlValue[][]>;

/** A uniform double in [0, 1) for each (seed, stream): candidate databases draw independently. */
function streamRng(seed: number, stream: number): Rng {
  return mulberry32((seed ^ Math.imul(stream + 1, 0x9e3779b1)) >>> 0);
}

/**
 * A sampled TEXT or BLOB keeps at most this many characters or bytes (a prefix): a suite's
 * memory then grows with its number of rows, never with the size of the original's values
 * (220 MB of 1 MB blobs took 2.45 GB in a worker before this bound). A gold that reads the
 * whole of a longer value (its length, equality with another table's copy) sees the prefix on
 * the suite's databases: a difference at most, never a wrong verdict on the original (EX).
 */
export const MAX_SAMPLED_VALUE_LENGTH = 4096;

const sampled = (col: string) =>
  `CASE WHEN typeof(${col}) IN ('text', 'blob') AND length(${col}) > ${MAX_SAMPLED_VALUE_LENGTH} THEN substr(${col}, 1, ${MAX_SAMPLED_VALUE_LENGTH}) ELSE ${col} END`;

/** At most `sampleRows` rows per table, chosen by seeded probes into the rowid range. */
export function sampleDatabase(conn: SqlConn, schema: SchemaInfo, seed: number, sampleRows: number): DbSample {
  const out: DbSample = new Map();
  schema.tables.forEach((t, ti) => {
    const rng = streamRng(seed, 1_000_000 + ti);
    const cols = t.columns.map((c) => sampled(quoteName(c.name))).join(', ');
    const from = quoteName(t.name);
    const [count, lo, hi] = t.withoutRowid
      ? [conn.all(`SELECT count(*) FROM ${from}`)[0]![0], null, null]
      : conn.all(`SELECT count(*), min(rowid), max(rowid) FROM ${from}`)[0]!;
    const n = Number(count);
    if (n <= sampleRows) {
      out.set(t.name, conn.all(`SELECT ${cols} FROM ${from}${t.withoutRowid ? '' : ' ORDER BY rowid'}`));
      return;
    }
    const rows: SqlValue[][] = [];
    if (t.withoutRowid) {
      for (let k = 0; k < sampleRows; k++)
        rows.push(...conn.all(`SELECT ${cols} FROM ${from} LIMIT 1 OFFSET ?`, [randomIndex(rng, n)]));
    } else {
      const min = Number(lo);
      const span = Number(hi) - min + 1;
      const seen = new Set<string>();
      for (let k = 0; k < sampleRows * 2 && rows.length < sampleRows; k++) {
        const probe = min + Math.floor(rng.next() * span);
        const hit = conn.all(`SELECT rowid, ${cols} FROM ${from} WHERE rowid >= ? ORDER BY rowid LIMIT 1`, [probe])[0];
        if (!hit || seen.has(String(hit[0]))) continue;
        seen.add(String(hit[0]));
        rows.push(hit.slice(1));
      }
    }
    out.set(t.name, rows);
  });
  return out;
}

function neighbour(v: SqlValue, rng: Rng): SqlValue {
  const step = rng.next() < 0.5 ? -1 : 1;
  if (typeof v === 'number') return v + step;
  if (typeof v === 'bigint') return v + BigInt(step);
  return v;
}

/** Binds exactly: sql.js binds a JavaScript integer beyond 32 bits as REAL, a bigint as INTEGER. */
function bindable(v: SqlValue): SqlValue {
  return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) > 2 ** 31 - 1 && Number.isSafeInteger(v)
    ? BigInt(v)
    : v;
}

function compareValues(a: SqlValue, b: SqlValue): number {
  const rank = (v: SqlValue) =>
    v === null ? 0 : typeof v === 'number' || typeof v === 'bigint' ? 1 : typeof v === 'string' ? 2 : 3;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return Number(a) - Number(b);
  if (ra === 2) return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  return 0;
}

interface ColumnDomain {
  values: SqlValue[];
  min: SqlValue;
  max: SqlValue;
  literals: SqlValue[];
  nullable: boolean;
  /** Values of the referenced column on this derived database (foreign key), when there is one. */
  parent: SqlValue[] | null;
}

function domainOf(
  values: SqlValue[],
  literals: readonly (number | string)[],
  nullable: boolean,
  parent: SqlValue[] | null,
): ColumnDomain {
  const present = values.filter((v) => v !== null).sort(compareValues);
  const lits: SqlValue[] = [];
  for (const l of literals) {
    lits.push(l);
    if (typeof l === 'number') lits.push(l - 1, l + 1);
  }
  return {
    values,
    min: present[0] ?? null,
    max: present[present.length - 1] ?? null,
    literals: lits,
    nullable,
    parent,
  };
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[randomIndex(rng, xs.length)]!;

function drawValue(base: SqlValue, d: ColumnDomain, rng: Rng): SqlValue {
  if (d.parent) return d.parent.length > 0 ? pick(rng, d.parent) : base;
  const r = rng.next();
  let v: SqlValue;
  if (r < 0.45) v = base;
  else if (r < 0.65)
    v = pick(rng, d.values); // another row's value: ties
  else if (r < 0.8) v = neighbour(rng.next() < 0.5 ? base : pick(rng, d.values), rng);
  else if (r < 0.88) v = rng.next() < 0.5 ? d.min : d.max;
  else if (r < 0.97 && d.literals.length > 0) v = pick(rng, d.literals);
  else v = d.nullable ? null : base;
  return v === null && !d.nullable ? base : v;
}

/**
 * Fills one derived database (given empty) with the schema and generated rows. `stream`
 * numbers the candidate: the same (seed, stream, sample) gives the same statements, so the
 * same bytes.
 */
export function generateDatabase(
  dst: SqlConn,
  schema: SchemaInfo,
  sample: DbSample,
  literals: ReadonlyMap<string, readonly (number | string)[]>,
  seed: number,
  stream: number,
  options: GenerateOptions,
): void {
  const rng = streamRng(seed, stream);
  dst.run('BEGIN');
  for (const t of schema.tables) dst.run(t.sql);
  for (const sql of schema.afterRows) {
    try {
      dst.run(sql);
    } catch {
      // an index or view the derived schema cannot hold (it names a virtual table): left out
    }
  }
  for (const t of schema.tables) fillTable(dst, t, sample.get(t.name) ?? [], literals, rng, options);
  dst.run('COMMIT');
}

function fillTable(
  dst: SqlConn,
  t: TableInfo,
  rows: SqlValue[][],
  literals: ReadonlyMap<string, readonly (number | string)[]>,
  rng: Rng,
  options: GenerateOptions,
): void {
  if (rows.length === 0) return;
  const domains = t.columns.map((c, ci) => {
    const fk = t.foreignKeys.find((f) => f.from.toLowerCase() === c.name.toLowerCase());
    let parent: SqlValue[] | null = null;
    if (fk) {
      try {
        const to = fk.to ?? pkOf(dst, fk.table);
        parent = to ? dst.all(`SELECT DISTINCT ${quoteName(to)} FROM ${quoteName(fk.table)}`).map((r) => r[0]!) : null;
      } catch {
        parent = null; // a reference to a table or column that does not exist: the column's own domain
      }
      if (parent && !c.notNull) parent.push(null);
    }
    return domainOf(
      rows.map((r) => r[ci] ?? null),
      literals.get(c.name.toLowerCase()) ?? [],
      !c.notNull && c.pk === 0,
      parent,
    );
  });
  const target = Math.max(1, Math.round(Math.min(options.maxRows, rows.length * 2) * (0.25 + 0.75 * rng.next())));
  const insert =
    `INSERT OR IGNORE INTO ${quoteName(t.name)} (${t.columns.map((c) => quoteName(c.name)).join(', ')}) ` +
    `VALUES (${t.columns.map(() => '?').join(', ')})`;
  for (let k = 0; k < target; k++) {
    const base = pick(rng, rows);
    // A third of the rows are sampled rows as they are: whole-row duplicates where no key forbids them.
    const keep = rng.next() < 0.33;
    const values = domains.map((d, ci) =>
      bindable(keep && !d.parent ? (base[ci] ?? null) : drawValue(base[ci] ?? null, d, rng)),
    );
    try {
      dst.run(insert, values);
    } catch {
      // a value the column refuses outright (a text in an INTEGER PRIMARY KEY): the row is skipped
    }
  }
}

function pkOf(dst: SqlConn, table: string): string | null {
  const pk = dst.all(`PRAGMA table_info(${quoteName(table)})`).filter((r) => Number(r[5]) > 0);
  return pk.length === 1 ? String(pk[0]![1]) : null;
}
