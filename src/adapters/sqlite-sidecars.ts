/**
 * Files SQLite keeps beside a database, whose content it reads as part of the database: a
 * `-wal` (write-ahead log: committed rows not yet copied into the main file) and a hot
 * `-journal` (a rollback journal left by an interrupted write: the main file is half-written
 * until SQLite rolls it back). The workers open the main file's bytes alone, so such a
 * database would be read differently from how SQLite, and the official evaluator, read it:
 * it is refused with the file named and the command that makes the main file whole.
 * Pure (no Node or DOM types): the CLI's folder and the app's folder import share it.
 */

/** A WAL file shorter than its header plus one frame header holds no frame. */
const WAL_EMPTY_BYTES = 32 + 24;
/** The first 8 bytes of a rollback journal with content (PERSIST mode zeroes them when done). */
const JOURNAL_MAGIC = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];
export const JOURNAL_MAGIC_BYTES = JOURNAL_MAGIC.length;

const quote = (p: string) => `"${p.replace(/"/g, '\\"')}"`;

/** The problem with a `-wal` of `walSize` bytes beside `dbPath`, or null when it holds nothing. */
export function walProblem(dbPath: string, walSize: number, then: string): string | null {
  if (walSize <= WAL_EMPTY_BYTES) return null;
  return (
    `${dbPath}-wal (${walSize.toLocaleString('en-US')} bytes) may hold committed changes that are not in ${dbPath} yet: ` +
    `SQLite would read them, the workbench reads only the main file. Copy them into it first with ` +
    `sqlite3 ${quote(dbPath)} "PRAGMA wal_checkpoint(TRUNCATE)", then ${then}`
  );
}

/** The problem with a `-journal` beside `dbPath` whose first bytes are `head`, or null when it is not hot. */
export function journalProblem(dbPath: string, journalSize: number, head: Uint8Array, then: string): string | null {
  if (journalSize < JOURNAL_MAGIC_BYTES || !JOURNAL_MAGIC.every((b, i) => head[i] === b)) return null;
  return (
    `${dbPath}-journal is a hot rollback journal: a write to ${dbPath} was interrupted (or is under way), so the main file ` +
    `may be half-written. SQLite would roll it back before reading; the workbench cannot. Let SQLite roll it back with ` +
    `sqlite3 ${quote(dbPath)} "PRAGMA quick_check" (with no other program writing to it), then ${then}`
  );
}
