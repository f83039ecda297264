import { NativeDatabase as Database, type NativeDb } from '../helpers/native-sqlite.ts';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqlWorkerSchemaSource } from '../../src/adapters/engines/sql-worker-schema-source.ts';
import { createNodeHost } from '../../src/adapters/node/node-host.ts';
import {
  MAX_DB_FILE_BYTES,
  createNodeSqlPool,
  folderDbSource,
  spawnNodeSqlWorker,
} from '../../src/adapters/node/sql-worker-host.ts';
import type { DbSource } from '../../src/app/db-source.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import type { DbFileRef, EvalItem } from '../../src/core/types.ts';
import { evalItem } from '../helpers/item-results.ts';

/** The CLI's database source (a BIRD-style folder) against files SQLite itself wrote. */
let pool: SqlPool | null = null;
const open: NativeDb[] = [];
afterEach(async () => {
  await pool?.dispose();
  pool = null;
  for (const db of open.splice(0)) db.close();
});

const tempRoot = () => mkdtempSync(path.join(tmpdir(), 'wb-dbroot-'));
const dbFile = (root: string, id: string) => {
  mkdirSync(path.join(root, id), { recursive: true });
  return path.join(root, id, `${id}.sqlite`);
};
/** A new database `id` in folder `root`, open in SQLite itself until the test ends. */
const openNewDb = (root: string, id: string) => {
  const file = dbFile(root, id);
  const db = new Database(file);
  open.push(db);
  return { file, db };
};
const item = (index: number, dbId: string, predSql: string, goldSql: string): EvalItem =>
  evalItem({ index, dbId, predSql, goldSql });
const evaluate = async (root: string, items: EvalItem[], engine?: 'legacy') => {
  pool = createNodeSqlPool({ dbRoot: root, workers: 1, ...(engine ? { engine } : {}) });
  return pool.evaluate(items, { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex'] });
};

describe('a WAL database whose -wal holds committed rows', () => {
  it('is refused naming the -wal file and the checkpoint command; once checkpointed, its rows are all read', async () => {
    const root = tempRoot();
    const { file, db } = openNewDb(root, 'w');
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t(x)');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('INSERT INTO t VALUES (1), (2), (3)'); // committed, in the -wal only
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);

    await expect(folderDbSource(root).load('w')).rejects.toThrow(
      `database w: ${file}-wal (${statSync(`${file}-wal`).size.toLocaleString('en-US')} bytes) may hold committed changes that are not in ${file} yet`,
    );
    const [r, next] = await evaluate(root, [
      item(0, 'w', 'SELECT count(*) FROM t', 'SELECT 3'),
      item(1, 'w', 'SELECT 1', 'SELECT 1'),
    ]);
    expect(r).toMatchObject({ status: 'error', ex: 0 });
    expect(r!.error).toContain(`sqlite3 "${file}" "PRAGMA wal_checkpoint(TRUNCATE)"`);
    expect(next!.status).toBe('error');

    db.pragma('wal_checkpoint(TRUNCATE)');
    await pool!.dispose();
    const [after] = await evaluate(root, [item(0, 'w', 'SELECT count(*) FROM t', 'SELECT 3')]);
    expect(after).toMatchObject({ status: 'ok', ex: 1 });
  });

  it('an empty -wal (checkpointed and truncated) is read as usual', async () => {
    const root = tempRoot();
    const { file, db } = openNewDb(root, 'w');
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1)');
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(statSync(`${file}-wal`).size).toBe(0);
    const [r] = await evaluate(root, [item(0, 'w', 'SELECT x FROM t', 'SELECT 1')]);
    expect(r).toMatchObject({ status: 'ok', ex: 1 });
  });
});

describe('a database with a hot rollback journal (a write interrupted mid-way)', () => {
  it('is refused naming the -journal file and how to roll it back; SQLite itself would read the rolled-back rows', async () => {
    const src = tempRoot();
    const { file, db } = openNewDb(src, 'j');
    db.exec(
      "CREATE TABLE t(x INTEGER, s TEXT); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 2000) INSERT INTO t SELECT i, printf('%0500d', i) FROM c",
    );
    // A tiny page cache makes SQLite spill the transaction's pages into the main file before
    // it commits: a copy taken now is a half-written file beside its hot journal.
    db.pragma('cache_size = 1');
    db.exec('BEGIN; DELETE FROM t');
    const root = tempRoot();
    const copy = dbFile(root, 'j');
    copyFileSync(file, copy);
    copyFileSync(`${file}-journal`, `${copy}-journal`);
    db.exec('ROLLBACK');

    const [r] = await evaluate(root, [item(0, 'j', 'SELECT count(*) FROM t', 'SELECT 2000')]);
    expect(r).toMatchObject({ status: 'error', ex: 0 });
    expect(r!.error).toContain(`database j: ${copy}-journal is a hot rollback journal`);
    expect(r!.error).toContain(`sqlite3 "${copy}" "PRAGMA quick_check"`);

    // What SQLite reads: it rolls the journal back on open and sees every row.
    const sqlite = new Database(copy);
    expect(sqlite.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2000 });
    sqlite.close();
    expect(existsSync(`${copy}-journal`)).toBe(false);
    await pool!.dispose();
    const [after] = await evaluate(root, [item(0, 'j', 'SELECT count(*) FROM t', 'SELECT 2000')]);
    expect(after).toMatchObject({ status: 'ok', ex: 1 });
  });
});

describe('a database file larger than 2 GiB', () => {
  it("both SQLite generations read it by pages and evaluate its items; a source read whole refuses it with the file, its size, the limit and what to do, not Node's raw message", async () => {
    const root = tempRoot();
    const file = dbFile(root, 'huge');
    const db = new Database(file);
    db.exec('CREATE TABLE t(x)');
    db.close();
    truncateSync(file, MAX_DB_FILE_BYTES + 1 + 4096); // sparse: takes no disk
    // The version check's older SQLite (sql.js 1.8.0) reads by pages too: no 2 GiB buffer
    // (the main engine: tests/workers/paged-file.test.ts).
    const [r] = await evaluate(root, [item(0, 'huge', 'SELECT count(*) FROM t', 'SELECT 0')], 'legacy');
    expect(r).toMatchObject({ status: 'ok', ex: 1, error: null });
    // What a worker given the bytes would need: refused before any byte is read.
    await expect(folderDbSource(root).load('huge')).rejects.toThrow(
      `database huge: ${file} is 2.00 GiB (2,147,487,744 bytes), more than the 2.00 GiB a database may have here (a worker holds the whole file in memory, and Node reads at most 2 GiB into one buffer): evaluate on a smaller copy (e.g. VACUUM INTO a copy without the tables its questions do not read)`,
    );
    // The CLI's schema reader (batch prompts, presets' schemas) opens it by pages as the pools do.
    const reader = await createNodeHost().sql.openSchemaReader(root, { descriptions: false });
    try {
      expect(await reader.source.tables('huge')).toEqual([
        { name: 't', createSql: 'CREATE TABLE t(x)', columns: ['x'] },
      ]);
      expect(await reader.query('huge', 'SELECT count(*) FROM t')).toEqual([[0]]);
    } finally {
      reader.dispose();
    }
  });
});

describe('the schema reader opens a database as the SQL pools do', () => {
  it('by pages (never a copy of its bytes), and a content that passed quick_check in this process is not checked again', async () => {
    const root = tempRoot();
    const { db } = openNewDb(root, 's');
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('a')");
    const folder = folderDbSource(root);
    const dbSource: DbSource = {
      ...folder,
      load: () => Promise.reject(new Error('the schema reader copied the whole file')),
    };
    const checkedDbs = new Set<string>();
    const given: Array<{ paged: boolean; checked: boolean | undefined }> = [];
    const read = async () => {
      const worker = spawnNodeSqlWorker();
      try {
        await worker.api.init({ cacheBytes: 1 << 20 });
        const api = {
          query: worker.api.query,
          loadDb: (dbId: string, g: Uint8Array | DbFileRef, o?: { checked?: boolean }) => {
            given.push({ paged: !(g instanceof Uint8Array), checked: o?.checked });
            return worker.api.loadDb(dbId, g, o);
          },
        };
        const source = createSqlWorkerSchemaSource({ api, dbSource, checkedDbs });
        return await source.sampleRows('s', 't', 5);
      } finally {
        worker.terminate();
      }
    };
    expect((await read()).rows).toEqual([['a']]);
    expect(checkedDbs.size).toBe(1);
    expect((await read()).rows).toEqual([['a']]);
    expect(given).toEqual([
      { paged: true, checked: false },
      { paged: true, checked: true },
    ]);
  });
});

describe('a db_id that is not a plain folder name never reads a file outside the database folder', () => {
  it.each([['../secret'], ['..'], ['a/../../secret'], ['sub\\..\\..\\secret'], ['/etc/passwd'], ['']])(
    'db_id %j: its items are errors naming it',
    async (dbId) => {
      const dir = tempRoot();
      const root = path.join(dir, 'root');
      mkdirSync(root);
      // The file `../secret` would reach: <dir>/secret.sqlite (and <dir>/secret/secret.sqlite).
      for (const f of [path.join(dir, 'secret.sqlite'), dbFile(dir, 'secret')]) {
        const db = new Database(f);
        db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('outside')");
        db.close();
      }
      writeFileSync(path.join(dir, 'note.txt'), 'x');
      const [r] = await evaluate(root, [item(0, dbId, 'SELECT x FROM t', "SELECT 'outside'")]);
      expect(r).toMatchObject({ status: 'error', ex: 0 });
      expect(r!.error).toContain(`db_id ${JSON.stringify(dbId)} is not a plain folder name`);
    },
  );
});
