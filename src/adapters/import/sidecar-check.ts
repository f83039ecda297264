/**
 * A database imported from a folder with its `-wal` or a hot `-journal` beside it: the app
 * stores the main file alone, which SQLite would not read the same way (see
 * ../sqlite-sidecars.ts). Refused before anything is written, naming the file.
 */
import { WorkbenchError } from '../../core/errors.ts';
import { JOURNAL_MAGIC_BYTES, journalProblem, walProblem } from '../sqlite-sidecars.ts';
import type { ImportFile } from './import-files.ts';

const THEN = 'import the folder again';

async function head(file: ImportFile, n: number): Promise<Uint8Array> {
  if (file.slice) return new Uint8Array(await file.slice(0, n).arrayBuffer());
  const reader = file.open().getReader();
  try {
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = value.subarray(0, n - got);
      out.set(take, got);
      got += take.length;
    }
    return out.subarray(0, got);
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

export async function checkSidecars(
  dbPath: string,
  byPath: ReadonlyMap<string, ImportFile>,
  then = THEN,
): Promise<void> {
  const wal = byPath.get(`${dbPath}-wal`);
  const walMsg = wal ? walProblem(dbPath, wal.size, then) : null;
  if (walMsg) throw new WorkbenchError('BAD_DATABASE', walMsg, dbPath);
  const journal = byPath.get(`${dbPath}-journal`);
  if (!journal || journal.size < JOURNAL_MAGIC_BYTES) return;
  const msg = journalProblem(dbPath, journal.size, await head(journal, JOURNAL_MAGIC_BYTES), then);
  if (msg) throw new WorkbenchError('BAD_DATABASE', msg, dbPath);
}
