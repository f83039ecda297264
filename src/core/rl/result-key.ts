import { rowKey } from '../compare/value-key.ts';
import type { SqlValue } from '../types.ts';

/**
 * Signature of a query result for self-consistency voting: FNV-1a 64 over the sorted set of
 * row keys (`rowKey`, Python equality), so row order and duplicate rows do not matter and two
 * results that EX would call equal get the same key. Column names are ignored, as in EX.
 *
 * Each key is fed as its UTF-16 length, ':', then its code units (low byte, high byte): the
 * length prefix keeps the concatenation unambiguous. 16 lowercase hex digits.
 */
export function resultKey(rows: readonly (readonly SqlValue[])[]): string {
  const keys = [...new Set(rows.map((r) => rowKey(r)))].sort();
  const h = new Fnv1a64();
  h.addString(String(keys.length) + '#');
  for (const k of keys) {
    h.addString(k.length + ':');
    h.addString(k);
  }
  return h.hex();
}

/**
 * FNV-1a 64 in four 16-bit limbs (no BigInt on the hot path). Offset basis
 * 0xcbf29ce484222325, prime 0x100000001b3 = 2^40 + 0x1b3.
 */
export class Fnv1a64 {
  // Little-endian 16-bit limbs.
  private a = 0x2325;
  private b = 0x8422;
  private c = 0x9ce4;
  private d = 0xcbf2;

  addByte(x: number): void {
    this.a ^= x;
    // h * 0x1b3 + (h << 40), limb by limb; 2^40 shifts by two limbs and 8 bits.
    const a = this.a * 0x1b3;
    let b = this.b * 0x1b3;
    let c = this.c * 0x1b3;
    let d = this.d * 0x1b3;
    c += this.a << 8;
    d += this.b << 8;
    b += a >>> 16;
    c += b >>> 16;
    d += c >>> 16;
    this.a = a & 0xffff;
    this.b = b & 0xffff;
    this.c = c & 0xffff;
    this.d = d & 0xffff;
  }

  addString(s: string): void {
    for (let i = 0; i < s.length; i++) {
      const u = s.charCodeAt(i);
      this.addByte(u & 0xff);
      this.addByte(u >>> 8);
    }
  }

  hex(): string {
    return [this.d, this.c, this.b, this.a].map((x) => x.toString(16).padStart(4, '0')).join('');
  }
}
