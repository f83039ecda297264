/**
 * The observation's table text against pandas 2.3.3's own `DataFrame(rows).to_string(index=False)`
 * (fixtures/pandas-frames.json, made by running pandas; fixtures/README.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dataFrameToString, pyExp, pyFixed } from '../../../src/core/episode/pandas-frame.ts';
import { decodeRows, type FixtureCell } from './py-values.ts';

const cases = (
  JSON.parse(readFileSync(new URL('./fixtures/pandas-frames.json', import.meta.url), 'utf8')) as {
    cases: { rows: FixtureCell[][]; text: string }[];
  }
).cases;

describe('dataFrameToString', () => {
  it('equals pandas byte for byte on 240 random frames of ints, floats, texts, bytes and None', () => {
    const wrong = cases
      .map((c, i) => ({ i, got: dataFrameToString(decodeRows(c.rows)), want: c.text }))
      .filter((r) => r.got !== r.want);
    expect(wrong.slice(0, 3)).toEqual([]);
    expect(wrong.length).toBe(0);
    expect(cases.length).toBe(240);
  });

  it('renders no rows as pandas renders an empty frame', () => {
    expect(dataFrameToString([])).toBe('Empty DataFrame\nColumns: []\nIndex: []');
  });
});

describe('Python float formatting', () => {
  it('rounds the exact binary value half to even, as Python does and toFixed does not', () => {
    // 0.0078125 = 1/128 exactly: the 7th decimal is a tie.
    expect(pyFixed(0.0078125, 6)).toBe('0.007812');
    expect((0.0078125).toFixed(6)).toBe('0.007813');
    expect(pyFixed(-1e-9, 6)).toBe('-0.000000');
    expect(pyFixed(1e22, 6)).toBe('10000000000000000000000.000000');
    expect(pyExp(1e-7, 6)).toBe('1.000000e-07');
    expect(pyExp(9.9999995e-7, 6)).toBe('9.999999e-07');
    expect(pyExp(5e-324, 6)).toBe('4.940656e-324');
    expect(pyExp(0, 6)).toBe('0.000000e+00');
  });
});
