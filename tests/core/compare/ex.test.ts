import { describe, expect, it } from 'vitest';
import { executionMatch } from '../../../src/core/compare/ex.ts';
import type { SqlValue } from '../../../src/core/types.ts';

type Rows = SqlValue[][];

describe('official EX: set equality of row tuples', () => {
  const cases: [string, Rows, Rows, 0 | 1][] = [
    ['identical results match', [[1, 'a']], [[1, 'a']], 1],
    ['row order is ignored', [[1], [2], [3]], [[3], [1], [2]], 1],
    ['duplicate rows are ignored', [[1], [1], [2]], [[1], [2]], 1],
    ['duplicates on the gold side are ignored too', [[1]], [[1], [1], [1]], 1],
    ['column order matters', [[1, 'a']], [['a', 1]], 0],
    ['column names are not compared (same tuples)', [[5]], [[5]], 1],
    ['a missing column is a different tuple', [[1]], [[1, 'a']], 0],
    ['INTEGER 1 matches REAL 1.0', [[1]], [[1.0]], 1],
    ["TEXT '1' does not match INTEGER 1", [['1']], [[1]], 0],
    ['NULL matches NULL', [[null, 1]], [[null, 1]], 1],
    ['empty matches empty', [], [], 1],
    ['empty does not match one row', [], [[null]], 0],
    ['a superset does not match', [[1], [2]], [[1]], 0],
    ['a subset does not match', [[1]], [[1], [2]], 0],
    ['big integers compare exactly', [[9223372036854775807n]], [[9223372036854775806n]], 0],
    ['big integers equal exactly', [[9223372036854775807n]], [[9223372036854775807n]], 1],
  ];
  it.each(cases)('%s', (_n, pred, gold, ex) => {
    expect(executionMatch(pred, gold)).toBe(ex);
  });
});
