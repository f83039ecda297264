/**
 * Databases read by pages (workers/paged-file.ts): the SQL engine given a file reads the pages
 * its queries need through a bounded cache instead of holding the file, answers exactly as when
 * it is given the bytes, never writes the file, and says so by name when the file changes
 * while it is read. The last test opens a generated database of more than 600 MiB in a real
 * worker thread (the CLI's pool) and scans it whole with the process's memory far below the
 * file's size.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import type { DbFileRef } from '../../src/core/types.ts';
import { BLOCK_BYTES, BlockCache, PagedFile } from '../../workers/paged-file.ts';
import { fileSource } from '../../workers/page-sources.ts';
import { createSqlEngine, PAGE_CACHE_BYTES } from '../../workers/sql-engine.ts';
import type { ExecDone, ExecRequest, NeedDb } from '../../workers/sql.api.ts';
import { evalItem } from '../helpers/item-results.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { thirteenSampleRun } from '../helpers/thirteen-files.ts';

const TOXICOLOGY = sharedData('bird', 'databases', 'toxicology', 'toxicology.sqlite');
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const refOf = (file: string): Extract<DbFileRef, { kind: 'file' }> => {
  const st = fs.statSync(file);
  return { kind: 'file', path: file, size: st.size, mtimeMs: st.mtimeMs };
};
const tempDir = () => fs.mkdtempSync(path.join(tmpdir(), 'wb-paged-'));

async function engines() {
  const SQL = await initSqlJs();
  const init = { cacheBytes: 512 * 1024 * 1024 };
  const paged = createSqlEngine(async () => SQL, fs);
  const bytes = createSqlEngine(async () => SQL);
  await paged.init(init);
  await bytes.init(init);
  return { paged, bytes };
}

const request = (dbId: string, predSql: string, goldSql: string): ExecRequest => ({
  dbId,
  predSql,
  goldSql,
  readOnly: false,
  softF1: true,
  previewRows: 5,
  reuseGold: true,
});

function done(r: ExecDone | NeedDb): ExecDone {
  expect(r.kind).toBe('done');
  const { elapsedMs: _elapsed, ...rest } = r as ExecDone;
  return rest as ExecDone;
}

describe('a view of a file read by pages', () => {
  it('reads any range exactly as the file holds it, and keeps its writes in its own overlay', () => {
    const file = TOXICOLOGY;
    const before = sha(file);
    const whole = fs.readFileSync(file);
    const cache = new BlockCache(fileSource(fs, refOf(file)), 4 * BLOCK_BYTES);
    const view = new PagedFile(cache);
    // Ranges across block edges, at the end, and past it (zeros: the file system asks only within its size).
    const ranges: [number, number][] = [
      [0, 100],
      [BLOCK_BYTES - 7, BLOCK_BYTES + 9],
      [3 * BLOCK_BYTES + 1, 7 * BLOCK_BYTES + 5],
      [whole.length - 4096, whole.length],
    ];
    for (let k = 0; k < 40; k++) {
      const a = (k * 7919 * 4099) % whole.length;
      ranges.push([a, Math.min(whole.length, a + 1 + ((k * 104729) % 200_000))]);
    }
    for (const [a, b] of ranges) expect(Buffer.from(view.subarray(a, b)).equals(whole.subarray(a, b))).toBe(true);
    expect(Array.from(view.subarray(whole.length, whole.length + 10))).toEqual(new Array(10).fill(0));
    // The cache holds at most its capacity, however much was read.
    expect(cache.heldBytes()).toBeLessThanOrEqual(4 * BLOCK_BYTES);

    const other = new PagedFile(cache);
    view.set(Uint8Array.of(9, 9, 9), BLOCK_BYTES - 1);
    view.set(Uint8Array.of(7), whole.length + 5); // past the end: the view grows, the file does not
    expect(Array.from(view.subarray(BLOCK_BYTES - 2, BLOCK_BYTES + 3))).toEqual([
      whole[BLOCK_BYTES - 2],
      9,
      9,
      9,
      whole[BLOCK_BYTES + 2],
    ]);
    expect(view.subarray(whole.length + 5, whole.length + 6)[0]).toBe(7);
    expect(
      Buffer.from(other.subarray(BLOCK_BYTES - 2, BLOCK_BYTES + 3)).equals(
        whole.subarray(BLOCK_BYTES - 2, BLOCK_BYTES + 3),
      ),
    ).toBe(true);
    cache.close();
    expect(sha(file)).toBe(before);
  });
});

describe('the block cache', () => {
  it('gives every page exactly as the file holds it under lookups and scans, within its capacity, a scan read 16 blocks at a time', () => {
    const whole = fs.readFileSync(TOXICOLOGY);
    const pages = Math.floor(whole.length / BLOCK_BYTES);
    const capacity = 24;
    const cache = new BlockCache(fileSource(fs, refOf(TOXICOLOGY)), capacity * BLOCK_BYTES);
    // A seeded mix of what SQLite does: lookups of pages anywhere, scans of runs of pages, re-reads.
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let k = 0; k < 3000; k++) {
      const first = next(pages);
      const run = next(4) === 0 ? 1 + next(40) : 1;
      for (let n = first; n < Math.min(pages, first + run); n++) {
        const got = cache.block(n);
        expect(Buffer.from(got).equals(whole.subarray(n * BLOCK_BYTES, (n + 1) * BLOCK_BYTES)), `page ${n}`).toBe(true);
      }
      expect(cache.heldBytes()).toBeLessThanOrEqual(capacity * BLOCK_BYTES);
    }
    cache.close();
    // A scan from the first page to the last: one read from the file for the first block, then 16 blocks a read.
    const scan = new BlockCache(fileSource(fs, refOf(TOXICOLOGY)), 64 * BLOCK_BYTES);
    for (let n = 0; n < pages; n++) scan.block(n);
    expect(scan.readsFromSource).toBe(1 + Math.ceil((pages - 1) / 16));
    scan.close();
  });
});

describe('the SQL engine given a file', () => {
  // superhero and student_club: toxicology's 15-27 s predictions are left to the pool's tests.
  it('answers every item of the 13 mini-dev files on superhero and student_club exactly as when given the bytes', async () => {
    const { paged, bytes } = await engines();
    const files = new Map(
      ['superhero', 'student_club'].map((db) => [db, sharedData('bird', 'databases', db, `${db}.sqlite`)]),
    );
    // As the pool does: a database is (re)loaded whenever the engine answers need-db (the bytes
    // engine lets its pristine bytes go after a write; the paged one never needs to).
    const ask = async (engine: typeof paged, req: ExecRequest, give: () => Uint8Array | DbFileRef) => {
      let r = await engine.evaluate(req);
      if (r.kind === 'need-db') {
        await engine.loadDb(req.dbId, give());
        r = await engine.evaluate(req);
      }
      return done(r);
    };
    let compared = 0;
    let reloadsPaged = 0;
    const items = thirteenSampleRun().filter((it) => files.has(it.dbId));
    expect(items.length).toBe(13 * (52 + 48));
    for (const it of items) {
      const file = files.get(it.dbId)!;
      const req = request(it.dbId, it.predSql, it.goldSql);
      const viaPages = await ask(paged, req, () => {
        reloadsPaged += 1;
        return refOf(file);
      });
      const viaBytes = await ask(bytes, req, () => new Uint8Array(fs.readFileSync(file)));
      expect(viaPages).toEqual(viaBytes);
      compared += 1;
    }
    expect(compared).toBe(1300);
    // Opened once per database (two databases alternate, both fit the worker's cache).
    expect(reloadsPaged).toBe(2);
  });

  it('a prediction that writes changes only its own view: the file is untouched and the next item reads it as it was', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'tox.sqlite');
    fs.copyFileSync(TOXICOLOGY, file);
    const before = sha(file);
    const { paged } = await engines();
    await paged.loadDb('tox', refOf(file));
    const count = 'SELECT count(*) FROM atom';
    const first = done(await paged.evaluate(request('tox', count, count)));
    const wrote = done(await paged.evaluate(request('tox', 'DELETE FROM atom', count)));
    expect(wrote.mutatedDb).toBe(true);
    // The gold after the DELETE sees it (the official order), on a private view.
    expect(wrote.goldRowCount).toBe(1);
    expect(wrote.goldPreview).toEqual([[0]]);
    const grow = done(
      await paged.evaluate(
        request('tox', "INSERT INTO atom SELECT atom_id || 'x', molecule_id, element FROM atom", count),
      ),
    );
    expect(grow.goldPreview).toEqual([[Number(first.goldPreview[0]![0]) * 2]]);
    const after = done(await paged.evaluate(request('tox', count, count)));
    expect(after.goldPreview).toEqual(first.goldPreview);
    expect(sha(file)).toBe(before);
  });

  it('a file that changes while it is read: the items after the change are errors naming the file, never a verdict on mixed bytes', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'tox.sqlite');
    fs.copyFileSync(TOXICOLOGY, file);
    const { paged } = await engines();
    await paged.loadDb('tox', refOf(file));
    const q = 'SELECT count(*) FROM bond';
    expect(done(await paged.evaluate(request('tox', q, q))).status).toBe('ok');
    fs.appendFileSync(file, Buffer.alloc(4096));
    const r = done(await paged.evaluate(request('tox', 'SELECT * FROM connected', q)));
    expect(r.status).toBe('error');
    expect(r.error).toBe(
      `prediction: ${file} changed while it was read (its size or modification time changed): run again once nothing writes to it`,
    );
  });

  it('a WAL-mode file is read with the WAL flag patched over its source: the file keeps its bytes', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'w.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('a'), ('b')");
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    fs.rmSync(`${file}-wal`, { force: true });
    fs.rmSync(`${file}-shm`, { force: true });
    const head = fs.readFileSync(file).subarray(18, 20);
    expect(Array.from(head)).toEqual([2, 2]);
    const before = sha(file);
    const { paged } = await engines();
    await paged.loadDb('w', refOf(file));
    const r = done(await paged.evaluate(request('w', 'SELECT x FROM t ORDER BY x', "SELECT 'a' UNION SELECT 'b'")));
    expect(r).toMatchObject({ status: 'ok', ex: 1, predRowCount: 2 });
    expect(sha(file)).toBe(before);
  });
});

/** A database of more than 600 MiB, generated once into the system's temp folder and reused. */
function bigDatabase(): { file: string; rows: number } {
  const rows = 1_400_000;
  const dir = path.join(tmpdir(), 'rlvr-workbench-test-cache', 'big600-v2');
  const file = path.join(dir, 'big600', 'big600.sqlite');
  const done = path.join(dir, 'complete');
  if (fs.existsSync(done) && fs.existsSync(file)) return { file, rows };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE facts (id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, pad BLOB)');
  db.prepare(
    `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
     INSERT INTO facts SELECT x, x % 1000, 'n' || (x % 5000), randomblob(400) FROM c`,
  ).run(rows);
  db.close();
  fs.writeFileSync(done, 'ok');
  return { file, rows };
}

describe('a database of more than 600 MiB in a worker', () => {
  // The bound: the process (this test's, with the worker thread in it) grows by less than 320
  // MiB while the worker opens the file and scans every row: sql.js and its heap, the page
  // cache (PAGE_CACHE_BYTES), and the results. A worker that held the file would grow by more
  // than the file itself.
  const BOUND_MIB = 320;
  // Both SQLite generations: the version check's sql.js 1.8.0 (SQLite 3.39.3) reads by pages too.
  it.each(['sql.js', 'legacy'] as const)(
    `%s: opens it by pages and answers a query that reads every row, the process growing by less than ${BOUND_MIB} MiB`,
    async (engine) => {
      const { file, rows } = bigDatabase();
      const size = fs.statSync(file).size;
      expect(size).toBeGreaterThan(600 * 1024 * 1024);
      expect(PAGE_CACHE_BYTES).toBeLessThan(BOUND_MIB * 1024 * 1024);
      const base = process.memoryUsage().rss;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      const pool = createNodeSqlPool({ dbRoot: path.dirname(path.dirname(file)), workers: 1, engine });
      try {
        const scan = 'SELECT count(*), sum(length(pad)), count(DISTINCT grp) FROM facts';
        const [r] = await pool.evaluate(
          [evalItem({ index: 0, dbId: 'big600', predSql: scan, goldSql: `SELECT ${rows}, ${rows * 400}, 1000` })],
          { ...DEFAULT_EVAL_OPTIONS, metrics: ['ex'], timeoutMs: 10 * 60_000 },
        );
        peak = Math.max(peak, process.memoryUsage().rss);
        expect(r).toMatchObject({ status: 'ok', ex: 1 });
      } finally {
        clearInterval(sampler);
        await pool.dispose();
      }
      const grewMib = (peak - base) / 2 ** 20;
      console.log(
        `[paged 600 MiB, ${engine}] file ${(size / 2 ** 20).toFixed(0)} MiB; process RSS ${(base / 2 ** 20).toFixed(0)} MiB before, peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${grewMib.toFixed(0)} MiB)`,
      );
      expect(grewMib).toBeLessThan(BOUND_MIB);
    },
  );
});
