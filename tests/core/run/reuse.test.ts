import { describe, expect, it } from 'vitest';
import { DEFAULT_EVAL_OPTIONS, type SqlExecutor } from '../../../src/core/eval/executor.ts';
import { WRITES, isNonDeterministic, normalizedSql, planReuse, reusable } from '../../../src/core/run/reuse.ts';
import { runEvaluation } from '../../../src/core/run/replay.ts';
import type { EvalItem, ItemResult } from '../../../src/core/types.ts';
import { evalItem, ranResult } from '../../helpers/item-results.ts';

const item = (index: number, sample: number, predSql: string, goldSql = 'SELECT 1', dbId = 'db'): EvalItem =>
  evalItem({ index, sample, predSql, goldSql, dbId, extraction: { rule: 'sql-field', thinkStripped: false } });

/**
 * Test double for the SQL pool (no database needed to count executions): EX 1 when pred equals
 * gold after trimming. It logs the predictions it ran as `index:sql` (the loop hands executors
 * positions as sample numbers).
 */
function countingExecutor(overrides: (it: EvalItem) => Partial<ItemResult> = () => ({})) {
  const executed: string[] = [];
  const executor: SqlExecutor = {
    async evaluate(items, _options, hooks) {
      return items.map((it, i) => {
        executed.push(`${it.index}:${it.predSql.trim()}`);
        const r = ranResult(it, it.predSql.trim().replace(/;$/, '') === it.goldSql ? 1 : 0, overrides(it));
        hooks?.onEvent?.({ type: 'item', result: r, preview: null, done: i + 1, total: items.length });
        return r;
      });
    },
    async dispose() {},
  };
  return { executor, executed };
}

describe('reuse of identical items', () => {
  it('normalises only what SQLite cannot see: surrounding whitespace and one trailing semicolon', () => {
    expect(normalizedSql('  SELECT 1 ;\n')).toBe('SELECT 1');
    expect(normalizedSql('SELECT 1;;')).toBe('SELECT 1;');
    expect(normalizedSql('SELECT  1')).toBe('SELECT  1');
    expect(normalizedSql('SELECT 1 -- done;')).toBe('SELECT 1 -- done');
  });

  it.each([
    'SELECT random()',
    'SELECT abs(RANDOM ()) % 10',
    'SELECT randomblob(4)',
    "SELECT date('now')",
    'SELECT CURRENT_TIMESTAMP',
    'SELECT current_date',
    'SELECT changes()',
    'SELECT total_changes()',
    'SELECT last_insert_rowid()',
    'SELECT julianday()',
    'SELECT unixepoch()',
    // Issue 24: SQLite takes a quoted function name, in any case, with a comment before its parenthesis.
    'SELECT "random"()',
    'SELECT [random]()',
    'SELECT `random`()',
    'SELECT "RANDOM" /* c */ ()',
    'SELECT "randomblob"(2)',
    "SELECT [date]('NOW')",
    'SELECT date("now")',
    'SELECT "julianday" ( )',
    'SELECT `last_insert_rowid`()',
  ])('never reuses non-deterministic SQL: %s', (sql) => {
    expect(isNonDeterministic(sql)).toBe(true);
    expect(reusable(item(0, 0, sql))).toBe(false);
    expect(reusable(item(0, 0, 'SELECT 1', sql))).toBe(false);
  });

  it.each([
    "SELECT 'random()'",
    'SELECT 1 -- random()',
    "SELECT date('2020-01-01')",
    'SELECT random_id FROM t',
    'SELECT "random" FROM t',
    "SELECT 'now is'",
  ])('reuses deterministic SQL that only mentions such a name: %s', (sql) => {
    expect(isNonDeterministic(sql)).toBe(false);
  });

  it.each([
    'DELETE FROM t',
    'UPDATE t SET a = 1',
    'INSERT INTO t VALUES (1)',
    'DROP TABLE t',
    "ATTACH 'x' AS y",
    'PRAGMA user_version = 3',
    "VACUUM INTO 'f'",
    'CREATE TEMP TABLE x(a)',
  ])('never reuses SQL that may write: %s', (sql) => {
    expect(WRITES.test(sql)).toBe(true);
    expect(reusable(item(0, 0, sql))).toBe(false);
  });

  it('executes each distinct (database, gold, prediction) once and gives every duplicate its own identity', async () => {
    // Question 2 asks the same thing on the same database as question 0: its verdict is shared too; question 1 is on another database.
    const items = [
      item(0, 0, 'SELECT 1'),
      item(0, 1, ' SELECT 1;'),
      item(0, 2, 'SELECT 2'),
      item(1, 0, 'SELECT 1', 'SELECT 1', 'db2'),
      item(2, 0, 'SELECT 1'),
      item(0, 3, 'DELETE FROM t'),
      item(0, 4, 'DELETE FROM t'),
    ];
    const { executor, executed } = countingExecutor();
    const done: number[] = [];
    const out = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, {
      executor,
      onEvent: (e) => void (e.type === 'item' && done.push(e.done)),
    });
    expect(executed).toEqual(['0:SELECT 1', '0:SELECT 2', '1:SELECT 1', '0:DELETE FROM t', '0:DELETE FROM t']);
    expect(out).toMatchObject({ executed: 5, reused: 2, cancelled: false });
    expect(out.results.map((r) => [r.index, r.sample, r.ex, r.dbId])).toEqual([
      [0, 0, 1, 'db'],
      [0, 1, 1, 'db'],
      [0, 2, 0, 'db'],
      [1, 0, 1, 'db2'],
      [2, 0, 1, 'db'],
      [0, 3, 0, 'db'],
      [0, 4, 0, 'db'],
    ]);
    expect(out.results[4]).toMatchObject({ index: 2, questionId: 2, sample: 0 });
    expect(done).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const off = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, {
      executor: countingExecutor().executor,
      reuse: false,
    });
    expect(off).toMatchObject({ executed: 7, reused: 0 });
    expect(off.results.map((r) => [r.index, r.sample, r.ex])).toEqual(
      out.results.map((r) => [r.index, r.sample, r.ex]),
    );
  });

  it('executes the duplicates themselves when the first one timed out, wrote, or failed for a reason other than its SQL', async () => {
    for (const bad of [
      { status: 'timeout' as const },
      { mutatedDb: true },
      { status: 'error' as const, error: 'worker crashed' },
    ]) {
      const items = [item(0, 0, 'SELECT 1'), item(0, 1, 'SELECT 1'), item(0, 2, 'SELECT 1')];
      const { executor, executed } = countingExecutor((it) => (it.sample === 0 ? bad : {}));
      // (the first item is at position 0, which the loop passes as its sample number)
      const out = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor });
      expect(executed).toEqual(['0:SELECT 1', '0:SELECT 1', '0:SELECT 1']);
      expect(out.reused).toBe(0);
    }
    const sqlError = countingExecutor((it) =>
      it.sample === 0 ? { status: 'error', error: 'prediction: no such table: x', ex: 0 } : {},
    );
    const out = await runEvaluation([item(0, 0, 'SELECT x'), item(0, 1, 'SELECT x')], DEFAULT_EVAL_OPTIONS, {
      executor: sqlError.executor,
    });
    expect(sqlError.executed).toEqual(['0:SELECT x']);
    expect(out.results[1]).toMatchObject({ sample: 1, status: 'error', error: 'prediction: no such table: x' });
  });

  it('reuses nothing in an R-VES run, which times every item itself', () => {
    const items = [item(0, 0, 'SELECT 1'), item(0, 1, 'SELECT 1')];
    expect(planReuse(items, { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex', 'r-ves'] }, true).first).toHaveLength(2);
    expect(planReuse(items, DEFAULT_EVAL_OPTIONS, true).first).toHaveLength(1);
  });
});
