/**
 * Planner differences: an item that times out on the main engine (sql.js 1.17, SQLite 3.54.1)
 * is re-timed by the version check on the SQLite generation of BIRD's evaluator (sql.js 1.8.0,
 * SQLite 3.39.3) before it is called a timeout, and flagged as a planner difference when its
 * verdict there differs. SQLite 3.54 runs a CTE joined on a condition no index can serve as a
 * co-routine re-run for every row of the enclosing join; 3.39 (and Python's 3.40.1) materialise
 * it once. The data is constructed (generated in the test, written by SQLite itself): no query of
 * the three BIRD databases here has that shape (mini-dev 247, the `LEFT JOIN ... OR` prediction,
 * has the same plan and about the same time on both generations).
 *
 * Sizes: 30,000 rows grouped into 10, joined to 10,000 rows. On 3.54 the CTE is re-run 10,000
 * times (300 million rows grouped: minutes); on 3.39 once (about 0.1 s). The run's timeout is
 * 2 s, which neither time comes near, so the machine's load cannot change a verdict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOnOlderSqlite } from '../../src/app/version-check-service.ts';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { readDbFacts } from '../../src/core/eval/db-facts.ts';
import { scoreRun } from '../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../src/core/run/types.ts';
import {
  versionCheckRecordOf,
  versionEffectsJson,
  versionEffectsLine,
  type VersionEffects,
} from '../../src/core/run/version-effects.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { evalItem } from '../helpers/item-results.ts';
import { CO_ROUTINE_GOLD, MATERIALIZED_PRED, plannerDbRoot } from '../helpers/planner-db.ts';
import { officialVerdicts } from '../helpers/official-python.ts';

const ENDLESS = 'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r';

const CONFIG: RunConfig = { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'], timeoutMs: 2000, vesIterations: 0 };

const item = (index: number, predSql: string, goldSql: string): EvalItem =>
  evalItem({ index, questionId: 100 + index, dbId: 'planner', predSql, goldSql });

describe('planner differences (constructed data: a CTE that SQLite 3.54 re-runs per joined row, 3.39 materialises once)', () => {
  let root: string;
  let main: SqlPool;
  const items = [
    item(0, MATERIALIZED_PRED, CO_ROUTINE_GOLD),
    item(1, 'SELECT count(*) FROM small', 'SELECT count(*) FROM small'),
    item(2, ENDLESS, 'SELECT 1'),
  ];
  let effects: VersionEffects;
  let mainVersion: string | null;

  beforeAll(async () => {
    root = plannerDbRoot();
    main = createNodeSqlPool({ dbRoot: root, workers: 1 });
    const facts = await readDbFacts(main, ['planner']);
    mainVersion = facts.sqliteVersion;
    const scored = await scoreRun(items, CONFIG, { executor: main, facts });
    effects = await checkOnOlderSqlite(
      items,
      scored.results,
      CONFIG,
      { open: () => createNodeSqlPool({ dbRoot: root, workers: 1, engine: 'legacy' }) },
      mainVersion,
    );
  });
  afterAll(async () => {
    await main?.dispose();
  });

  it('the gold times out on 3.54.1 and is re-timed on 3.39.3, where it is correct: a planner difference; a query endless on both stays a timeout', () => {
    expect(mainVersion).toBe('3.54.1');
    expect(effects.otherVersion).toBe('3.39.3');
    const [gold, plain, endless] = effects.results;
    expect(gold).toMatchObject({ status: 'timeout', ex: 0 });
    expect(gold!.versionCheck).toMatchObject({ status: 'ok', ex: 1, softF1: 1, differs: true, planner: true });
    // Not timed out, not flagged: not re-run.
    expect(plain).toMatchObject({ status: 'ok', ex: 1 });
    expect(plain!.versionCheck).toBeUndefined();
    // Endless on both generations: re-timed, still a timeout, no difference.
    expect(endless).toMatchObject({ status: 'timeout', ex: 0 });
    expect(endless!.versionCheck).toMatchObject({ status: 'timeout', ex: 0, differs: false });
    expect(endless!.versionCheck!.planner).toBeUndefined();
    expect([effects.checked, effects.retimed]).toEqual([2, 2]);
    // With the older engine's verdicts in place of the re-run items': 2 of 3 correct.
    expect(effects.otherTotal.ex).toBeCloseTo(66.67, 2);
  });

  it("the official evaluator's SQLite (Python's 3.40.1) gives the verdict of 3.39.3 within the same 2 s", async () => {
    const official = await officialVerdicts(root, items.slice(0, 1), 2);
    expect(official.sqliteVersion).toBe('3.40.1');
    expect(official.items[0]).toMatchObject({ ex: 1, error: null });
  });

  it('the CLI line, --out summary, and stored record count planner differences beside result differences', () => {
    expect(versionEffectsLine(effects)).toBe(
      'version effects measured: 0 item(s) flagged version-sensitive and 2 timeout(s) re-run on SQLite 3.39.3; ' +
        '0 verdict(s) differ (EX or Soft-F1) from SQLite 3.54.1; 1 planner difference(s) (timed out on SQLite 3.54.1, ' +
        'another verdict on 3.39.3) (total EX on 3.39.3: 66.67)',
    );
    const json = versionEffectsJson(effects);
    expect(json).toMatchObject({ checked: 2, differing: 0, planner_differences: 1, timeouts_retimed: 2 });
    expect(json.items).toEqual([expect.objectContaining({ index: 0, planner: true })]);
    const record = versionCheckRecordOf('run-1', effects, '2026-12-07T00:00:00.000Z');
    expect(record.items.map((i) => [i.index, i.planner === true])).toEqual([
      [0, true],
      [2, false],
    ]);
  });
});
