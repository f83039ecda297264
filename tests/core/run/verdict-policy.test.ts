import { describe, expect, it } from 'vitest';
import { DEFAULT_EVAL_OPTIONS } from '../../../src/core/eval/executor.ts';
import { VERDICT_RULES, cacheableItem, cacheableResult, verdictKey } from '../../../src/core/run/verdict-cache.ts';
import { evalItem, ranResult } from '../../helpers/item-results.ts';

const item = evalItem({ index: 0, predSql: 'SELECT a FROM t' });
const context = { executor: 'sql.js test', sqliteVersion: '3.test' };

describe("the verdict cache's policy", () => {
  it("stores ok results and SQLite's own errors, never a timeout (machine load decides it), a write or a failure of the machine", () => {
    expect(cacheableResult(ranResult(item, 1))).toBe(true);
    expect(cacheableResult(ranResult(item, 0, { status: 'error', error: 'prediction: no such table: u' }))).toBe(true);
    expect(cacheableResult(ranResult(item, 0, { status: 'timeout', error: 'timeout after 30 s' }))).toBe(false);
    expect(cacheableResult(ranResult(item, 0, { status: 'timeout', error: null }))).toBe(false);
    expect(cacheableResult(ranResult(item, 0, { mutatedDb: true }))).toBe(false);
    // Executed on a database whose view `v` is not deterministic: the query's text does not show it.
    expect(cacheableResult(ranResult(item, 1, { nondeterministicView: 'v' }))).toBe(false);
    expect(cacheableResult(ranResult(item, 0, { status: 'error', error: 'the worker stopped' }))).toBe(false);
  });

  it('caches no item whose text calls a date or time function in any arity, the clock or the time zone', () => {
    for (const sql of [
      "SELECT strftime('%S')",
      "SELECT strftime('%Y', d) FROM t",
      "SELECT datetime(d, 'localtime') FROM t",
    ]) {
      expect(cacheableItem(evalItem({ index: 0, predSql: sql })), sql).toBe(false);
      expect(cacheableItem(evalItem({ index: 0, predSql: 'SELECT 1', goldSql: sql })), sql).toBe(false);
    }
    expect(cacheableItem(item)).toBe(true);
  });

  it("keys a prediction by SQLite's tokens: a trailing U+00A0, U+000B or U+3000 is another key, SQLite's whitespace is not", () => {
    const key = (predSql: string) => verdictKey({ ...item, predSql }, 'a'.repeat(64), context, DEFAULT_EVAL_OPTIONS);
    for (const c of ['\u00a0', '\v', '\u3000']) expect(key(`SELECT a FROM t${c}`)).not.toBe(key('SELECT a FROM t'));
    expect(key(' \tSELECT a FROM t\r\n')).toBe(key('SELECT a FROM t'));
  });

  it("never reads an entry keyed by the old normalisation: the clean text's key changed with the rules version", () => {
    // The key as rules version 1 made it: the prediction normalised by JavaScript's trim(), so
    // an entry stored for `SELECT a FROM t` may hold the verdict of `SELECT a FROM t\u00a0`.
    const v1 = (predSql: string) =>
      JSON.stringify([
        1,
        context.executor,
        context.sqliteVersion,
        30_000,
        false,
        true,
        'a'.repeat(64),
        'SELECT 1',
        predSql.trim(),
      ]);
    expect(v1('SELECT a FROM t\u00a0')).toBe(v1('SELECT a FROM t'));
    const options = { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 30_000, readOnly: false };
    const now = verdictKey(item, 'a'.repeat(64), context, options);
    expect(now).not.toBe(v1('SELECT a FROM t'));
    expect(JSON.parse(now)).toEqual([VERDICT_RULES, ...JSON.parse(v1('SELECT a FROM t')).slice(1)]);
  });
});
