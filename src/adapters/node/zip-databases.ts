/**
 * The databases of a zip (BIRD's release zip, `--db-root dev.zip`) inflated as streams into a
 * folder in the `<db>/<db>.sqlite` layout the SQL workers read (`<db>/<db>.sqlite`, also inside a
 * nested zip, deflated or stored), so no database or inner zip is ever held in memory; a deflated
 * inner zip is first inflated to a temporary file under the folder (zip.js needs random access to
 * its central directory). Junk entries (__MACOSX, .DS_Store, AppleDouble) are skipped. Every
 * entry goes through the bounds of zip-entries.ts (names after normalisation, duplicates,
 * encryption, entry count, bytes and ratio), a database found at two paths with different bytes
 * is refused (the same bytes twice are one database), a database with a `-wal` or hot
 * `-journal` beside it is refused as in a folder. The CLI owns the folder (src/cli/commands/db-root-zip.ts).
 */
import { createHash } from 'node:crypto';
import { sha256OfPieces } from '../../core/util/sha256.ts';
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { WorkbenchError } from '../../core/errors.ts';
import { baseName, dbIdOf, isDatabasePath } from '../../core/import/classify-files.ts';
import { checkSidecars } from '../import/sidecar-check.ts';
import type { ImportFile } from '../import/import-files.ts';
import type { InflationBudget, ZipFileEntry } from '../zip/zip-entries.ts';
import { MAX_DB_FILE_BYTES } from './sql-worker-host.ts';

type ZipBounds = typeof import('../zip/zip-entries.ts');

/** zip.js and the shared zip bounds, imported only when --db-root is a zip (not at every start of the CLI). */
async function zipModules(): Promise<ZipBounds> {
  const [zip, bounds] = await Promise.all([import('@zip.js/zip.js'), import('../zip/zip-entries.ts')]);
  zip.configure({ useWebWorkers: false });
  return bounds;
}

const ADVICE = 'unzip it and give the folder to --db-root';
/** An inner zip may hold every database: it is bounded by the read's total budget alone. */
const maxEntryBytes = (p: string) => (/\.zip$/i.test(p) ? Number.MAX_SAFE_INTEGER : MAX_DB_FILE_BYTES);

async function inflateTo(
  zip: ZipBounds,
  z: ZipFileEntry,
  file: string,
  where: string,
  budget: InflationBudget,
): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const sink = Writable.toWeb(createWriteStream(file)) as WritableStream<Uint8Array>;
  try {
    await z.entry.getData(
      zip.boundedWritable(sink, z, where, {
        budget,
        maxEntryBytes: maxEntryBytes(z.path),
        advice: ADVICE,
        flag: '--db-root',
      }),
      { checkSignature: true, checkOverlappingEntry: true },
    );
  } catch (err) {
    throw zip.inflateError(err, where, ADVICE, '--db-root');
  }
}

/** A zip entry as an ImportFile, enough for the shared sidecar check (its size and first bytes). */
function sidecarFile(z: ZipFileEntry): ImportFile {
  return {
    path: z.path,
    size: z.entry.uncompressedSize,
    open() {
      const pipe = new TransformStream<Uint8Array, Uint8Array>();
      z.entry.getData(pipe.writable).catch(() => undefined);
      return pipe.readable;
    },
    text: () => Promise.reject(new WorkbenchError('INTERNAL', 'not read as text')),
  };
}

async function extract(
  zip: ZipBounds,
  blob: Blob,
  where: string,
  dir: string,
  depth: number,
  found: Map<string, { where: string; inLayout: boolean }>,
  budget: InflationBudget,
): Promise<void> {
  const entries = await zip.readZipEntries(blob, where, { budget, maxEntryBytes, advice: ADVICE, flag: '--db-root' });
  const byPath = new Map(entries.map((z) => [`${where}/${z.path}`, sidecarFile(z)]));
  for (const z of entries) {
    const p = z.path;
    if (/\.zip$/i.test(p) && depth < 2) {
      const spool = path.join(dir, '.spool', `${depth}-${found.size}-${baseName(p)}`);
      await inflateTo(zip, z, spool, `${where}/${p}`, budget);
      await extract(zip, await openAsBlob(spool), `${where}/${p}`, dir, depth + 1, found, budget);
      await rm(spool);
      continue;
    }
    if (!isDatabasePath(p)) continue;
    const id = dbIdOf(p);
    // `<db>/<db>.sqlite` wins over a stray copy under the same name (as in the app's import).
    const inLayout = baseName(path.posix.dirname(p)) === id;
    const prev = found.get(id);
    if (prev && !inLayout && prev.inLayout) continue;
    await checkSidecars(`${where}/${p}`, byPath, 'zip the folder again, or give the folder to --db-root');
    const file = path.join(dir, id, `${id}.sqlite`);
    if (prev && inLayout === prev.inLayout) {
      // Two copies of the same rank (two `<db>/<db>.sqlite`, or an outer one and an inner
      // zip's): the same bytes twice are one database (Spider's release has database/ and
      // test_database/); different bytes would be scored against whichever came first.
      const copy = path.join(dir, '.spool', `${depth}-${found.size}-copy.sqlite`);
      await inflateTo(zip, z, copy, `${where}/${p}`, budget);
      const same = await sameBytes(file, copy);
      await rm(copy);
      if (same) continue;
      throw new WorkbenchError(
        'BAD_FORMAT',
        `database ${id} is in the zip twice with different contents: ${prev.where} and ${where}/${p}; ` +
          'which copy the golds are meant for cannot be told, so neither is used. Keep one copy in the zip, ' +
          'or unzip it and give --db-root the folder that holds the one you mean',
        '--db-root',
      );
    }
    await inflateTo(zip, z, file, `${where}/${p}`, budget);
    found.set(id, { where: `${where}/${p}`, inLayout });
  }
}

/** Two files hold the same bytes (sizes first, then their sha256, streamed). */
async function sameBytes(a: string, b: string): Promise<boolean> {
  const [sa, sb] = await Promise.all([stat(a), stat(b)]);
  if (sa.size !== sb.size) return false;
  const digest = async (f: string) => (await sha256OfPieces(() => createHash('sha256'), createReadStream(f))).sha256;
  return (await digest(a)) === (await digest(b));
}

/**
 * Inflates the databases of `zipFile` into `dir` (which the caller creates and removes); returns
 * how many were found. A `MISSING_FILE` naming `--db-root` when the zip holds none.
 */
export async function extractZipDatabases(zipFile: string, dir: string): Promise<number> {
  const found = new Map<string, { where: string; inLayout: boolean }>();
  const zip = await zipModules();
  await extract(zip, await openAsBlob(zipFile), path.basename(zipFile), dir, 0, found, new zip.InflationBudget());
  if (found.size === 0)
    throw new WorkbenchError(
      'MISSING_FILE',
      `${zipFile} holds no <db>/<db>.sqlite database (nested zips included)`,
      '--db-root',
    );
  await rm(path.join(dir, '.spool'), { recursive: true, force: true });
  return found.size;
}
