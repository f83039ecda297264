/**
 * Python's `str()` of sqlite3 values, so that sample rows read as in BIRD's own prompts
 * (`None`, `1.0`, `1e-05`, `b'..'`), and `str.rjust` by code points.
 */
import type { SqlValue } from '../types.ts';
import type { StorageClass } from './schema-source.ts';

/** Python's repr of a float: shortest round-trip digits, exponent form outside [1e-4, 1e16). */
export function pyFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const [mant, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
    return `${mant}e${exp < 0 ? '-' : '+'}${e}`;
  }
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  let s: string;
  if (exp >= 0) {
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    s = `${intPart}.${frac === '' ? '0' : frac}`;
  } else s = `0.${'0'.repeat(-exp - 1)}${digits}`;
  return neg ? `-${s}` : s;
}

function pyBytes(b: Uint8Array): string {
  let s = '';
  for (const c of b) {
    if (c === 0x5c) s += '\\\\';
    else if (c === 0x27) s += "\\'";
    else if (c === 0x0a) s += '\\n';
    else if (c === 0x0d) s += '\\r';
    else if (c === 0x09) s += '\\t';
    else if (c >= 0x20 && c < 0x7f) s += String.fromCharCode(c);
    else s += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return `b'${s}'`;
}

export function pyStr(value: SqlValue, cls: StorageClass): string {
  if (value === null || cls === 'null') return 'None';
  if (value instanceof Uint8Array) return pyBytes(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return cls === 'real' ? pyFloat(value) : String(value);
  return value;
}

export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function rjust(s: string, width: number): string {
  const n = codePoints(s);
  return n >= width ? s : ' '.repeat(width - n) + s;
}
