import type { SqlValue } from '../types.ts';

/**
 * Python equality and hashing of the values `sqlite3` returns, as a string key, so that
 * sets and membership tests behave exactly like `set(rows)` and `value in row` in the
 * official evaluator:
 * - INTEGER and REAL compare by exact numeric value (1 == 1.0, -0.0 == 0, 2**60 == 2.0**60
 *   but 2**53 + 1 != 2.0**53), so every integral number becomes the decimal of its exact value;
 * - TEXT ('1') never equals a number, and never equals a BLOB (str vs bytes);
 * - NULL equals NULL (None == None).
 */
export function valueKey(v: SqlValue): string {
  if (v === null) return 'N';
  switch (typeof v) {
    case 'number':
      if (Number.isInteger(v)) {
        // Beyond 2^53, String() rounds to shortest digits; BigInt() gives the exact value.
        return Math.abs(v) < 9007199254740992 ? 'I' + String(v === 0 ? 0 : v) : 'I' + BigInt(v).toString();
      }
      return 'F' + String(v);
    case 'bigint':
      return 'I' + v.toString();
    case 'string':
      return 'S' + v;
    default:
      return 'B' + bytesKey(v);
  }
}

function bytesKey(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 4096) {
    s += String.fromCharCode.apply(null, Array.from(b.subarray(i, i + 4096)));
  }
  return s;
}

/** Key of a whole row (a Python tuple): length-prefixed parts, so no two rows collide. */
export function rowKey(row: readonly SqlValue[]): string {
  if (row.length === 1) return valueKey(row[0] ?? null);
  let key = '';
  for (const v of row) {
    const k = valueKey(v);
    key += k.length + ':' + k;
  }
  return key;
}

/** Python `==` between two SQLite values. */
export function pyEquals(a: SqlValue, b: SqlValue): boolean {
  return valueKey(a) === valueKey(b);
}
