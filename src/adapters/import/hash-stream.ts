/**
 * Streaming reads of import files: sha256 computed incrementally (the browser's implementation
 * of the core's `Sha256`, hash-wasm: crypto.subtle cannot hash in pieces), the SQLite header
 * checked on the first bytes, progress reported.
 */
import { createSHA256 } from 'hash-wasm';
import { WorkbenchError, CancelledError } from '../../core/errors.ts';
import { sha256OfPieces, type Sha256 } from '../../core/util/sha256.ts';
import { decodeUtf8File } from '../../core/util/utf8-text.ts';
import type { ImportFile } from './import-files.ts';

const SQLITE_HEADER = 'SQLite format 3\u0000';

/** The browser's SHA-256 (hash-wasm: WebAssembly, fast on 1 GB databases), the core's `Sha256`; it starts initialised. */
export const wasmSha256 = (): Promise<Sha256> => createSHA256();

/** sha256 and size of bytes, a text (as UTF-8) or a Blob (read as a stream: a large file is never held whole). */
export async function sha256Of(data: Uint8Array | string | Blob): Promise<{ sha256: string; bytes: number }> {
  if (typeof data === 'string') return sha256Of(new TextEncoder().encode(data));
  if (data instanceof Uint8Array) return sha256OfPieces(wasmSha256, [data]);
  return sha256OfPieces(wasmSha256, blobPieces(data.stream() as ReadableStream<Uint8Array>));
}

async function* blobPieces(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

export function abortError(): CancelledError {
  return new CancelledError('import cancelled');
}

/** BAD_DATABASE unless `head` (the first 16+ bytes, or all of a shorter file) is SQLite's header. */
export function checkSqliteHeader(head: Uint8Array, path: string, dbId: string): void {
  const text = String.fromCharCode(...head.subarray(0, 16));
  if (head.length >= 16 && text === SQLITE_HEADER) return;
  const shown = JSON.stringify(text.replace(/[^\x20-\x7e]/g, '?').slice(0, 15));
  throw new WorkbenchError(
    'BAD_DATABASE',
    head.length === 0
      ? `the database file of ${dbId} is empty: replace it with the real ${dbId}.sqlite and import again`
      : `not an SQLite database (it starts with ${shown} instead of "SQLite format 3"): ` +
          `replace it with the real ${dbId}.sqlite and import again`,
    path,
  );
}

interface ReadHooks {
  signal?: AbortSignal;
  onBytes?: (doneBytes: number) => void;
  /** Called with the first 16 bytes (or fewer at the end of a short file) before anything else. */
  onHead?: (head: Uint8Array) => void;
  /** Every piece of the file, in order, after it was hashed. */
  onData?: (piece: Uint8Array) => Promise<void> | void;
}

/** Streams a file once: sha256 of all of it, its size, and each piece to `onData`. */
export async function streamFile(file: ImportFile, hooks: ReadHooks = {}): Promise<{ sha256: string; bytes: number }> {
  const hasher = await wasmSha256();
  const reader = file.open(hooks.signal).getReader();
  let head: Uint8Array | null = hooks.onHead ? new Uint8Array(0) : null;
  let bytes = 0;
  try {
    for (;;) {
      if (hooks.signal?.aborted) throw abortError();
      const { done, value } = await reader.read();
      if (done) break;
      if (head && head.length < 16) {
        const joined = new Uint8Array(head.length + Math.min(16 - head.length, value.length));
        joined.set(head);
        joined.set(value.subarray(0, joined.length - head.length), head.length);
        head = joined;
        if (head.length >= 16) hooks.onHead!(head);
      }
      hasher.update(value);
      bytes += value.length;
      if (hooks.onData) await hooks.onData(value);
      hooks.onBytes?.(bytes);
    }
    if (head && head.length < 16) hooks.onHead!(head);
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }
  return { sha256: hasher.digest('hex'), bytes };
}

/** UTF-8 text of a small file with its sha256 and size (question, gold, predictions files); another encoding is an error. */
export async function readTextFile(
  file: ImportFile,
  signal?: AbortSignal,
): Promise<{ text: string; sha256: string; bytes: number }> {
  const pieces: Uint8Array[] = [];
  const { sha256, bytes } = await streamFile(file, { signal, onData: (p) => void pieces.push(p.slice()) });
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const p of pieces) {
    all.set(p, at);
    at += p.length;
  }
  return { text: decodeUtf8File(all, file.path), sha256, bytes };
}
