/**
 * The verdict cache's property: whatever the database went through, whatever the SQL text and
 * whatever the settings, a run with the cache gives every item the verdict a run without it
 * gives. 2,000 generated sequences on temp copies of mini-dev's three small real databases
 * (student_club, superhero, toxicology), in 10 rounds of 200. Each sequence is:
 * - a database change, made before its round: none; some rows of a column a gold query reads
 *   updated (better-sqlite3); other bytes of the same size under the same mtime; committed
 *   frames left in the `-wal` (a connection held open for the round, the main file as an earlier
 *   round hashed it); the original bytes back;
 * - 2 or 3 SQL texts: mini-dev's gold of that database, or another question's, as it is or
 *   perturbed (whitespace of every kind around it incl. \v, U+00A0, U+3000, a `;`, comments, a
 *   changed literal, case, a date/time function in a condition that stays true, random(), an
 *   unknown function, a deterministic function, a write); two perturbations some of the time;
 *   a few sequences of endless recursive queries under a 200 ms timeout (both sides time out
 *   whatever the load); about a third of the sequences replay an earlier round's texts and
 *   settings on the changed database;
 * - settings: timeout, `--read-only`, Soft-F1, Spider's or BIRD's EX rule.
 * A round's sequences with the same settings run as one batch, the way the CLI's `eval` runs:
 * the recipe (scoreRun) over the real Node pool (2 workers) with the verdict cache of
 * `--cache DIR` (openEvalCache: the SQLite file store, each database hashed as it is now) twice,
 * then with `--no-cache` and no reuse (every item executed on its own). Every verdict field
 * (EX, Soft-F1, status, error text, row and column counts, result key) must be equal, and
 * nothing the cache must never answer (a non-deterministic or unknown function, a write, a
 * timeout, a database with a pending `-wal`) may come from it. One cache folder for all rounds,
 * so every earlier sequence's verdicts are there to be served wrongly.
 *
 * Seeded (src/core/util/rng.ts): the seed is in the test's name; VERDICT_PROPERTY_SEED=<n>
 * runs another. A failure lists each mismatch with its seed, round, sequence, database change,
 * settings and texts.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { createNodeHost } from '../../src/adapters/node/node-host.ts';
import { openEvalCache } from '../../src/cli/commands/eval-cache.ts';
import { OFFICIAL_VES_ITERATIONS } from '../../src/core/eval/constants.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { scoreRun } from '../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../src/core/run/types.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import { mulberry32, randomIndex, type Rng } from '../../src/core/util/rng.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { NativeDatabase, type NativeDb } from '../helpers/native-sqlite.ts';
import { minidevQuestions, readSharedText, sharedData } from '../helpers/shared-data.ts';

const SEED = Number(process.env.VERDICT_PROPERTY_SEED ?? 39_2000);
const SEQUENCES = 2000;
const ROUNDS = 10;
/** Sequences whose every item is an endless query, under ENDLESS_TIMEOUT_MS (one in each of the first rounds). */
const ENDLESS_SEQUENCES = 5;
const ENDLESS_TIMEOUT_MS = 200;
const DBS = ['student_club', 'superhero', 'toxicology'] as const;
type DbId = (typeof DBS)[number];
/** Every database file keeps this modification time (whole seconds, so utimes gives it back exactly). */
const FIXED_MTIME = 1_700_000_000;

/** What a sequence's database went through before its items ran. */
const CHANGES = ['none', 'update', 'same-size-mtime', 'wal', 'restore'] as const;
type Change = (typeof CHANGES)[number];

interface Settings {
  timeoutMs: number;
  readOnly: boolean;
  softF1: boolean;
  exRule: 'bird' | 'spider';
}

interface GenItem {
  questionId: number;
  difficulty: EvalItem['difficulty'];
  goldSql: string;
  predSql: string;
  /** How the prediction was made (for the failure report and the mix). */
  kind: string;
  /** SQL the cache must never answer: not deterministic, unknown function, a write, endless. */
  neverCached: boolean;
}

interface Sequence {
  id: number;
  round: number;
  db: DbId;
  settings: Settings;
  items: GenItem[];
  /** The earlier sequence whose texts and settings this one runs again. */
  replayOf?: number;
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[randomIndex(rng, xs.length)]!;
const chance = (rng: Rng, p: number) => rng.next() < p;

// ---------------------------------------------------------------- the real gold texts

interface Gold {
  questionId: number;
  difficulty: EvalItem['difficulty'];
  sql: string;
}

/**
 * Gold questions left out for time alone: each takes 60 ms to 1 s in sql.js (most of the three
 * databases' 140 take under 30 ms), and together they would cost most of the test's time.
 */
const SLOW_QUESTIONS = new Set([197, 198, 201, 207, 215, 234, 247, 248, 253, 263, 730, 738, 1362]);

function goldsByDb(): Record<DbId, Gold[]> {
  const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'mini_dev_sqlite_gold.sql');
  const questions = minidevQuestions();
  const out = { student_club: [], superhero: [], toxicology: [] } as Record<DbId, Gold[]>;
  gold.forEach((g, i) => {
    const q = questions[i]!;
    if (!(DBS as readonly string[]).includes(g.dbId) || SLOW_QUESTIONS.has(q.question_id)) return;
    out[g.dbId as DbId].push({
      questionId: q.question_id,
      difficulty: (q.difficulty ?? 'unknown') as EvalItem['difficulty'],
      sql: g.sql,
    });
  });
  return out;
}

// ---------------------------------------------------------------- SQL texts

/** Whitespace of every kind: SQLite's own (space \t \n \f \r), and what it does not skip (\v, U+00A0, U+3000, ...). */
const SPACES = [' ', '\t', '\n', '\r', '\f', '\v', '\u00a0', '\u3000', '\u2003', '\u2028', '\u0085', '\ufeff'];
const spaces = (rng: Rng) => Array.from({ length: 1 + randomIndex(rng, 3) }, () => pick(rng, SPACES)).join('');
/** The gold without what ends it (a `;`, whitespace), to be wrapped in a query. */
const bare = (sql: string) => sql.replace(/[\s;]+$/, '');

/** A condition whose value never changes in the test's lifetime, from a function whose value may (never cached). */
const CLOCK_CONDITIONS = [
  "strftime('%S') BETWEEN '00' AND '60'",
  "strftime('%Y-%m-%d') > '2000-01-01'",
  "date('now') > '2000-01-01'",
  "datetime('now', 'localtime') IS NOT NULL",
  "julianday('2024-01-01') > 2400000",
  'unixepoch() > 0',
  "time('now') IS NOT NULL",
  'CURRENT_TIMESTAMP IS NOT NULL',
  'CURRENT_DATE > 0',
];
const DETERMINISTIC_CONDITIONS = ['abs(-1) = 1', "length('abc') = 3", "upper('a') = 'A'", 'coalesce(NULL, 1) = 1'];

/** A literal of `sql` changed: a number (not part of a name) or a string's text. */
function changeLiteral(rng: Rng, sql: string): string {
  const numbers = [...sql.matchAll(/(?<![\w.'])\d+(?![\w.'])/g)];
  const strings = [...sql.matchAll(/'(?:[^']|'')*'/g)];
  const all = [...numbers.map((m) => ['n', m] as const), ...strings.map((m) => ['s', m] as const)];
  if (all.length === 0) return `${bare(sql)} LIMIT 1`;
  const [kind, m] = pick(rng, all);
  const at = m.index!;
  const text = m[0];
  const changed =
    kind === 'n'
      ? String(Number(text) + pick(rng, [1, -1, 10]))
      : pick(rng, [`'${text.slice(1, -1).toLowerCase()}'`, `'${text.slice(1, -1)}x'`, "''", `'${text.slice(2)}`]);
  return sql.slice(0, at) + changed + sql.slice(at + text.length);
}

function perturb(rng: Rng, sql: string, tables: readonly Table[]): { sql: string; kind: string; neverCached: boolean } {
  switch (
    pick(rng, [
      'space',
      'space',
      'semicolon',
      'comment',
      'literal',
      'literal',
      'case',
      'clock',
      'random',
      'unknown-fn',
      'deterministic-fn',
      'write',
    ] as const)
  ) {
    case 'space': {
      const where = randomIndex(rng, 3);
      return {
        sql: `${where !== 1 ? spaces(rng) : ''}${sql}${where !== 0 ? spaces(rng) : ''}`,
        kind: 'space',
        neverCached: false,
      };
    }
    case 'semicolon':
      return {
        sql: bare(sql) + pick(rng, [';', ' ;', ';;', '; ', ';\n', `;${pick(rng, SPACES)}`, '; SELECT 1']),
        kind: 'semicolon',
        neverCached: false,
      };
    case 'comment':
      return {
        sql: pick(rng, [
          `/* c */ ${sql}`,
          `-- c\n${sql}`,
          `${bare(sql)} -- c`,
          `${bare(sql)} /* c */`,
          `${bare(sql)} -- c ${pick(rng, SPACES)}`,
          `${bare(sql)} /* unterminated`,
        ]),
        kind: 'comment',
        neverCached: false,
      };
    case 'literal':
      return { sql: changeLiteral(rng, sql), kind: 'literal', neverCached: false };
    case 'case':
      return {
        sql: sql.replace(/\b(SELECT|FROM|WHERE|AND|select|from|where|and)\b/g, (w) =>
          w === w.toUpperCase() ? w.toLowerCase() : w.toUpperCase(),
        ),
        kind: 'case',
        neverCached: false,
      };
    case 'clock':
      return {
        sql: `SELECT * FROM (${bare(sql)}) WHERE ${pick(rng, CLOCK_CONDITIONS)}`,
        kind: 'clock',
        neverCached: true,
      };
    case 'random':
      return {
        sql: `SELECT * FROM (${bare(sql)}) WHERE ${pick(rng, ['random() IS NOT NULL', 'length(randomblob(2)) = 2'])}`,
        kind: 'random',
        neverCached: true,
      };
    case 'unknown-fn':
      return { sql: `SELECT * FROM (${bare(sql)}) WHERE no_such_fn(1) = 1`, kind: 'unknown-fn', neverCached: true };
    case 'deterministic-fn':
      return {
        sql: `SELECT * FROM (${bare(sql)}) WHERE ${pick(rng, DETERMINISTIC_CONDITIONS)}`,
        kind: 'deterministic-fn',
        neverCached: false,
      };
    case 'write': {
      const t = pick(rng, tables);
      const c = pick(rng, t.columns);
      return {
        sql: pick(rng, [
          `DELETE FROM "${t.name}" WHERE rowid % 3 = 0`,
          `UPDATE "${t.name}" SET "${c}" = NULL WHERE rowid % 2 = 0`,
          `DELETE FROM "${t.name}"`,
        ]),
        kind: 'write',
        neverCached: true,
      };
    }
  }
}

/** A query SQLite never finishes (no bound on the recursion), so it times out on both sides whatever the load. */
const endless = (rng: Rng) =>
  `WITH RECURSIVE c(x) AS (SELECT ${randomIndex(rng, 1000)} UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`;

function makeItem(rng: Rng, golds: readonly Gold[], tables: readonly Table[]): GenItem {
  const g = pick(rng, golds);
  // Sometimes the gold text itself is not clean (its key is its text, as given).
  const goldSql = chance(rng, 0.1) ? g.sql + pick(rng, [' ', ';', '\n', '\u00a0']) : g.sql;
  const base = chance(rng, 0.2) ? pick(rng, golds).sql : g.sql;
  const item = { questionId: g.questionId, difficulty: g.difficulty, goldSql };
  const r = randomIndex(rng, 10);
  if (r < 2) return { ...item, predSql: base, kind: base === g.sql ? 'gold' : 'other-gold', neverCached: false };
  let p = perturb(rng, base, tables);
  // Two perturbations, some of the time (a changed literal with a trailing U+00A0, ...); never
  // after a comment, which could swallow what the second adds (a random() in a comment is no call).
  if (r < 4 && p.kind !== 'write' && p.kind !== 'comment') {
    const q = perturb(rng, p.sql, tables);
    if (q.kind !== 'write')
      p = { sql: q.sql, kind: `${p.kind}+${q.kind}`, neverCached: p.neverCached || q.neverCached };
  }
  return { ...item, predSql: p.sql, kind: p.kind, neverCached: p.neverCached };
}

const SETTINGS: Settings[] = [15_000, 30_000].flatMap((timeoutMs) =>
  [false, true].flatMap((readOnly) =>
    [false, true].flatMap((softF1) =>
      (['bird', 'spider'] as const).map((exRule) => ({ timeoutMs, readOnly, softF1, exRule })),
    ),
  ),
);
const settingsKey = (s: Settings) => `${s.timeoutMs}/${s.readOnly ? 'ro' : 'rw'}/${s.softF1 ? 'f1' : '-'}/${s.exRule}`;

/** Settings a round's sequences draw from: half of them, a different half each round. */
const SETTINGS_PER_ROUND = 8;
/** How often a sequence replays an earlier round's sequence on the same database (its texts and settings), after the database changed. */
const REPLAY = 0.35;

function generate(rng: Rng, golds: Record<DbId, Gold[]>, tables: Record<DbId, Table[]>): Sequence[] {
  const sequences: Sequence[] = [];
  const earlier: Sequence[] = [];
  let settings: Settings[] = [];
  for (let id = 0; id < SEQUENCES; id++) {
    const round = Math.floor((id * ROUNDS) / SEQUENCES);
    const db = pick(rng, DBS);
    const first = id === Math.ceil((round * SEQUENCES) / ROUNDS);
    if (first) {
      earlier.push(...sequences.filter((s) => s.round === round - 1 && s.items[0]!.kind !== 'endless'));
      const all = [...SETTINGS];
      settings = Array.from({ length: SETTINGS_PER_ROUND }, () => all.splice(randomIndex(rng, all.length), 1)[0]!);
    }
    if (first && round < ENDLESS_SEQUENCES) {
      sequences.push({
        id,
        round,
        db,
        settings: { ...pick(rng, SETTINGS), timeoutMs: ENDLESS_TIMEOUT_MS },
        items: Array.from({ length: 2 }, () => {
          const g = pick(rng, golds[db]);
          return {
            questionId: g.questionId,
            difficulty: g.difficulty,
            goldSql: g.sql,
            predSql: endless(rng),
            kind: 'endless',
            neverCached: true,
          };
        }),
      });
      continue;
    }
    const replayable = earlier.filter((s) => s.db === db && settings.includes(s.settings));
    if (replayable.length > 0 && chance(rng, REPLAY)) {
      const old = pick(rng, replayable);
      sequences.push({ id, round, db, settings: old.settings, items: old.items, replayOf: old.id });
      continue;
    }
    const n = chance(rng, 0.25) ? 3 : 2;
    sequences.push({
      id,
      round,
      db,
      settings: pick(rng, settings),
      items: Array.from({ length: n }, () => makeItem(rng, golds[db], tables[db])),
    });
  }
  return sequences;
}

// ---------------------------------------------------------------- database changes

interface Table {
  name: string;
  columns: string[];
  /** Its columns some gold query of the database names: the ones a change is made to. */
  read: string[];
}

function tablesOf(file: string, golds: readonly Gold[]): Table[] {
  const named = (c: string) => golds.some((g) => g.sql.toLowerCase().includes(c.toLowerCase()));
  const db = new NativeDatabase(file);
  try {
    const names = (
      db
        .prepare(
          "SELECT group_concat(name, char(1)) AS n FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )
        .get() as {
        n: string;
      }
    ).n.split('\u0001');
    return names
      .map((name) => {
        const columns = (db.pragma(`table_info("${name}")`) as Array<{ name: string; pk: number }>)
          .filter((c) => c.pk === 0)
          .map((c) => c.name);
        return { name, columns, read: columns.filter(named) };
      })
      .filter((t) => t.columns.length > 0);
  } finally {
    db.close();
  }
}

/**
 * Some rows of a column a gold query names changed (an integer plus one, a real doubled, a text's
 * case swapped): results change, the file's size mostly not.
 */
function updateSomeRows(rng: Rng, db: NativeDb, tables: readonly Table[]): string {
  db.pragma('foreign_keys = OFF');
  const read = tables.filter((t) => t.read.length > 0);
  for (let attempt = 0; attempt < 100; attempt++) {
    const t = pick(rng, read);
    const c = pick(rng, t.read);
    const m = 2 + randomIndex(rng, 5);
    const k = randomIndex(rng, m);
    const changed =
      `CASE WHEN typeof("${c}") = 'integer' THEN "${c}" + 1 WHEN typeof("${c}") = 'real' THEN "${c}" * 2 ` +
      `WHEN "${c}" = upper("${c}") THEN lower("${c}") ELSE upper("${c}") END`;
    // Only rows whose value the change changes (a text without letters keeps its case).
    const where = `rowid % ${m} = ${k} AND typeof("${c}") IN ('integer', 'real', 'text') AND ${changed} IS NOT "${c}"`;
    const n = (db.prepare(`SELECT count(*) AS n FROM "${t.name}" WHERE ${where}`).get() as { n: number }).n;
    if (n === 0) continue;
    const sql = `UPDATE "${t.name}" SET "${c}" = ${changed} WHERE ${where}`;
    try {
      db.exec(sql);
      return sql;
    } catch {
      // a constraint (UNIQUE, CHECK): another column
    }
  }
  return 'no row changed';
}

/** updateSomeRows on `file`, through a connection closed after it (the -wal checkpointed into the file). */
function updateFile(rng: Rng, file: string, tables: readonly Table[]): string {
  const db = new NativeDatabase(file);
  try {
    return updateSomeRows(rng, db, tables);
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- one run, as the CLI runs it

const FIELDS = [
  'index',
  'sample',
  'ex',
  'softF1',
  'status',
  'error',
  'mutatedDb',
  'predRowCount',
  'goldRowCount',
  'resultKey',
  'predColumnCount',
  'goldColumnCount',
] as const satisfies ReadonlyArray<keyof ItemResult>;
const verdict = (r: ItemResult) => FIELDS.map((f) => r[f] ?? null);

const configOf = (s: Settings): RunConfig => ({
  ...DEFAULT_RUN_CONFIG,
  metrics: s.softF1 ? ['ex', 'soft-f1'] : ['ex'],
  timeoutMs: s.timeoutMs,
  readOnly: s.readOnly,
  vesIterations: OFFICIAL_VES_ITERATIONS,
  ...(s.exRule === 'spider' ? { exRule: 'spider' as const } : {}),
});

/** `eval --cache DIR`: the cache opened for this run (each database hashed once, as it is now), the recipe, the save. */
async function cachedRun(pool: SqlPool, dbRoot: string, cacheDir: string, items: EvalItem[], s: Settings) {
  const cache = await openEvalCache(createNodeHost(), { cache: cacheDir, dbRoot }, 'sql.js property');
  if (!cache) throw new Error(`the cache folder ${cacheDir} could not be opened`);
  const out = await scoreRun(items, configOf(s), { executor: pool, verdictCache: cache.port });
  await cache.save();
  return out;
}

/** `eval --no-cache`, every item executed on its own (no reuse). */
const uncachedRun = (pool: SqlPool, items: EvalItem[], s: Settings) =>
  scoreRun(items, configOf(s), { executor: pool, reuse: false });

// ---------------------------------------------------------------- the property

describe('the verdict cache: a run with it gives every item the verdict a run without it gives', () => {
  it(`2,000 generated (database change, SQL texts, settings) sequences on student_club, superhero and toxicology (seed ${SEED})`, async () => {
    const rng = mulberry32(SEED);
    const work = mkdtempSync(path.join(tmpdir(), 'wb-vprop-'));
    onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    const dbRoot = path.join(work, 'dbs');
    const cacheDir = path.join(work, 'cache');
    const pristine: Record<string, string> = {};
    const fileOf = (db: DbId) => path.join(dbRoot, db, `${db}.sqlite`);
    for (const db of DBS) {
      mkdirSync(path.join(dbRoot, db), { recursive: true });
      copyFileSync(sharedData('bird', 'databases', db, `${db}.sqlite`), fileOf(db));
      // In WAL mode from the start (checkpointed): a later commit left in the -wal leaves the
      // main file exactly as an earlier round hashed it.
      const native = new NativeDatabase(fileOf(db));
      native.pragma('journal_mode = WAL');
      native.close();
      utimesSync(fileOf(db), FIXED_MTIME, FIXED_MTIME);
      pristine[db] = path.join(work, `${db}.pristine`);
      copyFileSync(fileOf(db), pristine[db]);
    }
    const golds = goldsByDb();
    const tables = Object.fromEntries(DBS.map((db) => [db, tablesOf(fileOf(db), golds[db])])) as Record<DbId, Table[]>;
    const sequences = generate(rng, golds, tables);

    // Each database's change in each round: round 0 none, then every kind as often as the rounds allow.
    const changes = Object.fromEntries(
      DBS.map((db) => {
        const list: Change[] = ['none'];
        while (list.length < ROUNDS) {
          const kinds = [...CHANGES];
          while (kinds.length > 0 && list.length < ROUNDS)
            list.push(kinds.splice(randomIndex(rng, kinds.length), 1)[0]!);
        }
        return [db, list];
      }),
    ) as Record<DbId, Change[]>;

    const mismatches: string[] = [];
    const servedWrongly: string[] = [];
    const stats = { items: 0, hitsFirst: 0, hitsSecond: 0, timeouts: 0, errors: 0, ok: 0 };
    const mix = new Map<string, number>();
    const count = (k: string) => mix.set(k, (mix.get(k) ?? 0) + 1);
    /** The uncached verdict of each (db, texts, settings) by round: the database changes must show in some. */
    const truthByText = new Map<string, Set<string>>();
    let sequencesRun = 0;
    const endlessRan: string[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      const held: NativeDb[] = [];
      const described: Record<string, string> = {};
      for (const db of DBS) {
        let change = changes[db][round]!;
        const file = fileOf(db);
        if (change === 'update') described[db] = `update: ${updateFile(rng, file, tables[db])}`;
        else if (change === 'restore') {
          writeFileSync(file, readFileSync(pristine[db]!));
          described[db] = 'restore';
        } else if (change === 'same-size-mtime') {
          // Other bytes, same size, same mtime (what cp -p, rsync -a and tar x leave).
          const before = readFileSync(file);
          const copy = path.join(work, `${db}.other`);
          let what = 'none found';
          for (let attempt = 0; attempt < 10; attempt++) {
            writeFileSync(copy, before);
            const sql = updateFile(rng, copy, tables[db]);
            const after = readFileSync(copy);
            if (after.length === before.length && !after.equals(before)) {
              writeFileSync(file, after);
              what = sql;
              break;
            }
          }
          described[db] = `same size and mtime: ${what}`;
          if (what === 'none found') change = 'none';
        } else if (change === 'wal') {
          // Committed frames in the -wal, the main file untouched: the connection stays open for the round.
          const native = new NativeDatabase(file);
          native.pragma('wal_autocheckpoint = 0');
          held.push(native);
          described[db] = `-wal: ${updateSomeRows(rng, native, tables[db])}`;
        } else described[db] = 'none';
        count(`change ${change}`);
        utimesSync(file, FIXED_MTIME, FIXED_MTIME);
      }
      for (const db of DBS) {
        if (changes[db][round] === 'wal') expect(statSync(`${fileOf(db)}-wal`).size, described[db]).toBeGreaterThan(0);
        else expect(existsSync(`${fileOf(db)}-wal`)).toBe(false);
      }

      const pool = createNodeSqlPool({ dbRoot, workers: 2 });
      try {
        const inRound = sequences.filter((s) => s.round === round);
        const groups = new Map<string, Sequence[]>();
        for (const s of inRound) {
          const k = settingsKey(s.settings);
          groups.set(k, [...(groups.get(k) ?? []), s]);
        }
        for (const group of groups.values()) {
          const settings = group[0]!.settings;
          const owners: Array<{ seq: Sequence; gen: GenItem }> = [];
          const items: EvalItem[] = group.flatMap((seq) =>
            seq.items.map((gen) => {
              const index = owners.length;
              owners.push({ seq, gen });
              return {
                index,
                questionId: gen.questionId,
                dbId: seq.db,
                difficulty: gen.difficulty,
                goldSql: gen.goldSql,
                predSql: gen.predSql,
                extraction: { rule: 'sql-line', thinkStripped: false },
              } satisfies EvalItem;
            }),
          );
          const first = await cachedRun(pool, dbRoot, cacheDir, items, settings);
          const second = await cachedRun(pool, dbRoot, cacheDir, items, settings);
          const truth = await uncachedRun(pool, items, settings);
          expect(truth.fromCache.size).toBe(0);
          stats.items += items.length;
          stats.hitsFirst += first.fromCache.size;
          stats.hitsSecond += second.fromCache.size;
          owners.forEach(({ seq, gen }, i) => {
            const t = truth.results[i]!;
            stats[t.status === 'ok' ? 'ok' : t.status === 'timeout' ? 'timeouts' : 'errors'] += 1;
            // An endless query times out, unless its database is refused first (a pending -wal).
            if (gen.kind === 'endless') endlessRan.push(changes[seq.db][round] === 'wal' ? 'refused' : t.status);
            count(`item ${gen.kind.split('+').length > 1 ? 'two perturbations' : gen.kind}`);
            if (seq.replayOf !== undefined) count('item replayed after a change');
            const textKey = JSON.stringify([seq.db, gen.goldSql, gen.predSql, settingsKey(settings)]);
            truthByText.set(
              textKey,
              (truthByText.get(textKey) ?? new Set()).add(`${round}:${JSON.stringify(verdict(t).slice(2))}`),
            );
            const at = `seed ${SEED}, round ${round}, sequence ${seq.id} (${seq.db}, ${described[seq.db]}; ${settingsKey(settings)}), item ${i} [${gen.kind}] gold ${JSON.stringify(gen.goldSql)} pred ${JSON.stringify(gen.predSql)}`;
            for (const [name, run] of [
              ['first cached run', first],
              ['second cached run', second],
            ] as const) {
              const got = run.results[i]!;
              if (JSON.stringify(verdict(got)) !== JSON.stringify(verdict(t)))
                mismatches.push(
                  `${at}: ${name} ${JSON.stringify(verdict(got))}, --no-cache ${JSON.stringify(verdict(t))}`,
                );
              const pendingWal = changes[seq.db][round] === 'wal';
              if (run.fromCache.has(i) && (gen.neverCached || pendingWal))
                servedWrongly.push(`${at}: ${name} answered it from the cache`);
            }
          });
        }
        sequencesRun += inRound.length;
      } finally {
        await pool.dispose();
        for (const native of held) native.close();
      }
      for (const db of DBS) {
        expect(existsSync(`${fileOf(db)}-wal`)).toBe(false);
        utimesSync(fileOf(db), FIXED_MTIME, FIXED_MTIME);
      }
    }

    // The database changes decided verdicts: some texts got another verdict in another round.
    const changedByDb = [...truthByText.values()].filter(
      (s) => new Set([...s].map((v) => v.slice(v.indexOf(':') + 1))).size > 1,
    ).length;
    console.log(
      `verdict cache property, seed ${SEED}: ${sequencesRun} sequences, ${stats.items} items x 3 runs; ` +
        `uncached: ${stats.ok} ok, ${stats.errors} errors, ${stats.timeouts} timeouts; ` +
        `answered from the cache: ${stats.hitsFirst} in first runs, ${stats.hitsSecond} in second runs; ` +
        `${changedByDb} texts whose verdict a database change changed\n` +
        [...mix].map(([k, n]) => `  ${k}: ${n}`).join('\n'),
    );
    expect(mismatches.slice(0, 20), `${mismatches.length} mismatch(es)`).toEqual([]);
    expect(servedWrongly.slice(0, 20), `${servedWrongly.length} served wrongly`).toEqual([]);
    expect(sequencesRun).toBe(SEQUENCES);
    // The property is not empty: the cache answered many items, and the databases' changes showed in verdicts.
    expect(stats.hitsSecond).toBeGreaterThan(stats.items / 2);
    expect(endlessRan).toHaveLength(ENDLESS_SEQUENCES * 2);
    expect(endlessRan.filter((s) => s !== 'refused' && s !== 'timeout')).toEqual([]);
    expect(endlessRan).toContain('timeout');
    expect(changedByDb).toBeGreaterThan(0);
    for (const change of CHANGES) expect(mix.get(`change ${change}`), change).toBeGreaterThan(0);
  }, 600_000);
});
