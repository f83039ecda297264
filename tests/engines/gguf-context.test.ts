/**
 * readGgufTrainingContext: the training context a GGUF declares, read from its metadata before
 * llama.cpp loads it (the CPU engine overrides it to allocate a longer context). The real
 * stories260K.gguf writes its 512-token vocabulary before `general.architecture`; the synthetic
 * files below put the keys in other orders and types, and cut the file short.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readGgufTrainingContext, type ByteRangeReader } from '../../src/core/engine/gguf-context.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { rejectionOf } from '../helpers/errors.ts';

const reader =
  (bytes: Uint8Array, reads: number[] = []): ByteRangeReader =>
  async (offset, length) => {
    reads.push(length);
    return bytes.subarray(offset, offset + length);
  };

const le = (n: number, size: number) => {
  const out: number[] = [];
  for (let i = 0; i < size; i++) out.push(Math.floor(n / 256 ** i) % 256);
  return out;
};
const str = (s: string) => [...le(s.length, 8), ...[...s].map((c) => c.charCodeAt(0))];

/** A GGUF v3 file of metadata only: each pair as [key, type, value bytes]. */
function gguf(pairs: Array<[string, number, number[]]>): Uint8Array {
  const bytes = [...[0x47, 0x47, 0x55, 0x46], ...le(3, 4), ...le(0, 8), ...le(pairs.length, 8)];
  for (const [k, type, v] of pairs) bytes.push(...str(k), ...le(type, 4), ...v);
  return new Uint8Array(bytes);
}

describe('readGgufTrainingContext', () => {
  it('reads the real stories260K.gguf: llama, 2048 tokens, past its vocabulary arrays, in chunks', async () => {
    const file = new Uint8Array(readFileSync(sharedData('models', 'stories260K.gguf')));
    const reads: number[] = [];
    expect(await readGgufTrainingContext(reader(file, reads), file.length, 'stories260K.gguf')).toEqual({
      architecture: 'llama',
      key: 'llama.context_length',
      contextLength: 2048,
    });
    expect(Math.max(...reads)).toBeLessThanOrEqual(1 << 20);
  });

  it('finds the key before or after the architecture, in any integer type, past a string array', async () => {
    const tokens = [...le(8, 4), ...le(2, 8), ...str('<s>'), ...str('</s>')];
    const before = gguf([
      ['qwen2.context_length', 10, le(32768, 8)],
      ['tokenizer.ggml.tokens', 9, tokens],
      ['general.architecture', 8, str('qwen2')],
    ]);
    expect(await readGgufTrainingContext(reader(before), before.length, 'q.gguf')).toEqual({
      architecture: 'qwen2',
      key: 'qwen2.context_length',
      contextLength: 32768,
    });
    const after = gguf([
      ['general.architecture', 8, str('phi3')],
      ['general.name', 8, str('Phi 3')],
      ['phi3.context_length', 4, le(4096, 4)],
    ]);
    expect((await readGgufTrainingContext(reader(after), after.length, 'p.gguf'))?.contextLength).toBe(4096);
  });

  it('gives null when the metadata names no architecture or no context length of it', async () => {
    const noArch = gguf([['llama.context_length', 4, le(2048, 4)]]);
    expect(await readGgufTrainingContext(reader(noArch), noArch.length, 'a.gguf')).toBeNull();
    const otherKey = gguf([
      ['general.architecture', 8, str('llama')],
      ['bert.context_length', 4, le(512, 4)],
    ]);
    expect(await readGgufTrainingContext(reader(otherKey), otherKey.length, 'b.gguf')).toBeNull();
  });

  it('refuses a file cut inside its metadata, naming the file and what to do', async () => {
    const whole = gguf([
      ['general.architecture', 8, str('llama')],
      ['llama.context_length', 4, le(2048, 4)],
    ]);
    const cut = whole.subarray(0, whole.length - 3);
    const err = await rejectionOf(readGgufTrainingContext(reader(cut), cut.length, 'cut.gguf'));
    expect(err).toMatchObject({ code: 'MODEL_REJECTED' });
    expect(err.message).toMatch(/cut\.gguf.*runs past the end of the file \(is the download incomplete\?\)/);
  });
});
