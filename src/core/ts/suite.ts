/**
 * A database's distilled test suite (docs/test-suite.md): sample the original once, generate
 * `candidates` derived databases from the seed, run every gold and its near-miss variants on
 * each, keep `size` of them by greedy set cover. Pure: SQLite is reached through the ports
 * below (the SQL worker gives sql.js). Only one candidate is open at a time; the others are
 * held as their exported bytes (a few KiB to a few hundred KiB each), and the original is read
 * by the sample only, so a BIRD-sized database is never copied.
 */
import { executionMatch } from '../compare/ex.ts';
import type { SqlValue } from '../types.ts';
import { distill } from './distill.ts';
import { generateDatabase, sampleDatabase } from './generate.ts';
import { readSchema, type SqlConn } from './schema.ts';
import { comparedLiterals, goldVariants } from './variants.ts';
import { WorkbenchError, CancelledError } from '../errors.ts';

export interface SuiteSpec {
  seed: number;
  /** Databases kept in the suite. */
  size: number;
  /** Candidate databases generated before distillation. */
  candidates: number;
  /** Rows per table of a derived database, at most. */
  maxRows: number;
  /** Rows sampled from each table of the original, at most. */
  sampleRows: number;
}

export const DEFAULT_SUITE_SPEC: SuiteSpec = { seed: 1, size: 8, candidates: 20, maxRows: 60, sampleRows: 200 };

export function checkSuiteSpec(spec: SuiteSpec, where: string): void {
  for (const k of ['size', 'candidates', 'maxRows', 'sampleRows'] as const) {
    if (!Number.isInteger(spec[k]) || spec[k] < 1)
      throw new WorkbenchError('BAD_OPTION', `test-suite ${k} must be a positive integer, got ${spec[k]}`, where);
  }
  if (!Number.isInteger(spec.seed) || spec.seed < 0 || spec.seed > 0xffffffff) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `test-suite seed must be an integer from 0 to 4294967295, got ${spec.seed}`,
      where,
    );
  }
  if (spec.size > spec.candidates)
    throw new WorkbenchError(
      'BAD_OPTION',
      `test-suite size (${spec.size}) cannot exceed its candidates (${spec.candidates})`,
      where,
    );
}

/** One derived database, open. */
export interface SuiteDbHandle extends SqlConn {
  export(): Uint8Array;
  close(): void;
}

interface SuitePorts {
  /** The original database (read by the sample only). */
  original: SqlConn;
  /** An empty in-memory database. */
  newDb(): SuiteDbHandle;
  /** Runs one query under the evaluator's statement rules: its rows, or null when it fails. */
  query(db: SuiteDbHandle, sql: string): SqlValue[][] | null;
  onProgress?(done: number, total: number): void;
  /** Checked between candidates: true stops the build with an error. */
  cancelled?(): boolean;
}

export interface SuiteStats {
  golds: number;
  variants: number;
  /** (gold, variant) pairs some candidate tells apart, and those the kept suite tells apart. */
  distinguishable: number;
  covered: number;
  /** Databases kept by the set cover (the rest topped the suite up to its size). */
  byCover: number;
  bytes: number;
  ms: number;
  /**
   * Why this suite cannot tell queries apart, when it cannot: every table of the original is
   * empty (so is every suite database), or no candidate distinguishes any gold from its variants.
   */
  warning?: string;
}

/** The suite's warning (SuiteStats.warning), or undefined. */
function suiteWarning(
  sample: ReadonlyMap<string, readonly unknown[]>,
  golds: number,
  distinguishable: number,
): string | undefined {
  const tables = [...sample.values()];
  if (tables.length > 0 && tables.every((rows) => rows.length === 0)) {
    return `every table of the database is empty (${tables.length}), so is every suite database: the suite tells no query apart, and TS equals EX here`;
  }
  if (golds > 0 && distinguishable === 0) {
    return 'no suite database tells any gold from its near-miss variants: the suite adds nothing to EX here';
  }
  return undefined;
}

export interface BuiltSuite {
  spec: SuiteSpec;
  /** Candidate numbers kept (each is regenerated from the seed alone). */
  chosen: number[];
  dbs: Uint8Array[];
  stats: SuiteStats;
}

export function buildSuite(
  golds: readonly string[],
  spec: SuiteSpec,
  ports: SuitePorts,
  now: () => number = () => Date.now(),
): BuiltSuite {
  const t0 = now();
  const schema = readSchema(ports.original);
  const sample = sampleDatabase(ports.original, schema, spec.seed, spec.sampleRows);
  const unique = [...new Set(golds)].sort();
  const literals = new Map<string, Array<number | string>>();
  for (const g of unique) {
    for (const [col, vs] of comparedLiterals(g)) {
      const list = literals.get(col) ?? [];
      for (const v of vs) if (!list.includes(v)) list.push(v);
      literals.set(col, list);
    }
  }
  const variants = unique.map((g) => goldVariants(g).map((v) => v.sql));
  const bytes: Uint8Array[] = [];
  const distinguishes: Array<Set<number>> = [];
  for (let c = 0; c < spec.candidates; c++) {
    if (ports.cancelled?.()) throw new CancelledError('test-suite build cancelled');
    const db = ports.newDb();
    const found = new Set<number>();
    try {
      generateDatabase(db, schema, sample, literals, spec.seed, c, { maxRows: spec.maxRows });
      let pair = 0;
      unique.forEach((g, gi) => {
        const gold = ports.query(db, g);
        for (const v of variants[gi]!) {
          const id = pair++;
          if (gold === null) continue;
          const res = ports.query(db, v);
          if (res !== null && executionMatch(res, gold) === 0) found.add(id);
        }
      });
      bytes.push(db.export());
    } finally {
      db.close();
    }
    distinguishes.push(found);
    ports.onProgress?.(c + 1, spec.candidates);
  }
  const d = distill({ distinguishes, size: spec.size });
  const dbs = d.chosen.map((c) => bytes[c]!);
  const warning = suiteWarning(sample, unique.length, d.distinguishable);
  return {
    spec: { ...spec },
    chosen: d.chosen,
    dbs,
    stats: {
      golds: unique.length,
      variants: variants.reduce((a, v) => a + v.length, 0),
      distinguishable: d.distinguishable,
      covered: d.covered,
      byCover: d.byCover,
      bytes: dbs.reduce((a, b) => a + b.length, 0),
      ms: now() - t0,
      ...(warning ? { warning } : {}),
    },
  };
}

/** The key a built suite is cached under: the database and every setting that changes its bytes. */
export function suiteKey(dbId: string, spec: SuiteSpec): string {
  return `${dbId}\u0000${spec.seed}/${spec.size}/${spec.candidates}/${spec.maxRows}/${spec.sampleRows}`;
}

/**
 * Port: where built suites are kept between workers and runs (memory in the CLI; IndexedDB in
 * the app, src/adapters/store/suite-cache.ts, keyed by the database file's sha256).
 */
export interface SuiteCache {
  get(dbId: string, spec: SuiteSpec): Promise<BuiltSuite | null>;
  put(dbId: string, spec: SuiteSpec, suite: BuiltSuite): Promise<void>;
}

export function memorySuiteCache(): SuiteCache {
  const m = new Map<string, BuiltSuite>();
  return {
    get: async (dbId, spec) => m.get(suiteKey(dbId, spec)) ?? null,
    put: async (dbId, spec, s) => void m.set(suiteKey(dbId, spec), s),
  };
}
