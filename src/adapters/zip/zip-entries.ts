/**
 * Zip entries read within bounds: the one reader of every zip the workbench opens (the CLI's
 * `--db-root x.zip`, the app's zip import, Inspect `.eval` logs), in Node and in the browser.
 *
 * - Names are checked here, after normalisation (zip.js's own check is off so the message names the entry) (`\` -> `/`, leading `./` and `/` dropped): a segment
 *   `..` or `.`, an empty segment, a drive letter, a NUL or control character, or a database
 *   whose name leaves no usable db_id (`x/...sqlite` would be the db_id `..`) is refused.
 * - Two entries with the same normalised name are refused (which one would win depends on the
 *   reader: a duplicate could score one database against another's golds).
 * - An encrypted entry is reported as encrypted (the workbench reads no passwords).
 * - Inflation is bounded: at most `entries` entries are read from a central directory (the
 *   generator stops there, so a zip of 100,000 entries costs no more memory than the limit),
 *   each entry's declared size must fit the caller's byte cap, the inflated bytes of an entry
 *   may not exceed `ratio` times its compressed bytes once past `ratioFloorBytes`, and every
 *   zip of one read shares a total budget (`totalBytes`). The declared sizes are checked before
 *   any byte is written and the real bytes are counted while they stream (`boundedWritable`),
 *   so a header that lies about the size fails at the bound too.
 */
import { BlobReader, ZipReader, type Entry, type FileEntry } from '@zip.js/zip.js';
import { WorkbenchError } from '../../core/errors.ts';
import { dbIdOf, isDatabasePath, isJunk, normalizePath } from '../../core/import/classify-files.ts';

export interface ZipLimits {
  /** Entries read from one central directory. */
  entries: number;
  /** Inflated bytes / compressed bytes of one entry, checked once it passes `ratioFloorBytes`. */
  ratio: number;
  ratioFloorBytes: number;
  /** Inflated bytes of every entry of one read (outer zip and the zips nested in it). */
  totalBytes: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * BIRD's and Spider's releases hold a few hundred to a few thousand entries whose databases
 * deflate 2 to 4 times (student_club 3.8, toxicology 2.7, superhero 2.2); deflate itself
 * cannot exceed about 1,032. 100 leaves real data 25 times its room and stops a bomb at
 * 100 x its size.
 */
export const ZIP_LIMITS: ZipLimits = { entries: 20_000, ratio: 100, ratioFloorBytes: 4 * MiB, totalBytes: 64 * GiB };

const fmtBytes = (n: number) =>
  n >= GiB
    ? `${(n / GiB).toFixed(2)} GiB`
    : n >= MiB
      ? `${(n / MiB).toFixed(1)} MiB`
      : `${n.toLocaleString('en-US')} bytes`;

/** Inflated bytes shared by every zip of one read (an outer zip and the zips nested in it). */
export class InflationBudget {
  used = 0;
  /** The sizes the central directories declare, checked before any byte is inflated. */
  declared = 0;
  constructor(readonly limits: ZipLimits = ZIP_LIMITS) {}
}

/** Why a normalised entry name cannot be used, or null. */
export function entryNameProblem(normalised: string): string | null {
  if (normalised === '') return 'an empty name';
  // eslint-disable-next-line no-control-regex -- control characters in an entry name are what this refuses
  if (/[\u0000-\u001f]/.test(normalised)) return 'a control character in its name';
  if (/^[a-zA-Z]:/.test(normalised)) return 'a drive letter (an absolute Windows path)';
  const segments = normalised.replace(/\/$/, '').split('/');
  if (segments.some((s) => s === '..')) return 'a ".." segment (a path that leaves the folder it is unpacked into)';
  if (segments.some((s) => s === '.' || s === '')) return 'an empty or "." segment';
  if (isDatabasePath(normalised)) {
    const id = dbIdOf(normalised);
    if (/^\.*$/.test(id)) return `a database name that gives no usable db_id (${JSON.stringify(id)})`;
  }
  return null;
}

export interface ZipFileEntry {
  /** The normalised name. */
  path: string;
  entry: FileEntry;
}

/** What every bounded read is told: the caller's advice and, for the CLI, the flag its errors name. */
export interface ZipBounds {
  budget: InflationBudget;
  /** Ends every message with what to do (e.g. "unzip it and give the folder to --db-root"). */
  advice: string;
  /** The flag the error names before the zip's path (`--db-root`); without it the error names the path. */
  flag?: string;
}

const refuse = (where: string, msg: string, flag?: string) =>
  new WorkbenchError('BAD_FORMAT', flag ? `${where}: ${msg}` : msg, flag ?? where);

/**
 * The file entries of a zip (junk and folders left out), checked as described above, with
 * `maxEntryBytes(path)` the byte cap of each entry (e.g. the 2 GiB a database may have).
 * `advice` ends every message with what to do (e.g. "unzip it and give the folder to --db-root").
 */
export async function readZipEntries(
  blob: Blob,
  where: string,
  opts: ZipBounds & { maxEntryBytes: (path: string) => number },
): Promise<ZipFileEntry[]> {
  const { limits } = opts.budget;
  const out: ZipFileEntry[] = [];
  const seen = new Set<string>();
  let count = 0;
  const reader = new ZipReader(new BlobReader(blob));
  try {
    for await (const e of reader.getEntriesGenerator({ filenameValidation: 'tolerant' }) as AsyncGenerator<
      Entry,
      boolean
    >) {
      if (++count > limits.entries) {
        throw refuse(
          where,
          `holds more than ${limits.entries.toLocaleString('en-US')} entries, more than any benchmark release; ${opts.advice}`,
          opts.flag,
        );
      }
      const p = normalizePath(e.filename);
      const problem = entryNameProblem(p);
      if (problem)
        throw refuse(
          where,
          `the entry ${JSON.stringify(e.filename)} has ${problem}: it is refused; ${opts.advice}`,
          opts.flag,
        );
      if (e.directory || isJunk(p)) continue;
      if (seen.has(p)) {
        throw refuse(
          where,
          `the entry ${p} appears twice: which copy is read would depend on the program reading it, so neither is; rebuild the zip with one copy of each file`,
          opts.flag,
        );
      }
      seen.add(p);
      if (e.encrypted) {
        throw refuse(
          where,
          `${p} is encrypted (password-protected): the workbench reads no passwords; ${opts.advice}, giving the password to the unzip tool`,
          opts.flag,
        );
      }
      const max = opts.maxEntryBytes(p);
      if (e.uncompressedSize > max) {
        throw refuse(
          where,
          `${p} would inflate to ${fmtBytes(e.uncompressedSize)}, more than the ${fmtBytes(max)} such a file may have here; ${opts.advice}`,
          opts.flag,
        );
      }
      opts.budget.declared += e.uncompressedSize;
      if (opts.budget.declared > limits.totalBytes) {
        throw refuse(
          where,
          `the zip would inflate to more than ${fmtBytes(limits.totalBytes)} in all; ${opts.advice}`,
          opts.flag,
        );
      }
      const ratioProblem = inflationRatioProblem(p, e.uncompressedSize, e.compressedSize, limits);
      if (ratioProblem) throw refuse(where, `${ratioProblem}; ${opts.advice}`, opts.flag);
      out.push({ path: p, entry: e as FileEntry });
    }
  } catch (err) {
    if (err instanceof WorkbenchError) throw err;
    const msg = `not a readable zip (${(err as Error).message}): download it again`;
    throw new WorkbenchError('BAD_FORMAT', opts.flag ? `${where} is ${msg}` : msg, opts.flag ?? where);
  }
  return out;
}

function inflationRatioProblem(p: string, inflated: number, compressed: number, limits: ZipLimits): string | null {
  if (inflated <= limits.ratioFloorBytes || inflated <= limits.ratio * Math.max(1, compressed)) return null;
  return `${p} inflates ${fmtBytes(Math.max(1, compressed))} to ${fmtBytes(inflated)} (${Math.round(inflated / Math.max(1, compressed))} to 1, more than the ${limits.ratio} to 1 a real database or log reaches): it looks like a zip bomb`;
}

/**
 * A writable that forwards to `inner` and fails when the bytes passing through exceed the
 * entry's declared size, its cap, its ratio or the read's budget: a header that lies is caught
 * while streaming, before the bytes reach the disk or memory.
 */
export function boundedWritable(
  inner: WritableStream<Uint8Array>,
  z: ZipFileEntry,
  where: string,
  opts: ZipBounds & { maxEntryBytes: number },
): WritableStream<Uint8Array> {
  const { limits } = opts.budget;
  let bytes = 0;
  const writer = inner.getWriter();
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      bytes += chunk.length;
      opts.budget.used += chunk.length;
      if (bytes > z.entry.uncompressedSize) {
        throw refuse(
          where,
          `${z.path} inflates to more than the ${fmtBytes(z.entry.uncompressedSize)} its header declares: the zip is damaged or forged; ${opts.advice}`,
          opts.flag,
        );
      }
      if (bytes > opts.maxEntryBytes)
        throw refuse(
          where,
          `${z.path} inflates to more than the ${fmtBytes(opts.maxEntryBytes)} such a file may have here; ${opts.advice}`,
          opts.flag,
        );
      const ratio = inflationRatioProblem(z.path, bytes, z.entry.compressedSize, limits);
      if (ratio) throw refuse(where, `${ratio}; ${opts.advice}`, opts.flag);
      if (opts.budget.used > limits.totalBytes) {
        throw refuse(
          where,
          `the zip inflates to more than ${fmtBytes(limits.totalBytes)} in all; ${opts.advice}`,
          opts.flag,
        );
      }
      await writer.write(chunk);
    },
    async close() {
      await writer.close();
    },
    async abort(reason) {
      await writer.abort(reason).catch(() => undefined);
    },
  });
}

/** A message for a failed `getData`: our own bound as is, anything else as a damaged entry. */
export function inflateError(err: unknown, where: string, advice: string, flag?: string): WorkbenchError {
  if (err instanceof WorkbenchError) return err;
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof WorkbenchError) return cause;
  const msg = `damaged (${(err as Error)?.message ?? String(err)}): download the zip again, or ${advice}`;
  return new WorkbenchError('BAD_FORMAT', flag ? `${where} is ${msg}` : `this entry is ${msg}`, flag ?? where);
}

/** The text of an entry (an Inspect sample), within the same bounds. */
export async function entryText(
  z: ZipFileEntry,
  where: string,
  opts: ZipBounds & { maxEntryBytes: number },
): Promise<string> {
  const chunks: Uint8Array[] = [];
  const sink = new WritableStream<Uint8Array>({ write: (c) => void chunks.push(c.slice()) });
  try {
    await z.entry.getData(boundedWritable(sink, z, where, opts), { checkSignature: true, checkOverlappingEntry: true });
  } catch (err) {
    throw inflateError(err, where, opts.advice, opts.flag);
  }
  return new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
}
