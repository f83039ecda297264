/**
 * Bytes to text for files people made by hand (BIRD's description CSVs): a byte-order mark
 * picks UTF-8 or UTF-16; otherwise strict UTF-8, falling back to Windows-1252 when the bytes are
 * not valid UTF-8 (BIRD ships both). C1 control characters (U+0080-U+009F), which appear when
 * Windows-1252 text was once read as Latin-1 and saved as UTF-8 (BIRD's `\u0095` bullets), are
 * mapped back to the Windows-1252 characters they stood for.
 */
export type DetectedEncoding = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** Windows-1252 0x80-0x9F; undefined bytes keep their C1 code point. */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function decodeUtf8Strict(b: Uint8Array, start: number): string | null {
  const out: number[] = [];
  let s = '';
  for (let i = start; i < b.length;) {
    const c = b[i]!;
    let cp: number;
    let len: number;
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      cp = c & 0x1f;
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      cp = c & 0x0f;
      len = 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      cp = c & 0x07;
      len = 4;
    } else return null;
    if (i + len > b.length) return null;
    for (let k = 1; k < len; k++) {
      const cc = b[i + k]!;
      if ((cc & 0xc0) !== 0x80) return null;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len === 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len === 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return null;
    out.push(cp);
    i += len;
    if (out.length >= 8192) {
      s += String.fromCodePoint(...out);
      out.length = 0;
    }
  }
  return s + String.fromCodePoint(...out);
}

function decodeUtf16(b: Uint8Array, start: number, littleEndian: boolean): string {
  let s = '';
  for (let i = start; i + 1 < b.length; i += 2) {
    s += String.fromCharCode(littleEndian ? b[i]! | (b[i + 1]! << 8) : (b[i]! << 8) | b[i + 1]!);
  }
  return s;
}

function decodeCp1252(b: Uint8Array): string {
  let s = '';
  for (const c of b) s += String.fromCharCode(c >= 0x80 && c <= 0x9f ? CP1252_HIGH[c - 0x80]! : c);
  return s;
}

function repairC1(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (ch) => String.fromCharCode(CP1252_HIGH[ch.charCodeAt(0) - 0x80]!));
}

export function decodeText(bytes: Uint8Array): { text: string; encoding: DetectedEncoding } {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    const t = decodeUtf8Strict(bytes, 3);
    if (t !== null) return { text: repairC1(t), encoding: 'utf-8-bom' };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return { text: repairC1(decodeUtf16(bytes, 2, true)), encoding: 'utf-16le' };
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return { text: repairC1(decodeUtf16(bytes, 2, false)), encoding: 'utf-16be' };
  const t = decodeUtf8Strict(bytes, 0);
  if (t !== null) return { text: repairC1(t), encoding: 'utf-8' };
  return { text: decodeCp1252(bytes), encoding: 'windows-1252' };
}
