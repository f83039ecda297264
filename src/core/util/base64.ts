/**
 * Base64 (RFC 4648, with padding) of bytes, in pure TypeScript: the core has no `btoa`, `Buffer`
 * or `Uint8Array.fromBase64`. The offline report (core/report) carries its data this way: the
 * alphabet has no `<`, `>`, `&`, quote or `/`-`script` sequence that could end an HTML element.
 */
import { WorkbenchError } from '../errors.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** Characters per chunk of `String.fromCharCode` (well under every engine's argument limit). */
const CHUNK = 0x6000;

export function base64Encode(bytes: Uint8Array): string {
  const parts: string[] = [];
  const codes = new Uint16Array(CHUNK);
  let n = 0;
  const flush = () => {
    parts.push(String.fromCharCode(...codes.subarray(0, n)));
    n = 0;
  };
  const full = bytes.length - (bytes.length % 3);
  for (let i = 0; i < full; i += 3) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    codes[n++] = ALPHABET.charCodeAt(v >> 18);
    codes[n++] = ALPHABET.charCodeAt((v >> 12) & 63);
    codes[n++] = ALPHABET.charCodeAt((v >> 6) & 63);
    codes[n++] = ALPHABET.charCodeAt(v & 63);
    if (n === CHUNK) flush();
  }
  const rest = bytes.length - full;
  if (rest > 0) {
    const v = (bytes[full]! << 16) | (rest === 2 ? bytes[full + 1]! << 8 : 0);
    codes[n++] = ALPHABET.charCodeAt(v >> 18);
    codes[n++] = ALPHABET.charCodeAt((v >> 12) & 63);
    codes[n++] = rest === 2 ? ALPHABET.charCodeAt((v >> 6) & 63) : 61; // '='
    codes[n++] = 61;
  }
  if (n > 0) flush();
  return parts.join('');
}

/** True when `text` is nothing but base64 characters (no whitespace either). */
export function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
}

/** Bytes of a base64 text (`where` names its source in the error for anything else). */
export function base64Decode(text: string, where: string): Uint8Array {
  if (!isBase64(text)) {
    throw new WorkbenchError('BAD_FORMAT', 'the data is not base64 (or was cut short)', where);
  }
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const a = DECODE[text.charCodeAt(i)]!;
    const b = DECODE[text.charCodeAt(i + 1)]!;
    const c = text.charCodeAt(i + 2) === 61 ? 0 : DECODE[text.charCodeAt(i + 2)]!;
    const d = text.charCodeAt(i + 3) === 61 ? 0 : DECODE[text.charCodeAt(i + 3)]!;
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = v >> 16;
    if (o < out.length) out[o++] = (v >> 8) & 255;
    if (o < out.length) out[o++] = v & 255;
  }
  return out;
}
