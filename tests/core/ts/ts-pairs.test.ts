/**
 * Metric ts on pairs written for BIRD's real superhero database, through the real pool of
 * worker threads (createNodeSqlPool) and the shared loop (runEvaluation): the suite is distilled
 * on these items' golds, as in a run.
 *
 * Kind A: equal on the original database (EX 1) but semantically different: TS must reject them.
 * Kind B: equivalent queries written differently: TS must accept them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../../src/adapters/sql-pool.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../../src/core/eval/executor.ts';
import { runEvaluation } from '../../../src/core/run/replay.ts';
import { DEFAULT_SUITE_SPEC } from '../../../src/core/ts/suite.ts';
import type { EvalItem, ItemResult } from '../../../src/core/types.ts';
import { sharedData } from '../../helpers/shared-data.ts';

interface Pair {
  name: string;
  pred: string;
  gold: string;
}

const KIND_A: Pair[] = [
  {
    name: 'a constant answer (the count on this database)',
    gold: 'SELECT COUNT(*) FROM superhero WHERE height_cm >= 200',
    pred: 'SELECT 69',
  },
  {
    name: '> vs >= at a boundary the database lacks (no hero is 250 cm)',
    gold: 'SELECT superhero_name FROM superhero WHERE height_cm > 250',
    pred: 'SELECT superhero_name FROM superhero WHERE height_cm >= 250',
  },
  {
    name: 'LIMIT 1 among ties (the heaviest hero is unique here)',
    gold: 'SELECT superhero_name FROM superhero WHERE weight_kg = (SELECT MAX(weight_kg) FROM superhero)',
    pred: 'SELECT superhero_name FROM superhero ORDER BY weight_kg DESC LIMIT 1',
  },
  {
    name: 'a missing DISTINCT the data does not expose (colour names are unique here)',
    gold: 'SELECT COUNT(DISTINCT colour) FROM colour',
    pred: 'SELECT COUNT(colour) FROM colour',
  },
];

const KIND_B: Pair[] = [
  {
    name: 'join order',
    gold: "SELECT T1.superhero_name FROM superhero AS T1 INNER JOIN publisher AS T2 ON T1.publisher_id = T2.id WHERE T2.publisher_name = 'Marvel Comics'",
    pred: "SELECT s.superhero_name FROM publisher p JOIN superhero s ON s.publisher_id = p.id WHERE p.publisher_name = 'Marvel Comics'",
  },
  {
    name: 'COUNT(*) vs COUNT(pk)',
    gold: 'SELECT COUNT(*) FROM superhero WHERE height_cm > 180',
    pred: 'SELECT COUNT(id) FROM superhero WHERE height_cm > 180',
  },
  {
    name: 'IN vs EXISTS',
    gold: "SELECT superhero_name FROM superhero WHERE publisher_id IN (SELECT id FROM publisher WHERE publisher_name = 'DC Comics')",
    pred: "SELECT superhero_name FROM superhero WHERE EXISTS (SELECT 1 FROM publisher p WHERE p.id = superhero.publisher_id AND p.publisher_name = 'DC Comics')",
  },
  {
    name: 'BETWEEN vs two comparisons',
    gold: 'SELECT full_name FROM superhero WHERE weight_kg BETWEEN 100 AND 200',
    pred: 'SELECT full_name FROM superhero WHERE weight_kg >= 100 AND weight_kg <= 200',
  },
  {
    name: 'MAX vs ORDER BY DESC LIMIT 1 over non-NULL values',
    gold: 'SELECT MAX(height_cm) FROM superhero',
    pred: 'SELECT height_cm FROM superhero WHERE height_cm IS NOT NULL ORDER BY height_cm DESC LIMIT 1',
  },
];

/** Row order: golds and predictions that SQLite's reversed unordered selects tell apart. */
const ORDER: Array<Pair & { goldOrderDependent: boolean; passesByRowOrder: boolean }> = [
  {
    name: 'LIMIT without ORDER BY in the gold, the same text predicted',
    gold: 'SELECT superhero_name FROM superhero LIMIT 3',
    pred: 'SELECT superhero_name FROM superhero LIMIT 3',
    goldOrderDependent: true,
    passesByRowOrder: false,
  },
  {
    name: 'LIMIT without ORDER BY in the gold, a prediction ordered by id',
    gold: 'SELECT full_name FROM superhero LIMIT 3',
    pred: 'SELECT full_name FROM superhero ORDER BY id LIMIT 3',
    goldOrderDependent: true,
    passesByRowOrder: true,
  },
  {
    name: 'ORDER BY ... LIMIT 1 through a tie in the gold (two heroes share the greatest height)',
    gold: 'SELECT superhero_name FROM superhero ORDER BY height_cm DESC LIMIT 1',
    pred: 'SELECT superhero_name FROM superhero ORDER BY height_cm DESC LIMIT 1',
    goldOrderDependent: true,
    passesByRowOrder: false,
  },
  {
    name: 'a total ORDER BY in both',
    gold: 'SELECT superhero_name FROM superhero ORDER BY id LIMIT 3',
    pred: 'SELECT superhero_name FROM superhero ORDER BY id ASC LIMIT 3',
    goldOrderDependent: false,
    passesByRowOrder: false,
  },
];

const all = [...KIND_A, ...KIND_B, ...ORDER];
const items: EvalItem[] = all.map((p, i) => ({
  index: i,
  questionId: i,
  dbId: 'superhero',
  difficulty: 'unknown',
  predSql: p.pred,
  goldSql: p.gold,
  extraction: { rule: 'sql-line', thinkStripped: false },
}));

let pool: SqlPool;
let results: ItemResult[];
const progress: Array<{ dbId: string; done: number; total: number }> = [];
const resultOf = (p: Pair) => results[all.indexOf(p)]!;

beforeAll(async () => {
  pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 1 });
  const outcome = await runEvaluation(
    items,
    { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex', 'ts'] },
    {
      executor: pool,
      onEvent: (e) =>
        void (e.type === 'suite-progress' && progress.push({ dbId: e.dbId, done: e.done, total: e.total })),
    },
  );
  results = outcome.results;
}, 120_000);

afterAll(async () => {
  await pool?.dispose();
});

describe(`TS on pairs written for BIRD superhero: rejects ${KIND_A.length} of kind A, accepts ${KIND_B.length} of kind B`, () => {
  it.each(KIND_A)('kind A, $name: EX 1, TS 0, with a suite database where they differ', (p) => {
    const r = resultOf(p);
    expect(r.status).toBe('ok');
    expect(r.ex).toBe(1);
    expect(r.ts).toBe(0);
    const c = r.tsCounterexample!;
    expect(c.suiteDb).toBeGreaterThanOrEqual(0);
    // The counterexample shows the difference: rows on one side only, or a prediction that failed.
    expect(c.predError !== null || c.predOnly.length + c.goldOnly.length > 0).toBe(true);
  });

  it.each(KIND_B)('kind B, $name: EX 1 and TS 1', (p) => {
    const r = resultOf(p);
    expect(r.ex).toBe(1);
    expect(r.ts).toBe(1);
    expect(r.tsCounterexample).toBeUndefined();
  });

  it('summary: TS beside EX, the EX-only passes counted', async () => {
    const { summarize } = await import('../../../src/core/eval/summary.ts');
    const t = summarize(results.slice(0, KIND_A.length + KIND_B.length), ['ex', 'ts']).byDifficulty.total;
    expect(t.ex).toBe(100);
    expect(t.ts).toBeCloseTo((KIND_B.length / (KIND_A.length + KIND_B.length)) * 100, 9);
    expect(t.exOnly).toBe(KIND_A.length);
  });
});

describe('the suite build reports its progress from the worker', () => {
  it('one event per candidate database, in order, up to the total', () => {
    const n = DEFAULT_SUITE_SPEC.candidates;
    expect(progress).toEqual(Array.from({ length: n }, (_, i) => ({ dbId: 'superhero', done: i + 1, total: n })));
  });
});

describe('row-order sensitivity with PRAGMA reverse_unordered_selects', () => {
  it.each(ORDER)('$name', (p) => {
    const r = resultOf(p);
    expect(r.ex).toBe(1);
    expect({ goldOrderDependent: r.goldOrderDependent, passesByRowOrder: r.passesByRowOrder }).toEqual({
      goldOrderDependent: p.goldOrderDependent,
      passesByRowOrder: p.passesByRowOrder,
    });
  });

  it('kind A and B golds with a total order or an aggregate are not order-dependent', () => {
    for (const p of [...KIND_A, ...KIND_B]) expect(resultOf(p).goldOrderDependent, p.name).toBe(false);
  });
});
