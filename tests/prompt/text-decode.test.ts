import { describe, expect, it } from 'vitest';
import { decodeText } from '../../src/core/prompt/text-decode.ts';

const bytes = (...b: number[]) => new Uint8Array(b);
const utf8 = (s: string) => new TextEncoder().encode(s);

describe('decodeText', () => {
  it('reads UTF-8', () => {
    expect(decodeText(utf8('café – ok'))).toEqual({ text: 'café – ok', encoding: 'utf-8' });
  });

  it('drops a UTF-8 byte-order mark', () => {
    expect(decodeText(bytes(0xef, 0xbb, 0xbf, 0x61, 0x2c, 0x62))).toEqual({ text: 'a,b', encoding: 'utf-8-bom' });
  });

  it('reads UTF-16 with either byte order', () => {
    expect(decodeText(bytes(0xff, 0xfe, 0x61, 0x00, 0xe9, 0x00))).toEqual({ text: 'aé', encoding: 'utf-16le' });
    expect(decodeText(bytes(0xfe, 0xff, 0x00, 0x61, 0x00, 0xe9))).toEqual({ text: 'aé', encoding: 'utf-16be' });
  });

  it('falls back to Windows-1252 when the bytes are not UTF-8 (BIRD budget.csv bullets)', () => {
    expect(decodeText(bytes(0x95, 0x20, 0x43, 0x6c, 0x6f, 0x73, 0x65, 0x64, 0x20, 0xe9))).toEqual({
      text: '• Closed é',
      encoding: 'windows-1252',
    });
  });

  it('maps C1 controls left by a Latin-1 round trip back to Windows-1252 (BIRD atom.csv bullets)', () => {
    expect(decodeText(bytes(0xc2, 0x95, 0x20, 0x63, 0x6c)).text).toBe('• cl');
    expect(decodeText(bytes(0xc2, 0x93, 0x78, 0xc2, 0x94)).text).toBe('“x”');
  });

  it('rejects overlong and surrogate UTF-8 sequences as UTF-8', () => {
    expect(decodeText(bytes(0xc0, 0xaf)).encoding).toBe('windows-1252');
    expect(decodeText(bytes(0xed, 0xa0, 0x80)).encoding).toBe('windows-1252');
  });

  it('reads four-byte UTF-8 characters', () => {
    expect(decodeText(utf8('a😀b')).text).toBe('a😀b');
  });
});
