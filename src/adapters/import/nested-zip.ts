/**
 * A deflated zip inside a zip (BIRD's dev.zip holds dev_databases.zip, train.zip holds
 * train_databases.zip, both compressed) cannot be read in place: zip.js needs random access to
 * the inner zip's central directory. So the inner entry is inflated as a stream, in pieces, to
 * disk-backed storage, and that copy is then read like any zip:
 * - in the import worker, a temporary file in the Origin Private File System (OPFS), written
 *   through a FileSystemWritableFileStream and read back as a File (random access, on disk);
 * - where OPFS is missing, a Blob assembled from 8 MiB Blob parts, which the browser may keep on
 *   disk.
 * No step holds the inner zip or a database whole: memory is bounded by zip.js's inflate window
 * and one part. The CRC-32 and overlapping-entry checks of zip.js are on, so a damaged inner
 * entry fails with a message naming it. Spooled files are deleted by `releaseSpooledFiles` when
 * the import ends, and any left by an interrupted import are deleted before the next spool.
 */
import type { FileEntry } from '@zip.js/zip.js';
import { WorkbenchError, isCancellation, CancelledError } from '../../core/errors.ts';
import { InflationBudget, boundedWritable } from '../zip/zip-entries.ts';

const SPOOL_DIR = 'import-spool';
const PART_BYTES = 8 * 1024 * 1024;
const spooled: string[] = [];
let cleaned = false;

export interface SpoolHooks {
  signal?: AbortSignal;
  /** The inflation budget of the whole import (src/adapters/zip/zip-entries.ts); a fresh one when absent. */
  budget?: InflationBudget;
  onBytes?: (done: number, total: number) => void;
}

async function spoolDir(): Promise<FileSystemDirectoryHandle | null> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  if (!storage?.getDirectory) return null;
  try {
    const root = await storage.getDirectory();
    const dir = await root.getDirectoryHandle(SPOOL_DIR, { create: true });
    if (!cleaned) {
      cleaned = true;
      // Files of an import that was interrupted (closed tab) before it could delete them.
      for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys())
        await dir.removeEntry(name).catch(() => undefined);
    }
    return dir;
  } catch {
    return null;
  }
}

/** A writable that keeps what it receives as Blob parts of about 8 MiB. */
function blobPartsSink(): { writable: WritableStream<Uint8Array>; blob(): Blob } {
  const parts: Blob[] = [];
  let pending: Uint8Array<ArrayBuffer>[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pendingBytes === 0) return;
    parts.push(new Blob(pending));
    pending = [];
    pendingBytes = 0;
  };
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      pending.push(chunk.slice());
      pendingBytes += chunk.length;
      if (pendingBytes >= PART_BYTES) flush();
    },
    close: flush,
  });
  return { writable, blob: () => new Blob(parts, { type: 'application/zip' }) };
}

function damaged(entryPath: string, zipPath: string, err: unknown): WorkbenchError {
  const msg = (err as Error).message ?? String(err);
  return new WorkbenchError(
    'BAD_FORMAT',
    `the inner zip ${entryPath} is damaged (${msg}): download ${zipPath.split('/')[0]} again, or unzip it with another tool and import the folder`,
    `${zipPath}/${entryPath}`,
  );
}

/** Inflates the inner zip entry to disk-backed storage and returns it as a Blob to read like any zip. */
export async function spoolNestedZip(
  zipPath: string,
  entryPath: string,
  entry: FileEntry,
  hooks: SpoolHooks = {},
): Promise<Blob> {
  const total = entry.uncompressedSize;
  const options = {
    signal: hooks.signal,
    checkSignature: true,
    checkOverlappingEntry: true,
    // zip.js counts the entry's compressed bytes read: done / max is the share inflated.
    onprogress: async (done: number, max: number) => hooks.onBytes?.(done, max),
  };
  const dir = await spoolDir();
  // The inner zip's bytes are counted while they stream: a forged size or a bomb stops at the bound.
  const bounded = (w: WritableStream<Uint8Array>) =>
    boundedWritable(w, { path: entryPath, entry }, `${zipPath}/${entryPath}`, {
      budget: hooks.budget ?? new InflationBudget(),
      maxEntryBytes: Number.MAX_SAFE_INTEGER,
      advice: 'unzip it with another tool and import the folder',
    });
  try {
    if (dir) {
      const name = `${crypto.randomUUID()}.zip`;
      spooled.push(name);
      const handle = await dir.getFileHandle(name, { create: true });
      const writable = await handle.createWritable();
      await entry.getData(bounded(writable), options);
      return await handle.getFile();
    }
    const sink = blobPartsSink();
    await entry.getData(bounded(sink.writable), options);
    return sink.blob();
  } catch (err) {
    if (isCancellation(err) || hooks.signal?.aborted) throw new CancelledError('import cancelled');
    if (err instanceof WorkbenchError) throw err;
    if ((err as { cause?: unknown })?.cause instanceof WorkbenchError) throw (err as { cause: WorkbenchError }).cause;
    if ((err as Error)?.name === 'QuotaExceededError') {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `there is not enough browser storage to unpack ${entryPath} (${total} bytes) before importing it: free space, or unzip it and import the folder`,
        `${zipPath}/${entryPath}`,
      );
    }
    throw damaged(entryPath, zipPath, err);
  }
}

/** Deletes the spooled copies of this import (call when the import ends, however it ends). */
export async function releaseSpooledFiles(): Promise<void> {
  const dir = spooled.length ? await spoolDir() : null;
  while (spooled.length) {
    const name = spooled.pop()!;
    await dir?.removeEntry(name).catch(() => undefined);
  }
}
