/**
 * The identity of the database an item ran on, with the real pool and files: the folder source
 * hashes exactly the bytes it hands the worker, each result carries the sha256 of what its
 * worker opened, and a database replaced during a run (after it was hashed, before a write
 * forced a reload) has the new bytes' verdicts stored under the new bytes, never the old ones.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { folderDbSource, spawnNodeSqlWorker } from '../../src/adapters/node/sql-worker-host.ts';
import { SqlPool } from '../../src/adapters/sql-pool.ts';
import type { DbSource } from '../../src/app/ports.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { cachingExecutor, verdictKey, type CachedVerdict } from '../../src/core/run/verdict-cache.ts';
import { NativeDatabase } from '../helpers/native-sqlite.ts';
import { evalItem } from '../helpers/item-results.ts';
import { sharedData } from '../helpers/shared-data.ts';

const SUPERHERO = sharedData('bird', 'databases', 'superhero', 'superhero.sqlite');
const context = { executor: 'sql.js test', sqliteVersion: '3.test' };
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let pool: SqlPool | null = null;
afterEach(async () => {
  await pool?.dispose();
  pool = null;
});

function rootWithSuperhero(): { root: string; file: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'wb-dbid-'));
  mkdirSync(path.join(root, 'superhero'));
  const file = path.join(root, 'superhero', 'superhero.sqlite');
  copyFileSync(SUPERHERO, file);
  return { root, file };
}

describe('folderDbSource: the bytes and their sha256', () => {
  it('load returns the sha256 of exactly the bytes it returns', async () => {
    const { root, file } = rootWithSuperhero();
    const loaded = await folderDbSource(root).load('superhero');
    expect(loaded.sha256).toBe(sha(loaded.bytes));
    expect(loaded.sha256).toBe(sha(readFileSync(file)));
  });

  it('load refuses a FIFO at once, naming it (never opened, so never waited on)', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-dbid-'));
    mkdirSync(path.join(root, 'superhero'));
    const fifo = path.join(root, 'superhero', 'superhero.sqlite');
    execFileSync('mkfifo', [fifo]);
    const source = folderDbSource(root);
    await expect(source.load('superhero')).rejects.toThrow(`${fifo} is a FIFO (named pipe), not a database file`);
    expect(await source.unusable!('superhero')).toContain(`${fifo} is a FIFO (named pipe)`);
  });
});

describe('a database replaced during a run', () => {
  it('after it was hashed and opened, before a write forced a reload: the item after the write runs on the new bytes, says so, and its verdict is stored under them', async () => {
    const { root, file } = rootWithSuperhero();
    const oldSha = sha(readFileSync(file));
    const count = (f: string) => {
      const db = new NativeDatabase(f);
      try {
        return (db.prepare('SELECT count(*) AS n FROM superhero').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const before = count(file);
    // The new bytes: half the heroes gone.
    const other = path.join(mkdtempSync(path.join(tmpdir(), 'wb-dbid-other-')), 'superhero.sqlite');
    copyFileSync(SUPERHERO, other);
    const db = new NativeDatabase(other);
    db.pragma('foreign_keys = OFF');
    db.exec('DELETE FROM superhero WHERE id % 2 = 0');
    db.close();
    const newSha = sha(readFileSync(other));

    // The folder source, with the file replaced right after its first load (what another
    // program writing the database during the run does).
    const real = folderDbSource(root);
    let loads = 0;
    const source: DbSource = {
      ...real,
      load: async (dbId) => {
        const loaded = await real.load(dbId);
        if (++loads === 1) copyFileSync(other, file);
        return loaded;
      },
    };
    pool = new SqlPool({ spawn: () => spawnNodeSqlWorker(), dbSource: source, size: 1 });
    const map = new Map<string, CachedVerdict>();
    const caching = cachingExecutor(pool, {
      store: {
        get: async (keys) => keys.map((k) => map.get(k)),
        put: async (e) => void e.forEach(([k, v]) => map.set(k, v)),
      },
      context,
      dbSha256: async () => oldSha, // hashed before the run, on the old bytes
    });
    const items = [
      evalItem({
        index: 0,
        dbId: 'superhero',
        predSql: "UPDATE superhero SET superhero_name = 'x'",
        goldSql: 'SELECT 1',
      }),
      evalItem({ index: 1, dbId: 'superhero', predSql: 'SELECT count(*) FROM superhero', goldSql: `SELECT ${before}` }),
    ].map((it, i) => ({ ...it, sample: i }));
    const results = await caching.evaluate(items, DEFAULT_EVAL_OPTIONS);
    expect(loads).toBe(2);
    expect(results[0]).toMatchObject({ mutatedDb: true, dbSha256: oldSha });
    // Executed on the new bytes: fewer heroes than the gold's number, EX 0, and it says which bytes.
    expect(results[1]).toMatchObject({ status: 'ok', ex: 0, dbSha256: newSha });
    expect(map.has(verdictKey(items[1]!, newSha, context, DEFAULT_EVAL_OPTIONS))).toBe(true);
    // The old bytes' key holds nothing: a later run on them executes the item (EX 1), never gets this EX 0.
    expect(map.has(verdictKey(items[1]!, oldSha, context, DEFAULT_EVAL_OPTIONS))).toBe(false);
    expect(map.size).toBe(1);
  }, 120_000);
});
