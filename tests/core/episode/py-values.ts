/** Decodes the fixtures' typed cells ({i}, {f}, {s}, {b} or null, written by the Python driver). */
import type { PyValue } from '../../../src/core/episode/pandas-frame.ts';

export type FixtureCell = null | { i: string } | { f: string } | { s: string } | { b: string };

export function decodeCell(c: FixtureCell): PyValue {
  if (c === null) return null;
  if ('i' in c) return { kind: 'int', value: BigInt(c.i) };
  if ('f' in c) return { kind: 'float', value: c.f === 'inf' ? Infinity : c.f === '-inf' ? -Infinity : Number(c.f) };
  if ('s' in c) return { kind: 'str', value: c.s };
  const hex = c.b;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return { kind: 'bytes', value: bytes };
}

export const decodeRows = (rows: FixtureCell[][]): PyValue[][] => rows.map((r) => r.map(decodeCell));
