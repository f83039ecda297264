/**
 * A GGUF file's training context (`<architecture>.context_length`), read from its metadata
 * before llama.cpp loads it. The CPU engine needs it up front: llama.cpp's server code (which
 * wllama runs) caps each request at the training context whatever context was allocated, so a
 * context beyond it is asked for by overriding that key at load time (workers/wllama.worker.ts),
 * and the override needs the key's name and the model's own value.
 *
 * Layout (little-endian, versions 2 and 3): the 24-byte header (gguf-header.ts), then each
 * metadata pair: u64 key length, key bytes, u32 value type, value. Keys come in any order (the
 * llama2.c converter writes the whole vocabulary before `general.architecture`), so pairs are
 * read in turn, from a reader of byte ranges: a Blob in the browser, never the whole file at once.
 */
import { EngineError } from './engine-error.ts';
import { GGUF_HEADER_BYTES, checkGgufHeader } from './gguf-header.ts';

/** Reads `length` bytes at `offset` (fewer at the end of the file). */
export type ByteRangeReader = (offset: number, length: number) => Promise<Uint8Array>;

interface GgufTrainingContext {
  /** `general.architecture`, e.g. `llama`, `qwen2`. */
  architecture: string;
  /** The metadata key that holds it: `<architecture>.context_length`. */
  key: string;
  /** Its value, in tokens. */
  contextLength: number;
}

/** Byte sizes of the scalar value types (GGUF's gguf_type). */
const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;
const CHUNK = 1 << 20;

/** A forward cursor over the file, refilled a chunk at a time. */
class Cursor {
  private buf: Uint8Array = new Uint8Array(0);
  private start = 0;
  constructor(
    private readonly read: ByteRangeReader,
    private readonly size: number,
    private readonly fileName: string,
    public pos: number,
  ) {}

  private async need(n: number): Promise<Uint8Array> {
    if (this.pos + n > this.size)
      throw new EngineError(
        'MODEL_REJECTED',
        'the GGUF metadata runs past the end of the file (is the download incomplete?)',
        this.fileName,
      );
    if (this.pos < this.start || this.pos + n > this.start + this.buf.length) {
      this.start = this.pos;
      this.buf = await this.read(this.pos, Math.max(n, CHUNK));
    }
    const at = this.pos - this.start;
    this.pos += n;
    return this.buf.subarray(at, at + n);
  }
  async u32(): Promise<number> {
    const b = await this.need(4);
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16)) + b[3]! * 0x1000000;
  }
  async u64(): Promise<number> {
    const lo = await this.u32();
    const hi = await this.u32();
    if (hi >= 0x200000)
      throw new EngineError('MODEL_REJECTED', 'the GGUF metadata is corrupt (a length beyond 2^53)', this.fileName);
    return hi * 0x100000000 + lo;
  }
  async string(): Promise<string> {
    const n = await this.u64();
    if (n > 65535)
      throw new EngineError(
        'MODEL_REJECTED',
        'the GGUF metadata is corrupt (a key longer than 65535 bytes)',
        this.fileName,
      );
    // Keys and architecture names are ASCII (GGUF's key rule); other strings are skipped, never read.
    return String.fromCharCode(...(await this.need(n)));
  }
  skip(n: number): void {
    this.pos += n;
    if (this.pos > this.size)
      throw new EngineError(
        'MODEL_REJECTED',
        'the GGUF metadata runs past the end of the file (is the download incomplete?)',
        this.fileName,
      );
  }
  /** An integer scalar of type `type`, as a number (context lengths are u32 in practice, any integer type is read). */
  async integer(type: number): Promise<number | null> {
    const size = SCALAR_BYTES[type];
    if (size === undefined || type === 6 || type === 7 || type === 12) {
      await this.skipValue(type);
      return null;
    }
    const b = await this.need(size);
    let v = 0;
    for (let i = size - 1; i >= 0; i--) v = v * 256 + b[i]!;
    return v;
  }
  async skipValue(type: number): Promise<void> {
    const size = SCALAR_BYTES[type];
    if (size !== undefined) return this.skip(size);
    if (type === STRING) return this.skip(await this.u64());
    if (type === ARRAY) {
      const inner = await this.u32();
      const count = await this.u64();
      const innerSize = SCALAR_BYTES[inner];
      if (innerSize !== undefined) return this.skip(innerSize * count);
      for (let i = 0; i < count; i++) await this.skipValue(inner);
      return;
    }
    throw new EngineError('MODEL_REJECTED', `the GGUF metadata is corrupt (unknown value type ${type})`, this.fileName);
  }
}

/**
 * The training context a GGUF declares, or null when its metadata names no architecture or no
 * `<architecture>.context_length` (llama.cpp then cannot load it as a language model either).
 * Throws MODEL_REJECTED (gguf-header.ts's checks, or metadata that runs past the file).
 */
export async function readGgufTrainingContext(
  read: ByteRangeReader,
  size: number,
  fileName: string,
): Promise<GgufTrainingContext | null> {
  const header = checkGgufHeader(await read(0, GGUF_HEADER_BYTES), fileName, size);
  const c = new Cursor(read, size, fileName, GGUF_HEADER_BYTES);
  let architecture: string | null = null;
  const lengths = new Map<string, number>();
  for (let i = 0; i < header.metadataCount; i++) {
    const key = await c.string();
    const type = await c.u32();
    if (key === 'general.architecture' && type === STRING) architecture = await c.string();
    else if (key.endsWith('.context_length')) {
      const v = await c.integer(type);
      if (v !== null) lengths.set(key, v);
    } else await c.skipValue(type);
    if (architecture !== null && lengths.has(`${architecture}.context_length`)) break;
  }
  if (architecture === null) return null;
  const key = `${architecture}.context_length`;
  const contextLength = lengths.get(key);
  return contextLength === undefined ? null : { architecture, key, contextLength };
}
