/**
 * explainVerdict under a rule that compares in order (Spider's, when the gold has ORDER BY) and
 * counts duplicates: an EX 0 whose rows equal the gold's in another order names the first row
 * out of order; one with the same distinct rows in other counts names the duplicates; BIRD's
 * rule, which ignores both, explains the same rows as a set match. The verdicts are the ones the
 * comparison functions give for these rows (spiderExecMatch, executionMatch).
 */
import { describe, expect, it } from 'vitest';
import { spiderExecMatch } from '../../../src/core/compare/spider-ex.ts';
import { executionMatch } from '../../../src/core/compare/ex.ts';
import type { ItemPreview } from '../../../src/core/eval/executor.ts';
import { explainVerdict } from '../../../src/core/playground/explain.ts';
import type { ItemResult, SqlValue } from '../../../src/core/types.ts';
import { sampleRecord } from '../../helpers/run-records.ts';

const GOLD: SqlValue[][] = [
  ['Joe Sharp', 52],
  ['John Nizinik', 43],
  ['Rose White', 41],
];

function scored(pred: SqlValue[][], rule: 'bird' | 'spider', ordered: boolean) {
  const ex = rule === 'spider' ? spiderExecMatch(pred, GOLD, ordered) : executionMatch(pred, GOLD);
  const result: ItemResult = sampleRecord({
    index: 0,
    sample: 0,
    dbId: 'concert_singer',
    ex,
    softF1: null,
    predRowCount: pred.length,
    goldRowCount: GOLD.length,
    predColumnCount: 2,
    goldColumnCount: 2,
  });
  const preview: ItemPreview = {
    predColumns: ['name', 'age'],
    goldColumns: ['name', 'age'],
    predRows: pred,
    goldRows: GOLD,
  };
  return { result, explanation: explainVerdict(result, preview, { goldOrdered: ordered, rule }) };
}

describe('explainVerdict: order and duplicates as reasons for EX 0', () => {
  it("names the first row out of order when Spider's rule compares in order", () => {
    const swapped = [GOLD[0]!, GOLD[2]!, GOLD[1]!];
    const { result, explanation } = scored(swapped, 'spider', true);
    expect(result.ex).toBe(0);
    const [first, ...rest] = explanation.reasons;
    expect(rest).toEqual([]);
    expect(first?.kind).toBe('order');
    expect(first?.kind === 'order' ? first.position : null).toBe(1);
    expect(first?.detail).toContain("row 2 is ('Rose White', 41) where the gold's ORDER BY puts ('John Nizinik', 43)");
  });

  it('the same rows in another order without ORDER BY pass under Spider, and under BIRD with it', () => {
    const reversed = [...GOLD].reverse();
    expect(scored(reversed, 'spider', false).result.ex).toBe(1);
    const bird = scored(reversed, 'bird', true);
    expect(bird.result.ex).toBe(1);
    expect(bird.explanation.reasons.map((r) => r.kind)).toEqual(['match', 'row-order']);
  });

  it("names the duplicates when Spider's rule compares bags", () => {
    const doubled = [GOLD[0]!, GOLD[0]!, GOLD[1]!, GOLD[2]!];
    const spider = scored(doubled, 'spider', false);
    expect(spider.result.ex).toBe(0);
    expect(spider.explanation.reasons.map((r) => r.kind)).toEqual(['duplicates']);
    expect(scored(doubled, 'bird', false).result.ex).toBe(1);
  });

  it('rows that really differ are still explained row by row under Spider', () => {
    const other = [GOLD[0]!, GOLD[1]!, ['Tribal King', 25]];
    const { result, explanation } = scored(other, 'spider', true);
    expect(result.ex).toBe(0);
    const rows = explanation.reasons[0]!;
    expect(rows.kind).toBe('rows');
    expect(rows.kind === 'rows' ? rows.notes.map((n) => n.kind) : []).toEqual(['missing', 'extra']);
  });
});

describe('explainVerdict: a set match counts the distinct rows both sides share', () => {
  /** Question 1338's shape: the gold returns 'true' three times, `SELECT 'true'` once. */
  function trueThrice(goldShown: SqlValue[][]) {
    const gold: SqlValue[][] = [['true'], ['true'], ['true']];
    const pred: SqlValue[][] = [['true']];
    const result: ItemResult = sampleRecord({
      index: 0,
      sample: 0,
      dbId: 'student_club',
      ex: executionMatch(pred, gold),
      softF1: null,
      predRowCount: 1,
      goldRowCount: 3,
      predColumnCount: 1,
      goldColumnCount: 1,
    });
    const preview: ItemPreview = {
      predColumns: ["'true'"],
      goldColumns: ['approved'],
      predRows: pred,
      goldRows: goldShown,
    };
    return { result, explanation: explainVerdict(result, preview) };
  }

  it("SELECT 'true' against a gold of three 'true' rows: one distinct row, never \"3 distinct rows\"", () => {
    const { result, explanation } = trueThrice([['true'], ['true'], ['true']]);
    expect(result.ex).toBe(1);
    expect(explanation.reasons[0]!.detail).toBe(
      'the attempt returns the same set of rows as the gold: 1 distinct row (the gold returns 3 rows, the attempt 1 row), compared as a set: order and duplicates are ignored.',
    );
  });

  it("the gold's preview cut short: the attempt's full side still gives the distinct count (the sets are equal)", () => {
    const { explanation } = trueThrice([['true']]);
    expect(explanation.reasons[0]!.detail).toContain('1 distinct row (the gold returns 3 rows, the attempt 1 row)');
  });
});
