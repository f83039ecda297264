/**
 * The files of an import as one list, whether they came loose (a folder picker, drag and drop)
 * or inside a zip. Zip entries are read with zip.js straight from the Blob (random access via
 * the central directory, Zip64 included) and decompressed as a stream, so neither a whole zip
 * nor a whole database is ever held in memory. zip.js runs without its own web workers: this
 * module already runs in the import worker, and the native DecompressionStream does the work.
 */
import { configure, type FileEntry } from '@zip.js/zip.js';
import { WorkbenchError } from '../../core/errors.ts';
import { isDatabasePath, isJunk, normalizePath } from '../../core/import/classify-files.ts';
import { spoolNestedZip, type SpoolHooks } from './nested-zip.ts';
import {
  InflationBudget,
  boundedWritable,
  entryText,
  inflateError,
  readZipEntries,
  type ZipFileEntry,
} from '../zip/zip-entries.ts';

configure({ useWebWorkers: false, useCompressionStream: true });

export interface ImportFile {
  path: string;
  size: number;
  /** A fresh stream of the bytes each call. */
  open(signal?: AbortSignal): ReadableStream<Uint8Array>;
  text(): Promise<string>;
  /** The bytes as a Blob slice, when they are stored as is (loose files, stored zip entries). */
  slice?(start: number, end: number): Blob;
}

function blobFile(path: string, blob: Blob): ImportFile {
  return {
    path,
    size: blob.size,
    open: () => blob.stream() as ReadableStream<Uint8Array>,
    text: () => blob.text(),
    slice: (start, end) => blob.slice(start, end),
  };
}

const ADVICE = 'unzip it with another tool and import the folder';
/** Largest text file read whole (the questions, the gold): about the longest string JavaScript holds. */
const MAX_TEXT_BYTES = 512 * 1024 * 1024;
/** Databases and inner zips are bounded by the ratio and the read's total (src/adapters/zip/zip-entries.ts). */
const maxImportEntryBytes = (p: string) =>
  /\.zip$/i.test(p) || isDatabasePath(p) ? Number.MAX_SAFE_INTEGER : MAX_TEXT_BYTES;

function entryFile(z: ZipFileEntry, zipPath: string): ImportFile {
  const { path, entry } = z;
  const where = `${zipPath}/${path}`;
  // Each read of an entry (hash pass, write pass) is bounded by itself.
  const bounds = () => ({ budget: new InflationBudget(), maxEntryBytes: maxImportEntryBytes(path), advice: ADVICE });
  return {
    path,
    size: entry.uncompressedSize,
    open(signal) {
      // A bad CRC-32, an entry overlapping another or a size past the bounds fails the read, named here.
      const pipe = new TransformStream<Uint8Array, Uint8Array>();
      const writable = boundedWritable(pipe.writable, z, where, bounds());
      entry.getData(writable, { signal, checkSignature: true, checkOverlappingEntry: true }).catch((err: Error) => {
        if (signal?.aborted) return;
        void pipe.writable.abort(inflateError(err, where, ADVICE)).catch(() => undefined);
      });
      return pipe.readable;
    },
    text: () => entryText(z, where, bounds()),
  };
}

/** Where the data of a stored (uncompressed) entry starts: after its local header. */
async function storedEntryBlob(zip: Blob, entry: FileEntry): Promise<Blob> {
  const head = new DataView(await zip.slice(entry.offset, entry.offset + 30).arrayBuffer());
  if (head.getUint32(0, true) !== 0x04034b50) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `${entry.filename} has no local file header where the zip's directory says (the zip is damaged): download it again`,
    );
  }
  const start = entry.offset + 30 + head.getUint16(26, true) + head.getUint16(28, true);
  return zip.slice(start, start + entry.compressedSize);
}

/** Every file inside a zip Blob, nested zips included (a deflated one is spooled to disk first: nested-zip.ts). */
async function zipFiles(
  zipPath: string,
  zip: Blob,
  depth: number,
  hooks: SpoolHooks,
  budget: InflationBudget,
): Promise<ImportFile[]> {
  const entries = await readZipEntries(zip, zipPath, { budget, maxEntryBytes: maxImportEntryBytes, advice: ADVICE });
  const out: ImportFile[] = [];
  for (const z of entries) {
    const { path, entry: e } = z;
    if (/\.zip$/i.test(path)) {
      if (depth > 1) {
        throw new WorkbenchError(
          'BAD_FORMAT',
          `zips nested three deep (${path}) are not read: unzip ${zipPath} and import the folder`,
          zipPath,
        );
      }
      const inner =
        e.compressionMethod === 0
          ? await storedEntryBlob(zip, e)
          : await spoolNestedZip(zipPath, path, e, { ...hooks, budget });
      out.push(...(await zipFiles(`${zipPath}/${path}`, inner, depth + 1, hooks, budget)));
      continue;
    }
    out.push(entryFile(z, zipPath));
  }
  return out;
}

/** Expands zips among the given files; loose files pass through. */
export async function expandFiles(
  files: readonly { path: string; file: Blob }[],
  hooks: SpoolHooks = {},
): Promise<ImportFile[]> {
  const out: ImportFile[] = [];
  for (const { path, file } of files) {
    const p = normalizePath(path);
    if (isJunk(p)) continue;
    if (/\.zip$/i.test(p)) out.push(...(await zipFiles(p, file, 0, hooks, new InflationBudget())));
    else out.push(blobFile(p, file));
  }
  return out;
}
