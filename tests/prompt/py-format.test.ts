import { describe, expect, it } from 'vitest';
import { pyFloat, pyStr, rjust } from '../../src/core/prompt/py-format.ts';

describe("Python's str() of sqlite3 values", () => {
  it.each<[number, string]>([
    [1, '1.0'],
    [67.81, '67.81'],
    [-0.199999999999999, '-0.199999999999999'],
    [0.1 + 0.2, '0.30000000000000004'],
    [0, '0.0'],
    [-0, '-0.0'],
    [1e-4, '0.0001'],
    [1e-5, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e+16'],
    // eslint-disable-next-line no-loss-of-precision -- the rounded double is what is formatted
    [123456789012345678, '1.2345678901234568e+17'],
    [1e100, '1e+100'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [NaN, 'nan'],
  ])('float %d prints as %s', (v, s) => {
    expect(pyFloat(v)).toBe(s);
  });

  it('prints NULL as None, integers plainly, big integers exactly and blobs as bytes literals', () => {
    expect(pyStr(null, 'null')).toBe('None');
    expect(pyStr(5, 'integer')).toBe('5');
    expect(pyStr(5, 'real')).toBe('5.0');
    expect(pyStr(9007199254740993n, 'integer')).toBe('9007199254740993');
    expect(pyStr(new Uint8Array([0, 65, 39, 92, 10]), 'blob')).toBe("b'\\x00A\\'\\\\\\n'");
    expect(pyStr('text', 'text')).toBe('text');
  });

  it('right-justifies by code points, as str.rjust does', () => {
    expect(rjust('😀', 3)).toBe('  😀');
    expect(rjust('long', 2)).toBe('long');
  });
});
