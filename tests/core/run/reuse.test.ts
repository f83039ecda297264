import { describe, expect, it } from 'vitest';
import { DEFAULT_EVAL_OPTIONS, type SqlExecutor } from '../../../src/core/eval/executor.ts';
import {
  WRITES,
  isNonDeterministic,
  normalizedSql,
  planReuse,
  reusable,
  viewIsNonDeterministic,
} from '../../../src/core/run/reuse.ts';
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
  it("normalises only SQLite's whitespace around the text: space, tab, newline, form feed, carriage return", () => {
    expect(normalizedSql('  \t\r\f\nSELECT 1 \n')).toBe('SELECT 1');
    expect(normalizedSql('SELECT  1')).toBe('SELECT  1');
    // Kept: a trailing `;` (after a comment or another `;` it is a second statement to Python,
    // and `SELECT * FROM;` fails with another message than `SELECT * FROM`), and comments.
    expect(normalizedSql('SELECT 1 ;\n')).toBe('SELECT 1 ;');
    expect(normalizedSql('SELECT 1;;')).toBe('SELECT 1;;');
    expect(normalizedSql('SELECT 1 -- done\n')).toBe('SELECT 1 -- done');
    // Characters JavaScript's trim() removes and SQLite reads as part of a token, or rejects.
    for (const c of ['\v', '\u00a0', '\u3000', '\u2028', '\ufeff', '\u0085', '\u200b'])
      expect(normalizedSql(`SELECT 1${c}`)).toBe(`SELECT 1${c}`);
    // Whitespace at the end of an unterminated string or name is in the token SQLite's error quotes.
    expect(normalizedSql("SELECT 'a  ")).toBe("SELECT 'a  ");
    expect(normalizedSql('SELECT [a\n')).toBe('SELECT [a\n');
    // ... and so is a quote inside a `$name(...)` parameter: here the last quote opens a string.
    expect(normalizedSql("SELECT $x(') , '  ")).toBe("SELECT $x(') , '  ");
    expect(normalizedSql("SELECT 'a''b' \n")).toBe("SELECT 'a''b'");
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
    // SQLite takes a quoted function name, in any case, with a comment before its parenthesis.
    'SELECT "random"()',
    'SELECT [random]()',
    'SELECT `random`()',
    'SELECT "RANDOM" /* c */ ()',
    'SELECT "randomblob"(2)',
    "SELECT [date]('NOW')",
    'SELECT date("now")',
    'SELECT "julianday" ( )',
    'SELECT `last_insert_rowid`()',
    // Every date and time function in every arity (a column may hold 'now'), one argument included.
    "SELECT strftime('%S')",
    "SELECT STRFTIME('%Y', date) FROM t",
    "SELECT date('2020-01-01')",
    'SELECT time(t.x) FROM t',
    "SELECT datetime(d, '+1 day') FROM t",
    'SELECT julianday(a) - julianday(b) FROM t',
    "SELECT timediff('2020-01-01', d) FROM t",
    "SELECT unixepoch('2020-01-01')",
    'SELECT "strftime"(\'%S\')',
    "SELECT [Date] -- c\n ('2020-01-01')",
    // The clock and the time zone as strings.
    "SELECT x FROM t WHERE d = 'now'",
    "SELECT 'LOCALTIME'",
    "SELECT ' utc'",
    'SELECT CURRENT_TIME',
    // Functions outside the allow-list: SQLite's connection-state functions, unknown names.
    'SELECT sqlite_version()',
    'SELECT sqlite_source_id()',
    "SELECT load_extension('x')",
    'SELECT YEAR(d) FROM t',
    'SELECT a FROM t WHERE b MATCH (c)',
    'SELECT * FROM generate_series(1, 3)',
    "SELECT left('abc', 1)",
    // A call anywhere: in a subquery, a CTE, a window, a filter, a CAST, an ORDER BY.
    'SELECT a FROM t ORDER BY random()',
    'WITH x(a) AS (SELECT random()) SELECT a FROM x',
    'SELECT CAST(random() AS INT)',
    'SELECT CAST(a AS INT) + random() FROM t',
    'SELECT count(*) FILTER (WHERE random() > 0) FROM t',
    'SELECT sum(a) OVER (ORDER BY random()) FROM t',
    'SELECT a FROM t WHERE b IN (SELECT changes())',
  ])('never reuses non-deterministic SQL: %s', (sql) => {
    expect(isNonDeterministic(sql)).toBe(true);
    expect(reusable(item(0, 0, sql))).toBe(false);
    expect(reusable(item(0, 0, 'SELECT 1', sql))).toBe(false);
  });

  it.each([
    "SELECT 'random()'",
    'SELECT 1 -- random()',
    'SELECT random_id FROM t',
    'SELECT "random" FROM t',
    "SELECT 'now is'",
    "SELECT 'Unknown', 'snow' FROM t",
    'SELECT t.date, "time", [strftime] FROM t',
    // Parentheses after keywords that call nothing, CTE column lists and type names.
    'SELECT a FROM t WHERE b IN (1, 2) AND NOT EXISTS (SELECT 1) OR (c = 3)',
    'SELECT CAST(a AS REAL), CAST (b AS DECIMAL(10, 2)), CAST(c AS VARCHAR(5)) FROM t',
    'WITH x(a, b) AS (SELECT 1, 2), "y" (c) AS MATERIALIZED (SELECT 3) SELECT * FROM x, y',
    'WITH RECURSIVE c(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c',
    'SELECT row_number() OVER (PARTITION BY a ORDER BY b), count(*) FILTER (WHERE a > 0) FROM t GROUP BY a',
    'SELECT a FROM t WINDOW w AS (ORDER BY a)',
    "SELECT IIF(a = 'x', 1, 0), REPLACE(a, ',', ''), SUBSTR(a, 1, 4), \"Lower\"(a) FROM t",
    "SELECT json_extract(j, '$.a'), j ->> '$.b', value FROM t, json_each(t.j)",
    'SELECT a FROM t JOIN u USING (id) WHERE a BETWEEN (1) AND (2)',
    'SELECT CASE WHEN (a) THEN (b) ELSE (c) END FROM t',
    "SELECT a FROM t WHERE b LIKE ('%x%') ESCAPE ('!')",
    'SELECT a FROM (SELECT a FROM t) UNION (SELECT 1) LIMIT (1)',
  ])('reuses deterministic SQL: %s', (sql) => {
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
      item(0, 1, ' SELECT 1\n'),
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

  it('executes the duplicates themselves when the first ran on a database with a view that is not deterministic', async () => {
    const items = [item(0, 0, 'SELECT r FROM v'), item(0, 1, 'SELECT r FROM v'), item(0, 2, 'SELECT r FROM v')];
    const { executor, executed } = countingExecutor(() => ({ nondeterministicView: 'v' }));
    const out = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor });
    expect(executed).toEqual(['0:SELECT r FROM v', '0:SELECT r FROM v', '0:SELECT r FROM v']);
    expect(out.reused).toBe(0);
  });

  it("reads a view's definition after its first AS outside parentheses: a column list names no function", () => {
    for (const sql of [
      'CREATE VIEW v AS SELECT random() AS r',
      "CREATE VIEW v(d) AS SELECT date('now')",
      'CREATE VIEW "v(x)" AS SELECT * FROM t WHERE a > abs(random())',
      'CREATE VIEW v AS SELECT CURRENT_TIMESTAMP',
      'CREATE VIEW v AS SELECT my_function(a) FROM t',
      // a text read otherwise (no AS) is not deterministic
      'CREATE VIEW v',
    ])
      expect(viewIsNonDeterministic(sql), sql).toBe(true);
    for (const sql of [
      'CREATE VIEW w(n) AS SELECT count(*) FROM superhero',
      'CREATE VIEW "as" AS SELECT a AS b, upper(c) FROM t',
      'create view w as select cast(a as integer) from t',
    ])
      expect(viewIsNonDeterministic(sql), sql).toBe(false);
  });

  it('reuses nothing in an R-VES run, which times every item itself', () => {
    const items = [item(0, 0, 'SELECT 1'), item(0, 1, 'SELECT 1')];
    expect(planReuse(items, { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex', 'r-ves'] }, true).first).toHaveLength(2);
    expect(planReuse(items, DEFAULT_EVAL_OPTIONS, true).first).toHaveLength(1);
  });
});
