/**
 * The files of an import as one list, whether they came loose (a folder picker, drag and drop)
 * or inside a zip. Zip entries are read with zip.js straight from the Blob (random access via
 * the central directory, Zip64 included) and decompressed as a stream, so neither a whole zip
 * nor a whole database is ever held in memory. zip.js runs without its own web workers: this
 * module already runs in the import worker, and the native DecompressionStream does the work.
 */
import { BlobReader, TextWriter, ZipReader, configure, type Entry, type FileEntry } from '@zip.js/zip.js';
import { WorkbenchError } from '../../core/errors.ts';
import { isJunk, normalizePath } from './classify-files.ts';

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

function entryFile(path: string, entry: FileEntry): ImportFile {
  return {
    path,
    size: entry.uncompressedSize,
    open(signal) {
      const pipe = new TransformStream<Uint8Array, Uint8Array>();
      entry.getData(pipe.writable, { signal }).catch(() => {
        // the error reaches the reader through the aborted pipe
      });
      return pipe.readable;
    },
    text: () => entry.getData(new TextWriter()),
  };
}

/** Where the data of a stored (uncompressed) entry starts: after its local header. */
async function storedEntryBlob(zip: Blob, entry: FileEntry): Promise<Blob> {
  const head = new DataView(await zip.slice(entry.offset, entry.offset + 30).arrayBuffer());
  if (head.getUint32(0, true) !== 0x04034b50) throw new Error('bad local header');
  const start = entry.offset + 30 + head.getUint16(26, true) + head.getUint16(28, true);
  return zip.slice(start, start + entry.compressedSize);
}

/** Every file inside a zip Blob, nested zips included when they are stored uncompressed. */
async function zipFiles(zipPath: string, zip: Blob, depth: number): Promise<ImportFile[]> {
  let entries: Entry[];
  try {
    entries = await new ZipReader(new BlobReader(zip)).getEntries();
  } catch (err) {
    throw new WorkbenchError('BAD_FORMAT', `not a readable zip file (${(err as Error).message}); download it again`, zipPath);
  }
  const out: ImportFile[] = [];
  for (const e of entries) {
    if (e.directory || isJunk(e.filename)) continue;
    const path = normalizePath(e.filename);
    if (/\.zip$/i.test(path)) {
      if (depth > 0 || e.compressionMethod !== 0) {
        throw new WorkbenchError(
          'BAD_FORMAT',
          `contains another zip (${path}) that cannot be read without unpacking it whole: ` +
            `unzip ${path} and import the folder (or give ${path} itself together with the other files)`,
          zipPath,
        );
      }
      out.push(...(await zipFiles(`${zipPath}/${path}`, await storedEntryBlob(zip, e), depth + 1)));
      continue;
    }
    out.push(entryFile(path, e));
  }
  return out;
}

/** Expands zips among the given files; loose files pass through. */
export async function expandFiles(files: readonly { path: string; file: Blob }[]): Promise<ImportFile[]> {
  const out: ImportFile[] = [];
  for (const { path, file } of files) {
    const p = normalizePath(path);
    if (isJunk(p)) continue;
    if (/\.zip$/i.test(p)) out.push(...(await zipFiles(p, file, 0)));
    else out.push(blobFile(p, file));
  }
  return out;
}
