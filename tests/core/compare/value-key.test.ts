import { describe, expect, it } from 'vitest';
import { pyEquals, rowKey, valueKey } from '../../../src/core/compare/value-key.ts';
import type { SqlValue } from '../../../src/core/types.ts';

const bytes = (...b: number[]) => new Uint8Array(b);

describe('Python value equality of SQLite values', () => {
  const cases: [string, SqlValue, SqlValue, boolean][] = [
    ['INTEGER 1 equals REAL 1.0', 1, 1.0, true],
    ['bigint 1 equals number 1', 1n, 1, true],
    ['-0.0 equals 0', -0, 0, true],
    ["TEXT '1' never equals INTEGER 1", '1', 1, false],
    ["TEXT '1.0' never equals REAL 1.0", '1.0', 1.0, false],
    ['NULL equals NULL', null, null, true],
    ['NULL never equals 0', null, 0, false],
    ["NULL never equals ''", null, '', false],
    ['TEXT never equals a BLOB with the same bytes', 'ab', bytes(97, 98), false],
    ['BLOBs with the same bytes are equal', bytes(1, 2, 255), bytes(1, 2, 255), true],
    ['BLOBs with different bytes differ', bytes(1, 2), bytes(1, 3), false],
    ['text comparison is case-sensitive', 'Apple', 'apple', false],
    ['text comparison does not trim', 'a ', 'a', false],
    ['0.1 + 0.2 does not equal 0.3 (no tolerance)', 0.1 + 0.2, 0.3, false],
    ['2^53 + 1 as integer differs from 2^53 as float', 9007199254740993n, 9007199254740992, false],
    ['2^60 as integer equals 2^60 as float', 1152921504606846976n, 2 ** 60, true],
    ['integers beyond 2^53 differing in the last digit differ', 9223372036854775807n, 9223372036854775806n, false],
    ['2.5 equals 2.5', 2.5, 2.5, true],
    ['infinities compare by sign', Infinity, -Infinity, false],
  ];
  it.each(cases)('%s', (_name, a, b, equal) => {
    expect(pyEquals(a, b)).toBe(equal);
  });

  it('gives rows of different lengths different keys', () => {
    expect(rowKey([1, 2])).not.toBe(rowKey([1, 2, null]));
  });
  it('does not let text containing the separator forge another row', () => {
    expect(rowKey(['a', 'b'])).not.toBe(rowKey(['a1:Sb']));
    expect(rowKey(['1:Sa', 'b'])).not.toBe(rowKey(['', '1:Sa1:Sb']));
  });
  it('keys a huge integral double by its exact value', () => {
    expect(valueKey(1e21)).toBe('I1000000000000000000000');
  });
});
