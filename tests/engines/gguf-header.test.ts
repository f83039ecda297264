import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isEngineError } from '../../src/core/engine/engine-error.ts';
import { GGUF_HEADER_BYTES, checkGgufHeader } from '../../src/core/engine/gguf-header.ts';
import { sharedData } from '../helpers/shared-data.ts';

function head(...parts: Array<string | number[]>): Uint8Array {
  const bytes: number[] = [];
  for (const p of parts) bytes.push(...(typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p));
  while (bytes.length < GGUF_HEADER_BYTES) bytes.push(0);
  return new Uint8Array(bytes);
}
const u32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255];
const u64 = (n: number) => [...u32(n), 0, 0, 0, 0];

function rejection(bytes: Uint8Array, size = 1000): string {
  try {
    checkGgufHeader(bytes, 'model.gguf', size);
  } catch (err) {
    expect(isEngineError(err)).toBe(true);
    expect((err as { code: string }).code).toBe('MODEL_REJECTED');
    return (err as Error).message;
  }
  throw new Error('expected a rejection');
}

describe('checkGgufHeader', () => {
  it('accepts the real stories260K.gguf (version 3)', () => {
    const file = readFileSync(sharedData('models', 'stories260K.gguf'));
    expect(checkGgufHeader(file.subarray(0, GGUF_HEADER_BYTES), 'stories260K.gguf', file.length)).toEqual({
      version: 3,
      tensorCount: 48,
      metadataCount: 19,
    });
  });

  it('rejects the real GGUF v1 file and says to re-convert it with a current llama.cpp', () => {
    const file = readFileSync(sharedData('models', 'stories260K-gguf-v1-unsupported.gguf'));
    const name = path.basename('stories260K-gguf-v1-unsupported.gguf');
    expect(() => checkGgufHeader(file.subarray(0, 24), name, file.length)).toThrow(
      'stories260K-gguf-v1-unsupported.gguf: GGUF version 1 is obsolete and current llama.cpp (and so this workbench) cannot load it: ' +
        're-convert the original weights with a current llama.cpp (convert_hf_to_gguf.py), or download a recent GGUF of the model',
    );
  });

  it('accepts version 2', () => {
    expect(checkGgufHeader(head('GGUF', u32(2), u64(3), u64(4)), 'm', 100).version).toBe(2);
  });

  it.each<[string, Uint8Array, number, RegExp]>([
    ['a file shorter than the header', head('GGUF'), 10, /only 10 bytes: too short to be a GGUF model/],
    [
      'a file that is not GGUF',
      head('PK\u0003\u0004'),
      1000,
      /not a GGUF model: the file starts with "PK\.\." instead of "GGUF"/,
    ],
    ['zeros (what wllama loads with nVocab 0)', new Uint8Array(24), 1000, /not a GGUF model/],
    [
      'a legacy GGJT file',
      head('tjgg', u32(3)),
      1000,
      /this is a GGJT file, the format llama.cpp used before GGUF.*re-convert/,
    ],
    ['a big-endian GGUF', head('GGUF', [0, 0, 0, 3]), 1000, /big-endian/],
    [
      'a version newer than 3',
      head('GGUF', u32(4), u64(1), u64(1)),
      1000,
      /GGUF version 4 is not supported \(supported: 2, 3\): the file is newer/,
    ],
    ['impossible counts', head('GGUF', u32(3), [255, 255, 255, 255, 255, 255, 255, 255], u64(1)), 1000, /corrupt/],
  ])('rejects %s with a sentence saying what to do', (_title, bytes, size, message) => {
    expect(rejection(bytes, size)).toMatch(message);
  });
});
