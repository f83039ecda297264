/**
 * The sources a SQL worker reads a database from by pages (paged-file.ts): a file in Node,
 * a Blob in a browser worker. Both read synchronously (SQLite's pager cannot wait) and never
 * write.
 */
import { WorkbenchError } from '../src/core/errors.ts';
import type { BlobLike, DbFileRef } from '../src/core/types.ts';
import type { PageSource } from './paged-file.ts';

/** The parts of node:fs a file source uses (passed in: the browser bundle never imports node:fs). */
export interface SyncFs {
  openSync(path: string, flags: number): number;
  constants: { O_RDONLY: number; O_NONBLOCK: number };
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fstatSync(fd: number): { size: number; mtimeMs: number; isFile(): boolean };
  closeSync(fd: number): void;
}

/**
 * A file opened read-only. Its size and modification time are those the host checked (and
 * hashed); a difference at any read is a change while the file is read: the reads give zeros
 * from then on (SQLite calls that damage) and the engine reports the change by name.
 */
export function fileSource(fs: SyncFs, ref: { path: string; size: number; mtimeMs: number }): PageSource {
  // Never blocks on what is not a regular file (a FIFO swapped in opens at once and is refused below).
  const fd = fs.openSync(ref.path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  let problem: string | null = null;
  const check = (): string | null => {
    if (problem !== null) return problem;
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size !== ref.size || st.mtimeMs !== ref.mtimeMs)
      problem = `${ref.path} changed while it was read (its size or modification time changed): run again once nothing writes to it`;
    return problem;
  };
  if (check() !== null) {
    fs.closeSync(fd);
    throw new WorkbenchError('BAD_DATABASE', problem!);
  }
  return {
    size: ref.size,
    read(into, position) {
      let done = 0;
      while (done < into.length) {
        const n = fs.readSync(fd, into, done, into.length - done, position + done);
        if (n === 0) {
          problem ??= `${ref.path} changed while it was read (it ended at byte ${(position + done).toLocaleString('en-US')} of ${ref.size.toLocaleString('en-US')}): run again once nothing writes to it`;
          throw new WorkbenchError('BAD_DATABASE', problem);
        }
        done += n;
      }
    },
    problem: check,
    close() {
      fs.closeSync(fd);
    },
  };
}

interface FileReaderSyncLike {
  readAsArrayBuffer(blob: unknown): ArrayBuffer;
}

/** A Blob (the browser's stored chunks of a database), read in slices by FileReaderSync. */
function blobSource(blob: BlobLike): PageSource {
  const Reader = (globalThis as { FileReaderSync?: new () => FileReaderSyncLike }).FileReaderSync;
  if (!Reader)
    throw new WorkbenchError('UNSUPPORTED', 'this worker cannot read a stored database by pages (no FileReaderSync)');
  const reader = new Reader();
  let problem: string | null = null;
  return {
    size: blob.size,
    read(into, position) {
      try {
        into.set(new Uint8Array(reader.readAsArrayBuffer(blob.slice(position, position + into.length))));
      } catch (err) {
        problem ??= `the stored database could not be read (${err instanceof Error ? err.message : String(err)}): import the dataset again`;
        throw new WorkbenchError('BAD_DATABASE', problem, undefined, { cause: err });
      }
    },
    problem: () => problem,
    close() {},
  };
}

/** The source of a reference, with node:fs where the worker runs in Node. */
export function openSource(ref: DbFileRef, fs: SyncFs | null): PageSource {
  if (ref.kind === 'blob') return blobSource(ref.blob);
  if (!fs) throw new WorkbenchError('UNSUPPORTED', `this worker cannot open ${ref.path}: it has no file system`);
  return fileSource(fs, ref);
}
