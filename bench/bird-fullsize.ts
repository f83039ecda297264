/**
 * BIRD dev at its real size: a deterministic, seeded generator of the 8 dev databases that
 * ../shared/data/bird does not hold (their .sqlite files could not be obtained), at the sizes and
 * row counts of ../shared/data/bird/DB_REFERENCE.md, with the schemas of dev/dev_tables.json.
 *
 * `npx tsx bench/bird-fullsize.ts [--scale F] [--dir DIR] [--db a,b]` prints the folder (the dev
 * layout `<dir>/dev_databases/<db_id>/<db_id>.sqlite`, all 11 databases: the 8 generated ones and
 * symlinks to the 3 real ones under ../shared) and its manifest.
 *
 * What each database holds:
 * - every table and column of dev_tables.json with its declared type, its primary key (single or
 *   composite) and its foreign keys as declared;
 * - the per-table row counts of ROW_COUNTS below (the real counts where known; formula_1 and
 *   thrombosis_prediction split as documented there), times `--scale`;
 * - values of the column's type from a counter-based hash of (seed, table, column, row), so any
 *   cell can be computed on its own: a foreign key picks a row of the referenced table and takes
 *   that row's value of the referenced column, so every foreign key resolves (whatever the order
 *   the tables are written in, self-references and cycles included);
 * - the literals the gold SQL compares a column with (`col = 'X'`, `col = 5`, `col IN (...)`,
 *   `col LIKE '%X%'`, in dev_gold.sql and mini-dev's gold; see goldLiterals), planted in that
 *   column, so the golds select rows: in text and date key columns as the first rows' keys, in
 *   numeric keys as the last rows' where above the key's range 1..n; elsewhere each gold's
 *   literals for a table together in one row (row k: gold k's), each literal once more in the
 *   last rows, and in about half of the other rows (a random gold's together, or one of the
 *   column's), every literal present wherever the table has the rows;
 * - one text column per table (not a key, no literal compared with it; the longest-looking one:
 *   Body, Text, XML columns...) padded with filler text, the length solved from two small
 *   calibration builds so that the file reaches DB_REFERENCE.md's size (within 10 %).
 *
 * Written once with better-sqlite3 into a cache folder outside the repository (default
 * `$XDG_CACHE_HOME/rlvr-workbench/bird-fullsize`, else `~/.cache/rlvr-workbench/bird-fullsize`;
 * `RLVR_BIRD_FULLSIZE_DIR` overrides it), each file written beside its final name and renamed
 * when complete, with a manifest (seed, generator version, scale, per database: bytes, rows per
 * table, sha256) so that a second call with the same seed, version and scale reuses it.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the output of the same seed changes: a cached folder of another version is rebuilt. */
export const GENERATOR_VERSION = 6;
export const DEFAULT_SEED = 20240627;

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIRD = path.resolve(HERE, '..', '..', 'shared', 'data', 'bird');
export const BIRD_SHARED = BIRD;
export const REAL_DBS = ['student_club', 'superhero', 'toxicology'] as const;

/** DB_REFERENCE.md: the TASQL_fork sizes (bytes) and total rows of the 8 databases generated here. */
export const TARGETS: Record<string, { bytes: number; rows: number }> = {
  california_schools: { bytes: 11_116_544, rows: 29_941 },
  card_games: { bytes: 261_820_416, rows: 803_445 },
  codebase_community: { bytes: 481_419_264, rows: 740_646 },
  debit_card_specializing: { bytes: 34_635_776, rows: 423_050 },
  european_football_2: { bytes: 597_754_880, rows: 222_796 },
  financial: { bytes: 71_294_976, rows: 1_079_680 },
  formula_1: { bytes: 22_360_064, rows: 493_257 },
  thrombosis_prediction: { bytes: 7_327_744, rows: 15_252 },
};
export const GENERATED_DBS = Object.keys(TARGETS);

/**
 * Rows per table. The real counts of the released databases for six of them; formula_1 and
 * thrombosis_prediction have only their totals in DB_REFERENCE.md, split as follows:
 * - formula_1 (493,257): the small tables at the sizes the Ergast data had in 2017 (circuits 72,
 *   constructors 208, drivers 840, seasons 69, races 976, status 134), results 23,657, qualifying
 *   7,397, pitStops 6,070, the standings and constructor results about 11k-31k each, and lapTimes
 *   (the bulk of the real file) the remainder: 420,369;
 * - thrombosis_prediction (15,252): Patient 1,238, Examination 770, Laboratory the remainder 13,244.
 * Each table's count sums to DB_REFERENCE.md's total (checked by tableRows).
 */
export const ROW_COUNTS: Record<string, Record<string, number>> = {
  european_football_2: {
    Player: 11_060,
    Player_Attributes: 183_978,
    Match: 25_979,
    League: 11,
    Country: 11,
    Team: 299,
    Team_Attributes: 1_458,
  },
  codebase_community: {
    badges: 79_851,
    comments: 174_285,
    postHistory: 303_155,
    postLinks: 11_102,
    posts: 91_966,
    tags: 1_032,
    users: 40_325,
    votes: 38_930,
  },
  card_games: {
    cards: 56_822,
    foreign_data: 229_186,
    legalities: 427_907,
    sets: 551,
    set_translations: 1_210,
    rulings: 87_769,
  },
  financial: {
    account: 4_500,
    card: 892,
    client: 5_369,
    disp: 5_369,
    district: 77,
    loan: 682,
    order: 6_471,
    trans: 1_056_320,
  },
  debit_card_specializing: {
    customers: 32_461,
    gasstations: 5_716,
    products: 591,
    transactions_1k: 1_000,
    yearmonth: 383_282,
  },
  california_schools: { frpm: 9_986, satscores: 2_269, schools: 17_686 },
  formula_1: {
    circuits: 72,
    constructors: 208,
    drivers: 840,
    seasons: 69,
    races: 976,
    constructorResults: 11_082,
    constructorStandings: 11_836,
    driverStandings: 31_578,
    lapTimes: 399_338,
    pitStops: 6_070,
    qualifying: 7_397,
    status: 134,
    results: 23_657,
  },
  thrombosis_prediction: { Patient: 1_238, Examination: 770, Laboratory: 13_244 },
};

// ---------------------------------------------------------------------------------------------
// Schema

interface Column {
  name: string;
  type: string; // text | integer | real | date | datetime
}
interface Table {
  name: string;
  columns: Column[];
  pk: number[]; // column indexes within the table
  /** column index -> referenced table and column index */
  fks: Map<number, { table: string; col: number }>;
}
export interface Schema {
  dbId: string;
  tables: Table[];
}

interface DevTables {
  db_id: string;
  table_names_original: string[];
  column_names_original: [number, string][];
  column_types: string[];
  primary_keys: (number | number[])[];
  foreign_keys: [number, number][];
}

export function loadSchemas(file = path.join(BIRD, 'dev', 'dev_tables.json')): Map<string, Schema> {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as DevTables[];
  const out = new Map<string, Schema>();
  for (const d of raw) {
    const tables: Table[] = d.table_names_original.map((name) => ({ name, columns: [], pk: [], fks: new Map() }));
    // Global column index -> [table index, index within the table].
    const where: [number, number][] = [];
    d.column_names_original.forEach(([t, name], i) => {
      if (t < 0) {
        where.push([-1, -1]);
        return;
      }
      where.push([t, tables[t]!.columns.length]);
      tables[t]!.columns.push({ name, type: d.column_types[i]! });
    });
    for (const pk of d.primary_keys) {
      const cols = Array.isArray(pk) ? pk : [pk];
      const t = where[cols[0]!]![0];
      tables[t]!.pk = cols.map((c) => where[c]![1]);
    }
    for (const [from, to] of d.foreign_keys) {
      const [ft, fc] = where[from]!;
      const [tt, tc] = where[to]!;
      // A column declared twice keeps its first reference.
      if (!tables[ft]!.fks.has(fc)) tables[ft]!.fks.set(fc, { table: tables[tt]!.name, col: tc });
    }
    out.set(d.db_id, { dbId: d.db_id, tables });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Gold literals

/**
 * `values`: db -> table -> column -> the literal values (strings and numbers) the golds compare
 * the column with; `tuples`: db -> table -> per gold, its literals for that table's columns
 * together (planted in one row, so that a gold's conditions on one table hold together).
 */
export interface Literals {
  values: Map<string, Map<string, Map<string, (string | number)[]>>>;
  tuples: Map<string, Map<string, Map<string, string | number>[]>>;
}

const IDENT = String.raw`(?:\`[^\`]+\`|"[^"]+"|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_]*)`;
const unquote = (s: string) => (/^[`"[]/.test(s) ? s.slice(1, -1) : s);

/**
 * The literals each gold compares a column with: `[alias.]col = 'X'` (either side), `col = 5`,
 * `col IN ('X', 'Y')`, `col LIKE 'X%'` (the pattern without its `%`/`_` wildcards). The alias is
 * resolved through the gold's `FROM/JOIN table [AS] alias`; an unqualified column goes to every
 * table of the database that has it.
 */
export function goldLiterals(schemas: Map<string, Schema>, golds: { sql: string; dbId: string }[]): Literals {
  const out: Literals = { values: new Map(), tuples: new Map() };
  let tuple = new Map<string, Map<string, string | number>>();
  const add = (db: string, table: string, col: string, v: string | number) => {
    const tt = tuple.get(table) ?? new Map<string, string | number>();
    tuple.set(table, tt);
    if (!tt.has(col)) tt.set(col, v);
    const t = out.values.get(db) ?? new Map<string, Map<string, (string | number)[]>>();
    out.values.set(db, t);
    const c = t.get(table) ?? new Map<string, (string | number)[]>();
    t.set(table, c);
    const l = c.get(col) ?? [];
    c.set(col, l);
    if (!l.includes(v)) l.push(v);
  };
  for (const { sql, dbId } of golds) {
    const schema = schemas.get(dbId);
    if (!schema) continue;
    tuple = new Map();
    const byLower = new Map(schema.tables.map((t) => [t.name.toLowerCase(), t]));
    const aliases = new Map<string, Table>();
    for (const m of sql.matchAll(
      new RegExp(String.raw`\b(?:FROM|JOIN)\s+(${IDENT})(?:\s+(?:AS\s+)?(${IDENT}))?`, 'gi'),
    )) {
      const t = byLower.get(unquote(m[1]!).toLowerCase());
      if (!t) continue;
      aliases.set(t.name.toLowerCase(), t);
      const alias = m[2] && unquote(m[2]);
      if (alias && !/^(WHERE|INNER|LEFT|JOIN|ON|GROUP|ORDER|LIMIT|CROSS|NATURAL|UNION|RIGHT)$/i.test(alias))
        aliases.set(alias.toLowerCase(), t);
    }
    const resolve = (qual: string | undefined, col: string): [Table, Column][] => {
      const name = unquote(col).toLowerCase();
      const tables = qual ? [aliases.get(unquote(qual).toLowerCase())].filter((t) => t !== undefined) : schema.tables;
      return tables.flatMap((t) => {
        const c = t.columns.find((x) => x.name.toLowerCase() === name);
        return c ? [[t, c] as [Table, Column]] : [];
      });
    };
    const colRef = String.raw`(?:(${IDENT})\s*\.\s*)?(${IDENT})`;
    const lit = String.raw`('(?:[^']|'')*'|-?\d+(?:\.\d+)?)`;
    const parseLit = (s: string): string | number =>
      s.startsWith("'") ? s.slice(1, -1).replace(/''/g, "'") : Number(s);
    const plant = (qual: string | undefined, col: string, v: string | number) => {
      for (const [t, c] of resolve(qual, col)) add(dbId, t.name, c.name, v);
    };
    for (const m of sql.matchAll(new RegExp(`${colRef}\\s*=\\s*${lit}`, 'g'))) plant(m[1], m[2]!, parseLit(m[3]!));
    for (const m of sql.matchAll(new RegExp(`${lit}\\s*=\\s*${colRef}`, 'g'))) plant(m[2], m[3]!, parseLit(m[1]!));
    // Only a list of literals (not a subquery).
    for (const m of sql.matchAll(new RegExp(`${colRef}\\s+IN\\s*\\((\\s*${lit}(?:\\s*,\\s*${lit})*\\s*)\\)`, 'gi')))
      for (const v of m[3]!.matchAll(new RegExp(lit, 'g'))) plant(m[1], m[2]!, parseLit(v[1]!));
    for (const m of sql.matchAll(new RegExp(`${colRef}\\s+LIKE\\s+('(?:[^']|'')*')`, 'gi'))) {
      const v = String(parseLit(m[3]!)).replace(/[%_]/g, '');
      if (v) plant(m[1], m[2]!, v);
    }
    const dbTuples = out.tuples.get(dbId) ?? new Map<string, Map<string, string | number>[]>();
    out.tuples.set(dbId, dbTuples);
    for (const [table, cols] of tuple) dbTuples.set(table, [...(dbTuples.get(table) ?? []), cols]);
  }
  return out;
}

/** The gold lines of BIRD dev and mini-dev (`SQL\tdb_id`). */
export function loadGolds(): { sql: string; dbId: string }[] {
  const files = [path.join(BIRD, 'dev', 'dev_gold.sql'), path.join(BIRD, 'minidev', 'mini_dev_sqlite_gold.sql')];
  return files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const tab = l.lastIndexOf('\t');
        return { sql: l.slice(0, tab), dbId: l.slice(tab + 1).trim() };
      }),
  );
}

// ---------------------------------------------------------------------------------------------
// Values

function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
/** A 32-bit mix of (key, row): counter-based, so any cell is computed without the others. */
function mix(key: number, row: number, salt = 0): number {
  let x = (key ^ Math.imul(row + 1, 0x9e3779b1) ^ Math.imul(salt + 7, 0x85ebca77)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

const WORDS =
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum'.split(
    ' ',
  );
/** 256 KiB of filler words; pads are slices of it. */
const FILLER = (() => {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < 262_144 + 65_536; i++) {
    const w = WORDS[mix(0xf111e4, i) % WORDS.length]!;
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(' ');
})();

const pad2 = (n: number) => String(n).padStart(2, '0');
function dateOf(h: number): string {
  return `${1990 + (h % 30)}-${pad2(1 + ((h >>> 8) % 12))}-${pad2(1 + ((h >>> 16) % 28))}`;
}

interface Plan {
  schema: Schema;
  rows: Map<string, number>;
  tables: Map<string, Table>;
  literals: Map<string, Map<string, (string | number)[]>>;
  tuples: Map<string, Map<string, string | number>[]>;
  /** table -> column index of its padded text column */
  padCol: Map<string, number>;
  seedKey: number;
  info: Map<Table, ColInfo[]>;
}

interface ColInfo {
  key: number;
  /** the table's row hash key (which gold tuple a row holds) */
  rowKey: number;
  tuples: Map<string, string | number>[];
  /** numeric keys: the gold's numbers above the key's range (1..keyRows), planted in the last rows */
  above: number[];
  keyRows: number;
  tableRows: number;
  lits: (string | number)[] | undefined;
  ref: { table: Table; col: number; rows: number } | undefined;
  inPk: number;
  isReferenced: boolean;
  /** composite keys: the row is divided by radix, then taken modulo dom */
  radix: number;
  dom: number;
}

const isKeyCol = (plan: Plan, t: Table, c: number): boolean =>
  t.pk.includes(c) || t.fks.has(c) || referenced(plan, t.name, c);
function referenced(plan: Plan, table: string, c: number): boolean {
  for (const t of plan.schema.tables) for (const r of t.fks.values()) if (r.table === table && r.col === c) return true;
  return false;
}

/** Per column of `t`: what cell() needs, computed once. */
function colInfo(plan: Plan, t: Table): ColInfo[] {
  const have = plan.info.get(t);
  if (have) return have;
  const infos = t.columns.map((col, c): ColInfo => {
    const r = t.fks.get(c);
    const inPk = t.pk.indexOf(c);
    let radix = 1;
    if (t.pk.length > 1 && inPk >= 0) for (let k = 0; k < inPk; k++) radix *= domain(plan, t, t.pk[k]!);
    const dom = t.pk.length > 1 && inPk >= 0 ? domain(plan, t, c) : 0;
    const keyRows = dom || plan.rows.get(t.name)!;
    const lits = plan.literals.get(t.name)?.get(col.name) ?? [];
    return {
      key: (plan.seedKey ^ hashString(`${t.name}.${col.name}`)) >>> 0,
      rowKey: (plan.seedKey ^ hashString(`${t.name}/row`)) >>> 0,
      tuples: plan.tuples.get(t.name) ?? [],
      above: [...new Set(lits.map(Number).filter((v) => Number.isInteger(v) && v > keyRows))]
        .sort((a, b) => a - b)
        .slice(0, Math.floor(keyRows / 2)),
      keyRows,
      tableRows: plan.rows.get(t.name)!,
      lits: plan.literals.get(t.name)?.get(col.name),
      ref: r && { table: plan.tables.get(r.table)!, col: r.col, rows: plan.rows.get(r.table)! },
      inPk,
      isReferenced: referenced(plan, t.name, c),
      radix,
      dom,
    };
  });
  plan.info.set(t, infos);
  return infos;
}

/**
 * The value of `table.col` at `row`. Keys are functions of the row (a single-column key is the
 * row's number, or a planted literal/text derived from it; a composite key mixes the row into its
 * columns so that the tuple is unique); foreign keys are the referenced row's value.
 */
function cell(plan: Plan, t: Table, c: number, row: number, depth = 0): string | number | null {
  if (depth > 8) throw new Error(`${plan.schema.dbId}.${t.name}: foreign keys nest deeper than 8`);
  const col = t.columns[c]!;
  const info = colInfo(plan, t)[c]!;
  const h = mix(info.key, row);
  const { lits, ref } = info;
  if (info.dom > 0) {
    // Composite key: the first column cycles through its domain, the next columns count the cycles.
    const idx = Math.floor(row / info.radix) % info.dom;
    if (ref) return cell(plan, ref.table, ref.col, idx, depth + 1);
    return keyValue(col, idx, info);
  }
  if (ref) {
    // A primary key that is a foreign key (frpm.CDSCode -> schools): one parent row each, in
    // order, so that the keys stay distinct. Any other: skewed towards the first rows (where
    // planted key literals are), as real data is skewed.
    // (1 in 64: at 1 in 4, two children of one hot parent joined can give joins of 10^7 rows.)
    const pick = info.inPk >= 0 ? row % ref.rows : (h & 63) === 0 ? h % Math.min(ref.rows, 50) : h % ref.rows;
    return cell(plan, ref.table, ref.col, pick, depth + 1);
  }
  if (info.inPk >= 0 || info.isReferenced) return keyValue(col, row, info);
  // Every literal is present where the table has the rows: row k holds gold k's literals for
  // this table together, the last rows one literal of the column each. Elsewhere half the rows
  // hold a random gold's literals together, and half of the rest a literal of this column's.
  const n = info.tableRows;
  if (row < info.tuples.length) {
    const v = info.tuples[row]!.get(col.name);
    if (v !== undefined) return coerce(col, v);
  }
  if (lits && row >= n - lits.length && row >= info.tuples.length) return coerce(col, lits[n - 1 - row]!);
  const rh = mix(info.rowKey, row);
  if ((rh & 1) === 0 && info.tuples.length > 0) {
    const v = info.tuples[(rh >>> 1) % info.tuples.length]!.get(col.name);
    if (v !== undefined) return coerce(col, v);
  }
  if (lits && lits.length > 0 && (h & 1) === 0) {
    const v = lits[(h >>> 1) % lits.length]!;
    return coerce(col, v);
  }
  if (plan.padCol.get(t.name) === c) return null; // filled by the writer
  return randomValue(col, h);
}

/** The distinct values a composite key's column takes: its parent's rows, or as many as the table needs. */
function domain(plan: Plan, t: Table, c: number): number {
  const ref = t.fks.get(c);
  if (ref) return Math.max(1, plan.rows.get(ref.table)!);
  const others = t.pk.filter((x) => x !== c);
  let prod = 1;
  for (const o of others) if (t.fks.has(o)) prod *= Math.max(1, plan.rows.get(t.fks.get(o)!.table)!);
  return Math.max(1, Math.ceil(plan.rows.get(t.name)! / prod) + 1);
}

function keyValue(col: Column, idx: number, info: ColInfo): string | number {
  // Numeric keys are 1..n, but for the gold's numbers above n, which the last rows take; text
  // and date keys take the gold's literals first.
  const numeric = col.type === 'integer' || col.type === 'real';
  const { lits, above, keyRows } = info;
  if (numeric && idx >= keyRows - above.length) return above[idx - (keyRows - above.length)]!;
  if (!numeric && lits && idx < lits.length) return lits[idx]!;
  switch (col.type) {
    case 'integer':
    case 'real':
      return idx + 1;
    case 'date':
      return dateFromIndex(idx);
    case 'datetime':
      return `${dateFromIndex(idx)} 00:00:00`;
    default:
      return `${col.name.replace(/\W/g, '').slice(0, 6).toUpperCase() || 'K'}${idx + 1}`;
  }
}
function dateFromIndex(idx: number): string {
  const d = new Date(Date.UTC(1990, 0, 1) + idx * 86_400_000);
  return d.toISOString().slice(0, 10);
}

function coerce(col: Column, v: string | number): string | number {
  if ((col.type === 'integer' || col.type === 'real') && typeof v === 'string' && v.trim() !== '' && !isNaN(Number(v)))
    return Number(v);
  return v;
}

function randomValue(col: Column, h: number): string | number {
  switch (col.type) {
    case 'integer':
      return h % 1000;
    case 'real':
      return (h % 100_000) / 100;
    case 'date':
      return dateOf(h);
    case 'datetime':
      return `${dateOf(h)} ${pad2((h >>> 3) % 24)}:${pad2((h >>> 5) % 60)}:${pad2((h >>> 7) % 60)}.0`;
    default:
      return `${WORDS[h % WORDS.length]} ${(h >>> 8) % 5000}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Per table of the database: its row count at `scale` (at least 1; the real counts at 1). */
export function tableRows(dbId: string, scale: number): Map<string, number> {
  const counts = ROW_COUNTS[dbId];
  if (!counts) throw new Error(`bird-fullsize: no row counts for ${dbId}`);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (total !== TARGETS[dbId]!.rows)
    throw new Error(`bird-fullsize: ${dbId}'s row counts sum to ${total}, DB_REFERENCE.md says ${TARGETS[dbId]!.rows}`);
  return new Map(Object.entries(counts).map(([t, n]) => [t, Math.max(1, Math.round(n * scale))]));
}

const PAD_NAME = /body|text|xml|desc|comment|content|about|name|title|flavor|url|address|street/i;

function makePlan(schema: Schema, literals: Literals, scale: number, seed: number): Plan {
  const rows = tableRows(schema.dbId, scale);
  for (const t of schema.tables)
    if (!rows.has(t.name)) throw new Error(`bird-fullsize: ${schema.dbId}.${t.name} has no row count`);
  const plan: Plan = {
    schema,
    rows,
    tables: new Map(schema.tables.map((t) => [t.name, t])),
    literals: literals.values.get(schema.dbId) ?? new Map(),
    tuples: literals.tuples.get(schema.dbId) ?? new Map(),
    padCol: new Map(),
    info: new Map(),
    seedKey: hashString(`${seed}/${schema.dbId}`),
  };
  for (const t of schema.tables) {
    const lits = plan.literals.get(t.name);
    const text = t.columns.map((c, i) => ({ c, i })).filter(({ c, i }) => c.type === 'text' && !isKeyCol(plan, t, i));
    // A column no gold compares with first; else one that has literals (padded only in the rows
    // where no literal was planted, so the literals stay exact).
    const free = text.filter(({ c }) => !lits?.has(c.name));
    const pick = (cands: typeof text) =>
      cands.find(({ c }) => /body|text|xml|comment|desc/i.test(c.name)) ??
      cands.find(({ c }) => PAD_NAME.test(c.name)) ??
      cands[cands.length - 1];
    const best = pick(free) ?? pick(text);
    if (best) plan.padCol.set(t.name, best.i);
  }
  return plan;
}

const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
const SQL_TYPE: Record<string, string> = {
  integer: 'INTEGER',
  real: 'REAL',
  text: 'TEXT',
  date: 'DATE',
  datetime: 'DATETIME',
};

/** Writes the database of `plan` to `file`, each padded cell about `padLen` characters (0: none). */
function writeDb(plan: Plan, file: string, padLen: number): void {
  rmSync(file, { force: true });
  const db = new Database(file);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('page_size = 4096');
    // Tables are written in schema order, a child before its parent at times; resolution is by construction.
    db.pragma('foreign_keys = OFF');
    for (const t of plan.schema.tables) {
      const defs = t.columns.map((c) => `${q(c.name)} ${SQL_TYPE[c.type] ?? 'TEXT'}`);
      if (t.pk.length > 0) defs.push(`PRIMARY KEY (${t.pk.map((i) => q(t.columns[i]!.name)).join(', ')})`);
      for (const [c, r] of t.fks)
        defs.push(
          `FOREIGN KEY (${q(t.columns[c]!.name)}) REFERENCES ${q(r.table)} (${q(plan.tables.get(r.table)!.columns[r.col]!.name)})`,
        );
      db.exec(`CREATE TABLE ${q(t.name)} (\n  ${defs.join(',\n  ')}\n)`);
    }
    for (const t of plan.schema.tables) {
      const n = plan.rows.get(t.name)!;
      const ins = db.prepare(`INSERT OR IGNORE INTO ${q(t.name)} VALUES (${t.columns.map(() => '?').join(', ')})`);
      const padCol = plan.padCol.get(t.name);
      const padKey = hashString(`${plan.seedKey}/${t.name}/pad`);
      db.exec('BEGIN');
      {
        const values: (string | number | null)[] = new Array(t.columns.length);
        for (let r = 0; r < n; r++) {
          for (let c = 0; c < t.columns.length; c++) values[c] = cell(plan, t, c, r);
          if (padCol !== undefined && values[padCol] === null) {
            const h = mix(padKey, r);
            // Between half and 1.5 times padLen; a word of the row's own first.
            const len = padLen > 0 ? Math.floor(padLen / 2 + (h % Math.max(1, padLen))) : 0;
            const start = (h >>> 3) % 262_144;
            values[padCol] =
              `${randomValue(t.columns[padCol]!, h)}${len > 0 ? ' ' + FILLER.slice(start, start + len) : ''}`;
          }
          ins.run(values);
        }
      }
      db.exec('COMMIT');
    }
  } finally {
    db.close();
  }
}

/** Rows of the padded tables (the rows a pad's length multiplies). */
function paddedRows(plan: Plan): number {
  let n = 0;
  for (const t of plan.padCol.keys()) n += plan.rows.get(t)!;
  return n;
}

/**
 * The pad length that brings the file to `targetBytes`: calibration builds at a small scale (about
 * 20,000 rows, at least 2 %), no pad and a first guess (one file byte per pad character), then two secant steps
 * (the size is near linear in the pad's length, overflow pages bend it).
 */
function solvePad(
  schema: Schema,
  literals: Literals,
  scale: number,
  seed: number,
  dir: string,
  targetBytes: number,
): number {
  // About 20,000 rows (at least 2 % of the database): fewer make the extrapolation miss.
  const small = Math.min(scale, Math.max(0.02, 20_000 / TARGETS[schema.dbId]!.rows));
  const plan = makePlan(schema, literals, small, seed);
  const rows = paddedRows(plan);
  const f = path.join(dir, `.calibrate-${schema.dbId}.sqlite`);
  const target = targetBytes * small;
  try {
    writeDb(plan, f, 0);
    const s0 = statSync(f).size;
    if (rows === 0 || s0 >= target) return 0;
    // Only the rows without a planted literal are padded: about half of those of a literal column.
    const guess = Math.max(1, Math.round((target - s0) / rows));
    writeDb(plan, f, guess);
    const s1 = statSync(f).size;
    if (s1 <= s0) return 0;
    let [x0, y0, x1, y1] = [0, s0, guess, s1];
    // Two secant steps: the line through the last two builds.
    for (let step = 0; step < 2; step++) {
      const x2 = Math.max(1, Math.round(x1 + ((target - y1) * (x1 - x0)) / (y1 - y0)));
      if (x2 === x1) break;
      writeDb(plan, f, x2);
      const y2 = statSync(f).size;
      [x0, y0, x1, y1] = [x1, y1, x2, y2];
      if (y1 === y0) break;
    }
    return x1;
  } finally {
    rmSync(f, { force: true });
  }
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

export interface DbEntry {
  file: string;
  bytes: number;
  target_bytes: number;
  rows: Record<string, number>;
  pad_len: number;
  sha256: string;
  generate_ms: number;
}
export interface Manifest {
  generator_version: number;
  seed: number;
  scale: number;
  databases: Record<string, DbEntry>;
  real: Record<string, string>;
}

export function defaultCacheDir(): string {
  if (process.env.RLVR_BIRD_FULLSIZE_DIR) return path.resolve(process.env.RLVR_BIRD_FULLSIZE_DIR);
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(base, 'rlvr-workbench', 'bird-fullsize');
}

export interface GenerateOptions {
  dir?: string;
  seed?: number;
  scale?: number;
  dbs?: string[];
  log?: (m: string) => void;
}

/**
 * The folder `<dir>/dev_databases` with the 11 dev databases (generated or reused, the real ones
 * linked), and its manifest. A database is reused when the manifest has it at the same version,
 * seed and scale and its file has the recorded size.
 */
export async function generateFullsize(o: GenerateOptions = {}): Promise<{ root: string; manifest: Manifest }> {
  const dir = o.dir ?? defaultCacheDir();
  const seed = o.seed ?? DEFAULT_SEED;
  const scale = o.scale ?? 1;
  const log = o.log ?? (() => {});
  if (!(scale > 0 && scale <= 1)) throw new Error(`bird-fullsize: --scale must be in (0, 1], got ${scale}`);
  const repo = path.resolve(HERE, '..');
  if (path.resolve(dir) === repo || path.resolve(dir).startsWith(repo + path.sep))
    throw new Error(
      `bird-fullsize: the cache folder ${dir} is inside the repository; set RLVR_BIRD_FULLSIZE_DIR elsewhere`,
    );
  const root = path.join(dir, 'dev_databases');
  mkdirSync(root, { recursive: true });
  const manifestFile = path.join(dir, 'manifest.json');
  let manifest: Manifest | null = null;
  if (existsSync(manifestFile)) {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    if (m.generator_version === GENERATOR_VERSION && m.seed === seed && m.scale === scale) manifest = m;
  }
  manifest ??= { generator_version: GENERATOR_VERSION, seed, scale, databases: {}, real: {} };
  const schemas = loadSchemas();
  const literals = goldLiterals(schemas, loadGolds());
  for (const dbId of o.dbs ?? GENERATED_DBS) {
    if (!TARGETS[dbId])
      throw new Error(`bird-fullsize: ${dbId} is not one of the generated databases (${GENERATED_DBS.join(', ')})`);
    const file = path.join(root, dbId, `${dbId}.sqlite`);
    const have = manifest.databases[dbId];
    if (have && existsSync(file) && statSync(file).size === have.bytes) {
      log(`${dbId}: reused (${(have.bytes / 2 ** 20).toFixed(1)} MiB)`);
      continue;
    }
    const schema = schemas.get(dbId)!;
    const t0 = performance.now();
    mkdirSync(path.dirname(file), { recursive: true });
    const padLen = solvePad(schema, literals, scale, seed, dir, TARGETS[dbId]!.bytes);
    const plan = makePlan(schema, literals, scale, seed);
    const tmp = `${file}.partial`;
    writeDb(plan, tmp, padLen);
    renameSync(tmp, file);
    const bytes = statSync(file).size;
    // The rows as written (a duplicate key would have been dropped by INSERT OR IGNORE).
    const written: Record<string, number> = {};
    const check = new Database(file, { readonly: true });
    try {
      for (const t of schema.tables)
        written[t.name] = (check.prepare(`SELECT count(*) AS n FROM ${q(t.name)}`).get() as { n: number }).n;
    } finally {
      check.close();
    }
    for (const [t, n] of plan.rows)
      if (written[t] !== n) log(`${dbId}.${t}: ${written[t]} rows written of ${n} (duplicate keys dropped)`);
    const entry: DbEntry = {
      file: path.relative(dir, file),
      bytes,
      target_bytes: Math.round(TARGETS[dbId]!.bytes * scale),
      rows: written,
      pad_len: padLen,
      sha256: await sha256File(file),
      generate_ms: Math.round(performance.now() - t0),
    };
    manifest.databases[dbId] = entry;
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 1) + '\n');
    log(
      `${dbId}: ${(bytes / 2 ** 20).toFixed(1)} MiB (target ${(entry.target_bytes / 2 ** 20).toFixed(1)}), pad ${padLen}, ${(entry.generate_ms / 1000).toFixed(1)} s`,
    );
  }
  for (const dbId of REAL_DBS) {
    const link = path.join(root, dbId);
    const target = path.join(BIRD, 'databases', dbId);
    if (existsSync(target)) {
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() && readlinkSync(link) !== target)
        unlinkSync(link);
      if (!lstatSync(link, { throwIfNoEntry: false })) symlinkSync(target, link, 'dir');
      manifest.real[dbId] = target;
    }
  }
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 1) + '\n');
  return { root, manifest };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const o: GenerateOptions = { log: (m) => process.stderr.write(`[bird-fullsize] ${m}\n`) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--scale') o.scale = Number(v());
    else if (a === '--seed') o.seed = Number(v());
    else if (a === '--dir') o.dir = v();
    else if (a === '--db') o.dbs = v().split(',').filter(Boolean);
    else fail(`unknown argument ${a} (usage: bird-fullsize.ts [--scale F] [--seed N] [--dir DIR] [--db a,b])`);
  }
  const t0 = performance.now();
  const { root, manifest } = await generateFullsize(o);
  const total = Object.values(manifest.databases).reduce((s, d) => s + d.bytes, 0);
  process.stdout.write(
    JSON.stringify({ root, generated_bytes: total, ms: Math.round(performance.now() - t0), manifest }, null, 1) + '\n',
  );
}
function fail(msg: string): never {
  process.stderr.write(`bird-fullsize: ${msg}\n`);
  process.exit(2);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
