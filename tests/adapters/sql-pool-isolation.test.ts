/**
 * On real data, in the Node pool (worker threads, real sql.js): the gpt-4o mini-dev
 * predictions on the three BIRD databases here, with hostile predictions run first on the same
 * workers. Every other item's verdict must be the one it gets alone, at 1 and at 2 workers,
 * official and --read-only (before the fix, `PRAGMA hard_heap_limit = 200000` took EX from
 * 77.14 to 33.57).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS, type EvalEvent, type EvalOptions } from '../../src/core/eval/executor.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { planReplay, runEvaluation } from '../../src/core/run/replay.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { VERDICT_FIELDS, verdictsBesideTimeouts } from '../helpers/item-results.ts';
import { readSharedText, sharedData } from '../helpers/shared-data.ts';

const DBS = ['superhero', 'student_club', 'toxicology'];
/** The verdict fields compared here: all but the sample number and Soft-F1. */
const VERDICT = VERDICT_FIELDS.filter((f) => f !== 'sample' && f !== 'softF1');

function gpt4oItems(): EvalItem[] {
  const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold.sql');
  const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'q.json');
  const name = 'predict_mini_dev_gpt-4-o_cot_SQLite.json';
  const plan = planReplay({
    predictions: { name, text: readSharedText('bird', 'predictions', 'TA_output', name) },
    gold,
    questions,
  });
  return plan.items.filter((it) => DBS.includes(it.dbId));
}

/** Hostile predictions, each as its own item, placed before a database's items (index 10000 + k). */
function hostile(items: readonly EvalItem[], sqls: readonly string[]): EvalItem[] {
  const out: EvalItem[] = [];
  let k = 0;
  for (const db of DBS) {
    const first = items.find((it) => it.dbId === db)!;
    for (const predSql of sqls) {
      out.push({ ...first, index: 10_000 + k, questionId: 10_000 + k, predSql, sample: 0 });
      k++;
    }
  }
  return out;
}

const PRAGMAS = [
  'PRAGMA hard_heap_limit = 200000',
  'PRAGMA soft_heap_limit = 100000',
  'PRAGMA main.temp_store = FILE',
  'PRAGMA journal_mode = OFF',
  'PRAGMA max_page_count = 1',
  'PRAGMA cache_size = 1',
  'PRAGMA threads = 8',
  'PRAGMA mmap_size = 1000000',
  'PRAGMA locking_mode = EXCLUSIVE',
  'PRAGMA query_only = 1',
  'PRAGMA writable_schema = 1',
  'PRAGMA foreign_keys = 1',
  'PRAGMA recursive_triggers = 1',
  'PRAGMA case_sensitive_like = 1',
  'PRAGMA reverse_unordered_selects = 1',
  'PRAGMA ignore_check_constraints = 1',
  'PRAGMA automatic_index = 0',
  'PRAGMA short_column_names = 0',
  'PRAGMA full_column_names = 1',
  'PRAGMA legacy_alter_table = 1',
  'PRAGMA trusted_schema = 0',
  'PRAGMA "hard_heap_limit"(300000)',
  // SQLite applies a PRAGMA's setting while preparing: EXPLAIN does not stop it.
  'EXPLAIN PRAGMA hard_heap_limit = 200000',
  'EXPLAIN QUERY PLAN PRAGMA soft_heap_limit = 100000',
  'EXPLAIN /* x */ PRAGMA temp_store = FILE',
];

const rows = (n: number) =>
  `(WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < ${n}) SELECT v FROM c)`;
const MEMORY = [
  `CREATE TABLE big AS SELECT randomblob(1000) AS b FROM ${rows(1_500_000)}`,
  `SELECT count(*) FROM (SELECT randomblob(1000) AS b FROM ${rows(1_500_000)} ORDER BY b)`,
  `CREATE TEMP TABLE big AS SELECT randomblob(1000) AS b FROM ${rows(1_500_000)}`,
];

const pools: SqlPool[] = [];
afterAll(async () => {
  for (const p of pools) await p.dispose();
});
const poolOf = (workers: number) => {
  const p = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers });
  pools.push(p);
  return p;
};

/**
 * The reference: the 140 real items alone (nothing hostile before them), run once for the file
 * by options (official, --read-only, ...) on a pool of its own and shared by the tests that
 * compare with it.
 */
const aloneRuns = new Map<string, ReturnType<typeof runEvaluation>>();
function alone(real: EvalItem[], options: EvalOptions) {
  const key = JSON.stringify(options);
  let run = aloneRuns.get(key);
  if (!run) {
    run = runEvaluation(real, options, { executor: poolOf(2) });
    aloneRuns.set(key, run);
  }
  return run;
}

/** Runs `items` (hostile first) and compares the real items' verdicts with theirs alone. */
async function compare(
  pool: SqlPool,
  real: EvalItem[],
  before: EvalItem[],
  options: EvalOptions,
  events: EvalEvent[] = [],
) {
  const mixed = await runEvaluation([...before, ...real], options, {
    executor: pool,
    onEvent: (e) => void events.push(e),
  });
  const hostileResults = mixed.results.filter((r) => r.index >= 10_000);
  const realResults = mixed.results.filter((r) => r.index < 10_000);
  const reference = await alone(real, options);
  const { slow, ...verdicts } = verdictsBesideTimeouts(realResults, reference.results, VERDICT);
  expect(slow).toBeLessThanOrEqual(2);
  expect(verdicts.a).toEqual(verdicts.b);
  const ex = (rs: ItemResult[]) => (rs.reduce((a, r) => a + r.ex, 0) / rs.length) * 100;
  return { hostileResults, exAlone: ex(reference.results), exMixed: ex(realResults) };
}

describe('a hostile PRAGMA never changes another item (gpt-4o, mini-dev, 140 items)', () => {
  const real = gpt4oItems();
  it.each([
    [1, false],
    [2, false],
    [1, true],
    [2, true],
  ] as const)(
    'at %i worker(s), read-only %s: every other verdict unchanged',
    async (workers, readOnly) => {
      expect(real).toHaveLength(140);
      const { hostileResults, exAlone, exMixed } = await compare(poolOf(workers), real, hostile(real, PRAGMAS), {
        ...DEFAULT_EVAL_OPTIONS,
        readOnly,
      });
      expect(exMixed).toBe(exAlone);
      if (!readOnly) expect(exAlone.toFixed(2)).toBe('77.14');
      // The PRAGMAs a re-open cannot undo are refused, naming themselves.
      const byPred = new Map(hostileResults.map((r, i) => [hostile(real, PRAGMAS)[i]!.predSql, r]));
      for (const p of [
        'PRAGMA hard_heap_limit = 200000',
        'PRAGMA soft_heap_limit = 100000',
        'PRAGMA main.temp_store = FILE',
        'PRAGMA "hard_heap_limit"(300000)',
        'EXPLAIN PRAGMA hard_heap_limit = 200000',
        'EXPLAIN QUERY PLAN PRAGMA soft_heap_limit = 100000',
        'EXPLAIN /* x */ PRAGMA temp_store = FILE',
      ]) {
        expect(byPred.get(p)!.error).toMatch(
          /^prediction: PRAGMA (hard_heap_limit|soft_heap_limit|temp_store) changes /,
        );
      }
      console.log(
        `${workers} worker(s)${readOnly ? ', read-only' : ''}: EX ${exMixed.toFixed(2)} after ${hostileResults.length} hostile PRAGMAs (${exAlone.toFixed(2)} alone)`,
      );
    },
    600_000,
  );

  it.each([false, true])(
    'EXPLAIN PRAGMA hard_heap_limit as one student_club prediction among the 140, 1 worker, read-only %s: every other verdict unchanged',
    async (readOnly) => {
      // Before the refusal saw through EXPLAIN, every later student_club item ran
      // "out of memory" (EX 77.14 -> 52.14), under --read-only too.
      const options = { ...DEFAULT_EVAL_OPTIONS, readOnly };
      const pool = poolOf(1);
      const at = real.findIndex((it) => it.dbId === 'student_club');
      const spoiled = real.map((it, i) =>
        i === at ? { ...it, predSql: 'EXPLAIN /* x */ PRAGMA hard_heap_limit = 200000' } : it,
      );
      const mixed = await runEvaluation(spoiled, options, { executor: pool });
      const reference = await alone(real, options);
      expect(mixed.results[at]!.error).toMatch(
        /^prediction: PRAGMA hard_heap_limit changes the state of the whole SQL worker/,
      );
      const others = (rs: readonly ItemResult[]) => rs.filter((_, i) => i !== at);
      const { slow, ...verdicts } = verdictsBesideTimeouts(others(mixed.results), others(reference.results), VERDICT);
      expect(slow).toBeLessThanOrEqual(2);
      expect(verdicts.a).toEqual(verdicts.b);
      const ex = (rs: readonly ItemResult[]) => ((rs.reduce((a, r) => a + r.ex, 0) / rs.length) * 100).toFixed(2);
      console.log(
        `EXPLAIN PRAGMA among the 140, read-only ${readOnly}: EX ${ex(mixed.results)} (${ex(reference.results)} alone)`,
      );
    },
    600_000,
  );

  it('a gold that sets a refused PRAGMA is a gold error (what gold-check reports)', async () => {
    const item = { ...real[0]!, goldSql: 'PRAGMA hard_heap_limit = 200000' };
    const [r] = (await runEvaluation([item], DEFAULT_EVAL_OPTIONS, { executor: poolOf(1) })).results;
    expect(r!.status).toBe('error');
    expect(r!.error).toMatch(/^gold: PRAGMA hard_heap_limit changes the state of the whole SQL worker/);
  }, 120_000);
});

describe("memory-hungry predictions end at the worker's bounds; the worker is replaced; the rest is unchanged", () => {
  it('CREATE TABLE ... randomblob x 1.5M, a 1.5 GB sort, a 1.5 GB TEMP table, before the 140 items at 1 worker', async () => {
    const real = gpt4oItems();
    const events: EvalEvent[] = [];
    // A timeout no load reaches: each statement must end at the worker's bound, never at the
    // clock (under load the official 30 s came first and made it a timeout).
    const { hostileResults, exMixed } = await compare(
      poolOf(1),
      real,
      hostile(real, MEMORY),
      { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 600_000 },
      events,
    );
    expect(hostileResults).toHaveLength(9);
    for (const r of hostileResults) {
      expect(r.status).toBe('error');
      expect(r.error).toMatch(
        /^prediction: (out of memory: over the worker's 512 MiB SQLite heap budget|database or disk is full: the write grew the database by more than the worker's 64 MiB write budget)/,
      );
    }
    const restarts = events.filter((e) => e.type === 'worker-restarted');
    expect(restarts.length).toBeGreaterThanOrEqual(9);
    expect(exMixed.toFixed(2)).toBe('77.14');
  }, 1_800_000);
});

describe('reuse and TEMP shadows on real data', () => {
  it('64 samples of a quoted "random"() are all executed (none copies the first verdict)', async () => {
    const base = gpt4oItems()[0]!;
    const items = Array.from({ length: 64 }, (_, s) => ({
      ...base,
      predSql: 'SELECT "random"() % 2 = 0',
      goldSql: 'SELECT 1',
      sample: s,
    }));
    const out = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: poolOf(1) });
    expect(out).toMatchObject({ executed: 64, reused: 0 });
    const wins = out.results.filter((r) => r.ex === 1).length;
    expect(wins).toBeGreaterThan(0);
    expect(wins).toBeLessThan(64);
    console.log(`"random"() x 64: EX ${(wins / 64).toFixed(2)}, ${out.executed} executed`);
  }, 120_000);

  it('CREATE TEMP TABLE superhero shadow: flagged mutated_db on all 52 superhero questions, refused read-only', async () => {
    const items = gpt4oItems()
      .filter((it) => it.dbId === 'superhero')
      .map((it) => ({ ...it, predSql: 'CREATE TEMP TABLE superhero AS SELECT * FROM main.superhero WHERE 0' }));
    expect(items).toHaveLength(52);
    const pool = poolOf(1);
    const official = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: pool });
    expect(official.results.every((r) => r.mutatedDb)).toBe(true);
    const won = official.results.filter((r) => r.ex === 1).length;
    expect(won).toBe(29);
    const ro = await runEvaluation(items, { ...DEFAULT_EVAL_OPTIONS, readOnly: true }, { executor: pool });
    expect(ro.results.filter((r) => r.ex === 1)).toHaveLength(0);
    console.log(`TEMP shadow on superhero: EX 1 on ${won} of 52, all flagged mutated_db; read-only: 0 won`);
  }, 300_000);
});
