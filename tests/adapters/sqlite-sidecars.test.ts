import { describe, expect, it } from 'vitest';
import { journalProblem, walProblem } from '../../src/adapters/sqlite-sidecars.ts';

/** The rules shared by the CLI's folder and the app's folder import (real files: node-db-source.test.ts, hostile-engine.test.ts). */
describe('which -wal and -journal files beside a database make it read differently from SQLite', () => {
  it('a -wal of no frame (missing, truncated, header only) is fine; one with a frame is refused with the checkpoint command', () => {
    for (const size of [0, 32, 56]) expect(walProblem('db/x.sqlite', size, 'run again')).toBeNull();
    expect(walProblem('db/x.sqlite', 4152, 'run again')).toBe(
      'db/x.sqlite-wal (4,152 bytes) may hold committed changes that are not in db/x.sqlite yet: SQLite would read them, ' +
        'the workbench reads only the main file. Copy them into it first with sqlite3 "db/x.sqlite" "PRAGMA wal_checkpoint(TRUNCATE)", then run again',
    );
  });
  it('a -journal is hot only when it starts with the journal magic (PERSIST mode zeroes it once committed)', () => {
    const magic = new Uint8Array([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);
    expect(journalProblem('x.sqlite', 512, new Uint8Array(8), 'run again')).toBeNull();
    expect(journalProblem('x.sqlite', 4, magic.subarray(0, 4), 'run again')).toBeNull();
    expect(journalProblem('x.sqlite', 4608, magic, 'import the folder again')).toMatch(
      /^x\.sqlite-journal is a hot rollback journal: .* sqlite3 "x\.sqlite" "PRAGMA quick_check" \(with no other program writing to it\), then import the folder again$/,
    );
  });
});
