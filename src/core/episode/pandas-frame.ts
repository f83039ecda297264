/**
 * `pandas.DataFrame(rows).to_string(index=False)` for rows of Python sqlite3 values, as SkyRL's
 * SQL tool renders a probe's result (skyrl-gym/skyrl_gym/tools/sql.py). Reproduced from pandas
 * 2.3.3 (the version SkyRL's lock file pins; pandas/io/formats/format.py and printing.py) for the
 * values SQLite can return (int, float, str, bytes, None), and checked against pandas' own output
 * (tests/core/episode/fixtures/pandas-frames.json):
 * - each column's dtype is inferred as pandas does from a list of tuples: all ints: int64; ints
 *   and floats, with or without None (None becomes NaN): float64; anything else: object;
 * - int64 prints `str(v)`; float64 prints `f"{v:.6f}"` (NaN as `NaN`), then trims trailing zeros
 *   equally over the column (keeping one), and switches the column to `f"{v:.6e}"` when a value is
 *   below 1e-6 (not 0), or when one is over 1e6 and the longest text is over 12 characters;
 * - object columns print None as `None`, a float as `f"{v: .6f}"` with trailing zeros cut (note
 *   the leading space), an int as `str(v)`, text with tab, newline and CR escaped (`\t`), bytes as
 *   their repr;
 * - column labels are 0, 1, ...; numeric columns' labels get a leading space; every column is
 *   right-justified to its widest text (by code points), columns are joined by one space;
 * - no rows: `Empty DataFrame\nColumns: []\nIndex: []`.
 */
import type { SqlValue } from '../types.ts';
import type { StorageClass } from '../prompt/schema-source.ts';
import { codePoints, rjust } from '../prompt/py-format.ts';

/** A value as Python's sqlite3 returns it. */
export type PyValue =
  | null
  | { kind: 'int'; value: bigint }
  | { kind: 'float'; value: number }
  | { kind: 'str'; value: string }
  | { kind: 'bytes'; value: Uint8Array };

/** A SQLite value and its storage class (sql.js returns 1.0 as the number 1) as Python sees it. */
export function pyValue(value: SqlValue, cls: StorageClass): PyValue {
  if (value === null || cls === 'null') return null;
  if (value instanceof Uint8Array) return { kind: 'bytes', value };
  if (typeof value === 'string') return { kind: 'str', value };
  if (cls === 'real') return { kind: 'float', value: Number(value) };
  if (typeof value === 'bigint') return { kind: 'int', value };
  return Number.isInteger(value) ? { kind: 'int', value: BigInt(value) } : { kind: 'float', value };
}

/** A key that is equal for equal Python values (1 == 1.0, as in a frozenset), for de-duplicating rows. */
export function pyKey(v: PyValue): string {
  if (v === null) return 'N';
  switch (v.kind) {
    case 'int':
      return `n${v.value}`;
    case 'float':
      return Number.isInteger(v.value) && Number.isFinite(v.value) ? `n${BigInt(v.value)}` : `f${v.value}`;
    case 'str':
      return `s${v.value}`;
    case 'bytes':
      return `b${Array.from(v.value, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  }
}

// ---- exact decimal formatting of doubles (Python rounds the exact binary value half to even) ----

/** |x| as num / den, exactly. */
function exactRatio(x: number): { num: bigint; den: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  const mant = expBits === 0 ? frac : frac | (1n << 52n);
  const e2 = (expBits === 0 ? 1 : expBits) - 1075;
  return e2 >= 0 ? { num: mant << BigInt(e2), den: 1n } : { num: mant, den: 1n << BigInt(-e2) };
}

function roundHalfEven(num: bigint, den: bigint): bigint {
  const q = num / den;
  const r2 = (num % den) * 2n;
  if (r2 > den || (r2 === den && q % 2n === 1n)) return q + 1n;
  return q;
}

const negative = (x: number) => x < 0 || Object.is(x, -0);

/** Python's `f"{x:.{digits}f}"`. */
export function pyFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const { num, den } = exactRatio(x);
  const n = roundHalfEven(num * 10n ** BigInt(digits), den).toString();
  const padded = n.padStart(digits + 1, '0');
  const body = digits === 0 ? padded : `${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
  return negative(x) ? `-${body}` : body;
}

/** Python's `f"{x:.{digits}e}"`. */
export function pyExp(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const sign = negative(x) ? '-' : '';
  let mantissa: bigint;
  let k: number;
  if (x === 0) {
    mantissa = 0n;
    k = 0;
  } else {
    const { num, den } = exactRatio(x);
    k = Math.floor(Math.log10(Math.abs(x)));
    // Correct the estimate so that 10^k <= |x| < 10^(k+1), exactly.
    const pow = (e: number) => 10n ** BigInt(Math.abs(e));
    const atLeast = (e: number) => (e >= 0 ? num >= den * pow(e) : num * pow(e) >= den);
    while (!atLeast(k)) k--;
    while (atLeast(k + 1)) k++;
    const shift = digits - k;
    mantissa = shift >= 0 ? roundHalfEven(num * pow(shift), den) : roundHalfEven(num, den * pow(shift));
    if (mantissa === 10n ** BigInt(digits + 1)) {
      mantissa /= 10n;
      k++;
    }
  }
  const m = mantissa.toString().padStart(digits + 1, '0');
  const body = digits === 0 ? m : `${m[0]}.${m.slice(1)}`;
  const e = String(Math.abs(k)).padStart(2, '0');
  return `${sign}${body}e${k < 0 ? '-' : '+'}${e}`;
}

// ---- pandas ----

const PRECISION = 6; // display.precision

type Dtype = 'int64' | 'float64' | 'object';

function inferDtype(column: readonly PyValue[]): Dtype {
  let ints = 0;
  let floats = 0;
  let nulls = 0;
  for (const v of column) {
    if (v === null) nulls++;
    else if (v.kind === 'int') ints++;
    else if (v.kind === 'float') floats++;
    else return 'object';
  }
  if (ints + floats === 0) return 'object';
  if (floats === 0 && nulls === 0) return 'int64';
  return 'float64';
}

const asNumber = (v: PyValue): number =>
  v === null ? NaN : v.kind === 'int' ? Number(v.value) : v.kind === 'float' ? v.value : NaN;

const NUMBER_WITH_DECIMAL = /^\s*[+-]?[0-9]+\.[0-9]*$/;

/** pandas' `_trim_zeros_float`: cut trailing zeros equally from every decimal number, keep one. */
function trimZerosFloat(values: string[]): string[] {
  let trimmed = values;
  const shouldTrim = (xs: string[]) => {
    const numbers = xs.filter((x) => NUMBER_WITH_DECIMAL.test(x));
    return numbers.length > 0 && numbers.every((x) => x.endsWith('0'));
  };
  while (shouldTrim(trimmed)) trimmed = trimmed.map((x) => (NUMBER_WITH_DECIMAL.test(x) ? x.slice(0, -1) : x));
  return trimmed.map((x) => (NUMBER_WITH_DECIMAL.test(x) && x.endsWith('.') ? `${x}0` : x));
}

function formatFloatColumn(values: readonly number[]): string[] {
  const withFormat = (f: (v: number) => string) => trimZerosFloat(values.map((v) => (Number.isNaN(v) ? 'NaN' : f(v))));
  let out = withFormat((v) => pyFixed(v, PRECISION));
  const tooLong = out.length > 0 && Math.max(...out.map((s) => s.length)) > PRECISION + 6;
  const hasLarge = values.some((v) => Math.abs(v) > 1e6);
  const hasSmall = values.some((v) => Math.abs(v) < 10 ** -PRECISION && Math.abs(v) > 0);
  if (hasSmall || (tooLong && hasLarge)) out = withFormat((v) => pyExp(v, PRECISION));
  return out;
}

function escapeText(s: string): string {
  return s.replace(/[\t\n\r]/g, (c) => (c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** Python's repr of bytes. */
function pyBytesRepr(b: Uint8Array): string {
  let s = '';
  let hasSingle = false;
  let hasDouble = false;
  for (const c of b) {
    if (c === 0x27) hasSingle = true;
    if (c === 0x22) hasDouble = true;
  }
  const quote = hasSingle && !hasDouble ? '"' : "'";
  for (const c of b) {
    if (c === 0x5c) s += '\\\\';
    else if (c === quote.charCodeAt(0)) s += `\\${quote}`;
    else if (c === 0x0a) s += '\\n';
    else if (c === 0x0d) s += '\\r';
    else if (c === 0x09) s += '\\t';
    else if (c >= 0x20 && c < 0x7f) s += String.fromCharCode(c);
    else s += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return `b${quote}${s}${quote}`;
}

function formatObject(v: PyValue): string {
  if (v === null) return 'None';
  switch (v.kind) {
    case 'float': {
      // `_trim_zeros_single_float(f"{x: .6f}")`
      const f = pyFixed(v.value, PRECISION);
      let s = f.startsWith('-') ? f : ` ${f}`;
      s = s.replace(/0+$/, '');
      return s.endsWith('.') ? `${s}0` : s;
    }
    case 'int':
      return v.value.toString();
    case 'str':
      return escapeText(v.value);
    case 'bytes':
      return escapeText(pyBytesRepr(v.value));
  }
}

/** `pd.DataFrame(rows).to_string(index=False)`; rows are tuples of one length. */
export function dataFrameToString(rows: readonly (readonly PyValue[])[]): string {
  if (rows.length === 0) return 'Empty DataFrame\nColumns: []\nIndex: []';
  const width = rows[0]!.length;
  const columns: string[][] = [];
  for (let c = 0; c < width; c++) {
    const cells = rows.map((r) => r[c] ?? null);
    const dtype = inferDtype(cells);
    const label = dtype === 'object' ? String(c) : ` ${c}`;
    const texts =
      dtype === 'int64'
        ? cells.map((v) => (v !== null && v.kind === 'int' ? v.value.toString() : ''))
        : dtype === 'float64'
          ? formatFloatColumn(cells.map(asNumber))
          : cells.map(formatObject);
    const w = Math.max(codePoints(label), ...texts.map(codePoints));
    columns.push([rjust(label, w), ...texts.map((t) => rjust(t, w))]);
  }
  const lines: string[] = [];
  for (let i = 0; i <= rows.length; i++) lines.push(columns.map((col) => col[i]).join(' '));
  return lines.join('\n');
}
