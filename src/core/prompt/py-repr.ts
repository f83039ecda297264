/**
 * Python's `repr()` of the values sqlite3 returns (int, float, str, bytes) and of a list of them,
 * as OmniSQL prints example values (`example: ['a', "it's", 1.5]`).
 */
import type { SqlValue } from '../types.ts';
import { pyFloat } from './py-format.ts';
import type { StorageClass } from './schema-source.ts';

/** Characters Python's str.isprintable() rejects: categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than ' '. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;

function escapeCodePoint(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp < 0x100) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** Python's repr of a str: single quotes unless the text has ' and no ", then double quotes. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (NON_PRINTABLE.test(ch)) out += escapeCodePoint(ch);
    else out += ch;
  }
  return out + quote;
}

/** Python's repr of bytes, with the same choice of quotes as str. */
function pyBytesRepr(b: Uint8Array): string {
  const hasSingle = b.includes(0x27);
  const quote = hasSingle && !b.includes(0x22) ? 0x22 : 0x27;
  let out = '';
  for (const c of b) {
    if (c === quote || c === 0x5c) out += `\\${String.fromCharCode(c)}`;
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  const q = String.fromCharCode(quote);
  return `b${q}${out}${q}`;
}

function pyRepr(value: SqlValue, cls: StorageClass): string {
  if (value === null || cls === 'null') return 'None';
  if (value instanceof Uint8Array) return pyBytesRepr(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return cls === 'real' ? pyFloat(value) : String(value);
  return pyStrRepr(value);
}

/** Python's repr of a list. */
export function pyListRepr(values: readonly SqlValue[], classes: readonly StorageClass[]): string {
  return `[${values.map((v, i) => pyRepr(v, classes[i]!)).join(', ')}]`;
}
