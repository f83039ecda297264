import initSqlJs from 'sql.js';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryDbSource } from '../../src/adapters/browser/sql-worker-host.ts';
import { createNodeSqlPool, spawnNodeSqlWorker } from '../../src/adapters/node/sql-worker-host.ts';
import { SqlPool } from '../../src/adapters/sql-pool.ts';
import { isWorkbenchError } from '../../src/core/errors.ts';
import { DEFAULT_EVAL_OPTIONS, type EvalOptions } from '../../src/core/eval/executor.ts';
import { MAX_TIMER_MS } from '../../src/core/eval/limits.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { superheroWithDeletes } from '../helpers/writing-predictions.ts';
import { evalItem } from '../helpers/item-results.ts';

let pool: SqlPool | null = null;
afterEach(async () => {
  await pool?.dispose();
  pool = null;
});

async function tinyPool(): Promise<SqlPool> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3);');
  const bytes = db.export();
  db.close();
  return new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(new Map([['a', bytes]])), size: 1 });
}

const item = (index: number, predSql: string, goldSql: string): EvalItem =>
  evalItem({ index, dbId: 'a', predSql, goldSql });

describe('R-VES timing never leaks a write into later items (real pool, real BIRD data)', () => {
  it('gpt-4o on superhero with every tenth prediction a DELETE: every item has the same EX with and without r-ves', async () => {
    const fx = superheroWithDeletes();
    const options = (metrics: EvalOptions['metrics']): EvalOptions => ({
      ...DEFAULT_EVAL_OPTIONS,
      metrics,
      vesIterations: 2,
    });
    // One worker: every item runs on the connection the DELETEs were timed on.
    pool = createNodeSqlPool({ dbRoot: fx.dbRoot, workers: 1 });
    const ex = await pool.evaluate(fx.items, options(['ex']));
    const rves = await pool.evaluate(fx.items, options(['ex', 'r-ves']));
    // The DELETEs that score EX 1 are timed for R-VES (the case that leaked).
    expect(fx.deletes.filter((i) => ex[i]!.ex === 1 && ex[i]!.mutatedDb).length).toBeGreaterThan(0);
    expect(rves.map((r) => [r.index, r.ex])).toEqual(ex.map((r) => [r.index, r.ex]));
    expect(rves.every((r) => r.status === 'ok')).toBe(true);
  }, 240_000);
});

describe('timeouts the platform can time', () => {
  it.each([
    ['2^31 ms', 2 ** 31],
    ['infinity', Infinity],
    ['NaN', NaN],
    ['zero', 0],
    ['a negative number', -5],
  ])(
    'a timeoutMs of %s is refused with BAD_OPTION naming timeoutMs and the maximum, before anything runs',
    async (_n, timeoutMs) => {
      pool = await tinyPool();
      const events: unknown[] = [];
      const err = await pool
        .evaluate(
          [item(0, 'SELECT 1', 'SELECT 1')],
          { ...DEFAULT_EVAL_OPTIONS, timeoutMs },
          { onEvent: (e) => events.push(e) },
        )
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(isWorkbenchError(err)).toBe(true);
      expect(err).toMatchObject({ code: 'BAD_OPTION', where: 'timeoutMs' });
      expect((err as Error).message).toContain('at most 2,147,483,647');
      expect(events).toEqual([]);
    },
  );

  it('the longest timer is accepted, and R-VES with timeout x iterations beyond it still times every item', async () => {
    pool = await tinyPool();
    const items = [
      item(0, 'SELECT x FROM t', 'SELECT x FROM t ORDER BY x'),
      item(1, 'SELECT count(*) FROM t', 'SELECT 3'),
    ];
    const r = await pool.evaluate(items, {
      ...DEFAULT_EVAL_OPTIONS,
      metrics: ['ex', 'r-ves'],
      timeoutMs: MAX_TIMER_MS,
      vesIterations: 3,
    });
    expect(r.map((x) => [x.status, x.ex])).toEqual([
      ['ok', 1],
      ['ok', 1],
    ]);
    expect(r.every((x) => x.timeRatio !== null && x.rves !== null && x.rves > 0)).toBe(true);
  });
});
