/** Synthetic SQLite files for the benchmark, written with better-sqlite3 into a temp folder. */
import Database from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * A BIRD-layout database `<root>/<dbId>/<dbId>.sqlite` of about `targetBytes`: a `facts` table
 * (id, grp 0..999, val, name 'n'||x%5000, 400-byte random blob). Returns the file's size.
 */
export function makeLargeDb(root: string, dbId: string, targetBytes: number): { file: string; sizeBytes: number } {
  const dir = path.join(root, dbId);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${dbId}.sqlite`);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec('CREATE TABLE facts (id INTEGER PRIMARY KEY, grp INTEGER, val REAL, name TEXT, pad BLOB)');
    // About 470 bytes per row on 4 KiB pages (400-byte blob, other columns, cell and page overhead).
    const rows = Math.max(1000, Math.round(targetBytes / 470));
    db.prepare(
      `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
       INSERT INTO facts SELECT x, x % 1000, (x * 7919 % 100003) / 7.0, 'n' || (x % 5000), randomblob(400) FROM c`,
    ).run(rows);
  } finally {
    db.close();
  }
  return { file, sizeBytes: statSync(file).size };
}

/** A tiny database for warming up executors: `t(id, name, score)`, 200 rows. */
export function makeTinyDb(root: string, dbId: string): string {
  const dir = path.join(root, dbId);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${dbId}.sqlite`);
  const db = new Database(file);
  try {
    db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL);
      WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200)
      INSERT INTO t SELECT x, 'name ' || x, x / 3.0 FROM c;`);
  } finally {
    db.close();
  }
  return file;
}
