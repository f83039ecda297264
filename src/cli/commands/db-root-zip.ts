/**
 * `--db-root dev.zip`: BIRD's release zip read directly. The databases (`<db>/<db>.sqlite`,
 * also inside a nested zip, deflated or stored) are inflated as streams into a temporary folder
 * in the `<db>/<db>.sqlite` layout the SQL workers read, so no database or inner zip is ever held
 * in memory; a deflated inner zip is first inflated to a temporary file (zip.js needs random
 * access to its central directory). Junk entries (__MACOSX, .DS_Store, AppleDouble) are skipped.
 * The folder is deleted by `cleanup`.
 */
import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { BlobReader, ZipReader, configure, type Entry, type FileEntry } from '@zip.js/zip.js';
import { WorkbenchError } from '../../core/errors.ts';
import { baseName, dbIdOf, isDatabasePath, isJunk, normalizePath } from '../../adapters/import/classify-files.ts';

configure({ useWebWorkers: false });

async function inflateTo(entry: FileEntry, file: string, where: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  try {
    await entry.getData(Writable.toWeb(createWriteStream(file)) as WritableStream<Uint8Array>, { checkSignature: true, checkOverlappingEntry: true });
  } catch (err) {
    throw new WorkbenchError('BAD_FORMAT', `${where} is damaged (${(err as Error).message}): download the zip again, or unzip it and give the folder to --db-root`, '--db-root');
  }
}

async function entriesOf(blob: Blob, where: string): Promise<Entry[]> {
  try {
    return await new ZipReader(new BlobReader(blob)).getEntries();
  } catch (err) {
    throw new WorkbenchError('BAD_FORMAT', `${where} is not a readable zip (${(err as Error).message}): download it again`, '--db-root');
  }
}

async function extract(blob: Blob, where: string, dir: string, depth: number, found: Map<string, string>): Promise<void> {
  for (const e of await entriesOf(blob, where)) {
    const p = normalizePath(e.filename);
    if (e.directory || isJunk(p)) continue;
    if (/\.zip$/i.test(p) && depth < 2) {
      const spool = path.join(dir, '.spool', `${depth}-${found.size}-${baseName(p)}`);
      await inflateTo(e as FileEntry, spool, `${where}/${p}`);
      await extract(await openAsBlob(spool), `${where}/${p}`, dir, depth + 1, found);
      await rm(spool);
      continue;
    }
    if (!isDatabasePath(p)) continue;
    const id = dbIdOf(p);
    // `<db>/<db>.sqlite` wins over a stray copy under the same name, as in the app's import.
    if (found.has(id) && baseName(path.posix.dirname(p)) !== id) continue;
    await inflateTo(e as FileEntry, path.join(dir, id, `${id}.sqlite`), `${where}/${p}`);
    found.set(id, `${where}/${p}`);
  }
}

/** A folder for the SQL workers: `dbRoot` itself, or the databases of a zip inflated to a temporary folder. */
export async function resolveDbRoot(dbRoot: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const st = await stat(dbRoot).catch(() => null);
  if (st?.isDirectory()) return { dir: dbRoot, cleanup: async () => undefined };
  if (!st?.isFile() || !/\.zip$/i.test(dbRoot)) {
    throw new WorkbenchError('MISSING_FILE', `not a directory or a .zip: ${dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite, or a zip holding them such as BIRD's dev.zip)`, '--db-root');
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'wb-db-root-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const found = new Map<string, string>();
    await extract(await openAsBlob(dbRoot), path.basename(dbRoot), dir, 0, found);
    if (found.size === 0) throw new WorkbenchError('MISSING_FILE', `${dbRoot} holds no <db>/<db>.sqlite database (nested zips included)`, '--db-root');
    await rm(path.join(dir, '.spool'), { recursive: true, force: true });
    return { dir, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
