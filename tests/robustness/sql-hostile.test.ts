import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryDbSource } from '../../src/adapters/browser/sql-worker-host.ts';
import { spawnNodeSqlWorker } from '../../src/adapters/node/sql-worker-host.ts';
import { SqlPool } from '../../src/adapters/sql-pool.ts';
import { DEFAULT_EVAL_OPTIONS, type EvalEvent, type EvalOptions } from '../../src/core/eval/executor.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import { MAX_RESULT_VALUES } from '../../workers/sql-engine.ts';
import { evalItem } from '../helpers/item-results.ts';

/**
 * SQL a model may write to hurt the evaluator, run in the real worker pool (worker_threads, the
 * same worker module as the browser): each such item fails or is contained, and the pool goes
 * on evaluating the next item against the pristine database.
 */
const ROWS = 3000;
let pool: SqlPool;
let index = 0;

const item = (predSql: string, goldSql: string): EvalItem =>
  evalItem({
    index: index++,
    questionId: index,
    dbId: 'h',
    predSql,
    goldSql,
    extraction: { rule: 'sql-field', thinkStripped: false },
  });

async function evaluate(
  predSql: string,
  goldSql: string,
  options: Partial<EvalOptions> = {},
  events: EvalEvent[] = [],
): Promise<ItemResult> {
  const [r] = await pool.evaluate(
    [item(predSql, goldSql)],
    { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex'], ...options },
    { onEvent: (e) => events.push(e) },
  );
  return r!;
}

/** The canary after every hostile item: the database is whole and the pool answers. */
async function expectPristine(): Promise<void> {
  const r = await evaluate('SELECT count(*), sum(x) FROM t', `SELECT ${ROWS}, ${(ROWS * (ROWS + 1)) / 2}`);
  expect(r).toMatchObject({ status: 'ok', ex: 1, mutatedDb: false });
  const schema = await evaluate('SELECT group_concat(name) FROM pragma_database_list', "SELECT 'main'");
  expect(schema.ex).toBe(1);
}

beforeAll(async () => {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.exec(
    `CREATE TABLE t(x INTEGER, s TEXT); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT ${ROWS}) INSERT INTO t SELECT i, printf('%040d', i) FROM c`,
  );
  const bytes = db.export();
  db.close();
  pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(new Map([['h', bytes]])), size: 1 });
});

afterAll(async () => {
  await pool?.dispose();
});

describe('hostile SQL in predictions: the item fails or is contained, the pool lives, the next item sees a pristine database', () => {
  it.each([
    ['DELETE', 'DELETE FROM t'],
    ['UPDATE', 'UPDATE t SET x = NULL'],
    ['INSERT', 'INSERT INTO t VALUES (0, NULL)'],
    ['DROP TABLE', 'DROP TABLE t'],
    ['CREATE TABLE', 'CREATE TABLE evil(x)'],
  ])('%s is flagged as a write (mutated_db) officially and refused read-only', async (_n, sql) => {
    expect((await evaluate(sql, 'SELECT 1')).mutatedDb).toBe(true);
    await expectPristine();
    const ro = await evaluate(sql, 'SELECT 1', { readOnly: true });
    expect(ro).toMatchObject({ status: 'error', ex: 0 });
    expect(ro.error).toMatch(/^prediction: /);
    await expectPristine();
  });

  it('ATTACH of a new database file is flagged as a write (an error read-only) and dropped with the connection before the next item', async () => {
    expect(await evaluate("ATTACH 'evil.db' AS evil", 'SELECT 1')).toMatchObject({ status: 'ok', mutatedDb: true });
    await expectPristine();
    expect(await evaluate("ATTACH 'evil.db' AS evil", 'SELECT 1', { readOnly: true })).toMatchObject({
      status: 'error',
      mutatedDb: true,
      error: 'prediction: writes to the database, which --read-only forbids',
    });
    await expectPristine();
  });

  it('PRAGMA user_version = N is flagged as a write and does not reach the next item', async () => {
    expect(await evaluate('PRAGMA user_version = 42', 'SELECT 1')).toMatchObject({ status: 'ok', mutatedDb: true });
    expect((await evaluate('PRAGMA user_version', 'SELECT 0')).ex).toBe(1);
    expect((await evaluate('PRAGMA user_version = 42', 'SELECT 1', { readOnly: true })).status).toBe('error');
    await expectPristine();
  });

  it('VACUUM rewrites the file (flagged, re-opened); VACUUM INTO a file is refused in both modes; the next item sees the same data', async () => {
    expect(await evaluate('VACUUM', 'SELECT count(*) FROM t')).toMatchObject({ status: 'ok', mutatedDb: true });
    await expectPristine();
    // Its copy would stay in the worker's in-memory file system (sql.js gives no way to remove
    // it): refused in both modes, flagged as a write.
    for (const readOnly of [false, true]) {
      const r = await evaluate("VACUUM INTO 'copy.db'", 'SELECT 1', { readOnly });
      expect(r).toMatchObject({ status: 'error', mutatedDb: true });
      expect(r.error).toMatch(
        /^prediction: VACUUM INTO writes a copy of the database to a file, which the SQL worker refuses/,
      );
      await expectPristine();
    }
  });

  it('a recursive CTE that doubles a string fails with "out of memory" at the worker heap limit, not by the timeout', async () => {
    const r = await evaluate(
      "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r WHERE n < 40) SELECT max(length(s)) FROM r",
      'SELECT 1',
      { timeoutMs: 60_000 },
    );
    expect(r).toMatchObject({ status: 'error', ex: 0 });
    expect(r.error).toMatch(/^prediction: (out of memory|string or blob too big)/);
    await expectPristine();
  }, 90_000);

  it('randomblob beyond the heap limit fails at once', async () => {
    const r = await evaluate('SELECT length(randomblob(900000000))', 'SELECT 1');
    expect(r.error).toMatch(/^prediction: (out of memory|string or blob too big)/);
    await expectPristine();
  });

  it("a cross join of big tables with ORDER BY is stopped at the item timeout or at the worker's memory budget (its sort spill is bounded); the worker is replaced", async () => {
    const events: EvalEvent[] = [];
    const r = await evaluate(
      'SELECT a.s, b.s, c.s FROM t a, t b, t c ORDER BY a.x * b.x - c.x',
      'SELECT 1',
      { timeoutMs: 3000 },
      events,
    );
    // Which limit comes first depends on the machine's speed: the sort's spill grows inside the
    // worker's SQLite heap (docs/isolation.md), so it may reach the budget before the timeout.
    expect(r.ex).toBe(0);
    if (r.status !== 'timeout') {
      expect(r.status).toBe('error');
      expect(r.error).toMatch(/budget/);
    }
    expect(events.some((e) => e.type === 'worker-restarted')).toBe(true);
    await expectPristine();
  }, 60_000);

  it(`a result of more than ${MAX_RESULT_VALUES.toLocaleString('en-US')} values is an error, not a crashed worker`, async () => {
    const many = Math.ceil(MAX_RESULT_VALUES / 8) + 10;
    const r = await evaluate(
      `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT ${many}) SELECT i, i, i, i, i, i, i, i FROM c`,
      'SELECT 1',
      { timeoutMs: 60_000 },
    );
    expect(r).toMatchObject({ status: 'error', ex: 0 });
    expect(r.error).toMatch(/^prediction: the result has more than 8,000,000 values/);
    await expectPristine();
  }, 90_000);
});

describe('a result of a million rows', () => {
  const MILLION = 'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 1000000) SELECT i FROM c';

  it('is compared exactly in the worker (row order ignored), while only the preview rows leave it', async () => {
    const events: EvalEvent[] = [];
    const same = await evaluate(
      MILLION,
      MILLION.replace('SELECT i FROM c', 'SELECT i FROM c ORDER BY i DESC'),
      { timeoutMs: 60_000, previewRows: 5 },
      events,
    );
    expect(same).toMatchObject({ status: 'ok', ex: 1, predRowCount: 1_000_000, goldRowCount: 1_000_000 });
    const preview = events.find((e) => e.type === 'item')!;
    expect(preview.type === 'item' && preview.preview?.predRows).toHaveLength(5);
    expect(preview.type === 'item' && preview.preview?.goldRows).toEqual([
      [1000000],
      [999999],
      [999998],
      [999997],
      [999996],
    ]);
  }, 90_000);

  it('one row out of a million that differs makes EX 0', async () => {
    const r = await evaluate(
      MILLION,
      MILLION.replace('SELECT i FROM c', 'SELECT CASE WHEN i = 500000 THEN -1 ELSE i END FROM c'),
      { timeoutMs: 60_000 },
    );
    expect(r).toMatchObject({ status: 'ok', ex: 0, predRowCount: 1_000_000, goldRowCount: 1_000_000 });
  }, 90_000);
});
