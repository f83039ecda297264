import initSqlJs from 'sql.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { memoryDbSource } from '../../src/adapters/browser/sql-worker-host.ts';
import { spawnNodeSqlWorker, sqlJsWasmModule } from '../../src/adapters/node/sql-worker-host.ts';
import { SqlPool, type WorkerHandle } from '../../src/adapters/sql-pool.ts';
import { DEFAULT_EVAL_OPTIONS, type EvalEvent } from '../../src/core/eval/executor.ts';
import type { EvalItem, ItemResult } from '../../src/core/types.ts';
import type { WorkerInit } from '../../workers/sql.api.ts';
import { evalItem } from '../helpers/item-results.ts';

const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
let dbs: Map<string, Uint8Array>;
let pool: SqlPool | null = null;

beforeAll(async () => {
  const SQL = await initSqlJs();
  dbs = new Map();
  for (const [name, rows] of [
    ['a', 3],
    ['b', 5],
  ] as const) {
    const db = new SQL.Database();
    db.exec(`CREATE TABLE t(x); ${Array.from({ length: rows }, (_, i) => `INSERT INTO t VALUES (${i});`).join('')}`);
    dbs.set(name, db.export());
    db.close();
  }
});

afterEach(async () => {
  await pool?.dispose();
  pool = null;
});

const item = (index: number, dbId: string, predSql: string, goldSql: string): EvalItem =>
  evalItem({ index, questionId: 1000 + index, dbId, predSql, goldSql });

/**
 * A pool of one Node SQL worker over the test databases whose first worker goes through
 * `breakFirst` (killed, or its API made to crash), as a crash would; `spawned()` counts workers.
 */
function poolWithFirstWorkerBroken(breakFirst: (h: WorkerHandle) => WorkerHandle): { spawned: () => number } {
  let spawned = 0;
  const spawn = (): WorkerHandle => {
    const h = spawnNodeSqlWorker();
    return spawned++ === 0 ? breakFirst(h) : h;
  };
  pool = new SqlPool({ spawn, dbSource: memoryDbSource(dbs), size: 1 });
  return { spawned: () => spawned };
}

/** The first item is the crashed worker's error; the next one, on a new worker, is scored. */
function expectCrashedThenScored(results: ItemResult[]): void {
  expect(results[0]!.status).toBe('error');
  expect(results[0]!.error).toMatch(/worker crashed/);
  expect(results[1]).toMatchObject({ status: 'ok', ex: 1 });
}

describe('SqlPool on Node worker_threads (the same worker module as the browser)', () => {
  it('kills a runaway query at the timeout and still evaluates the next item', async () => {
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 1 });
    const events: EvalEvent[] = [];
    const results = await pool.evaluate(
      [item(0, 'a', RUNAWAY, 'SELECT 1'), item(1, 'a', 'SELECT count(*) FROM t', 'SELECT 3')],
      { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 1500 },
      { onEvent: (e) => events.push(e) },
    );
    expect(results[0]).toMatchObject({ status: 'timeout', ex: 0, softF1: 0, index: 0 });
    expect(results[0]!.error).toMatch(/timed out after 1.5 s/);
    expect(results[1]).toMatchObject({ status: 'ok', ex: 1, index: 1 });
    expect(events.some((e) => e.type === 'worker-restarted')).toBe(true);
  });

  it('returns results in item order whatever the order of completion, with several workers', async () => {
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 2 });
    const items = Array.from({ length: 30 }, (_, i) =>
      item(i, i % 2 ? 'a' : 'b', 'SELECT count(*) FROM t', i % 2 ? 'SELECT 3' : i % 3 ? 'SELECT 5' : 'SELECT 0'),
    );
    const results = await pool.evaluate(items, DEFAULT_EVAL_OPTIONS);
    expect(results.map((r) => r.index)).toEqual(items.map((i) => i.index));
    expect(results.map((r) => r.ex)).toEqual(items.map((_, i) => (i % 2 || i % 3 ? 1 : 0)));
  });

  it('opens each database once per worker while it has items of it', async () => {
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 2 });
    const loads: string[] = [];
    const items = Array.from({ length: 20 }, (_, i) => item(i, i < 10 ? 'a' : 'b', 'SELECT 1', 'SELECT 1'));
    await pool.evaluate(items, DEFAULT_EVAL_OPTIONS, { onEvent: (e) => e.type === 'db-loaded' && loads.push(e.dbId) });
    expect(loads.sort()).toEqual(['a', 'b']);
  });

  it('leaves items of a missing database out with a message naming it', async () => {
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 1 });
    const [r0, r1] = await pool.evaluate(
      [item(0, 'nope', 'SELECT 1', 'SELECT 1'), item(1, 'a', 'SELECT 1', 'SELECT 1')],
      DEFAULT_EVAL_OPTIONS,
    );
    expect(r0).toMatchObject({ status: 'missing-db', ex: 0 });
    expect(r0!.error).toContain('database nope not found');
    expect(r1).toMatchObject({ status: 'ok', ex: 1 });
  });

  it('marks every item of an unreadable database as an error and goes on', async () => {
    const broken = new Map(dbs);
    broken.set('junk', new TextEncoder().encode('this is not a database'.repeat(20)));
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(broken), size: 1 });
    const results = await pool.evaluate(
      [
        item(0, 'junk', 'SELECT 1', 'SELECT 1'),
        item(1, 'junk', 'SELECT 1', 'SELECT 1'),
        item(2, 'a', 'SELECT 1', 'SELECT 1'),
      ],
      DEFAULT_EVAL_OPTIONS,
    );
    expect(results.map((r) => r.status)).toEqual(['error', 'error', 'ok']);
    expect(results[0]!.error).toContain('database junk: not an SQLite 3 file');
  });

  it('survives a worker that dies mid-item: that item is an error, the next one runs', async () => {
    // The first worker is killed from outside 300 ms in.
    poolWithFirstWorkerBroken((h) => (setTimeout(() => h.terminate(), 300), h));
    const results = await pool!.evaluate(
      [item(0, 'a', RUNAWAY, 'SELECT 1'), item(1, 'a', 'SELECT count(*) FROM t', 'SELECT 3')],
      { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 20_000 },
    );
    expectCrashedThenScored(results);
  });

  it('survives a worker that dies while it starts: no hang, the item is an error, the next one runs', async () => {
    poolWithFirstWorkerBroken((h) => (h.terminate(), h));
    const results = await pool!.evaluate(
      [item(0, 'a', 'SELECT 1', 'SELECT 1'), item(1, 'a', 'SELECT count(*) FROM t', 'SELECT 3')],
      DEFAULT_EVAL_OPTIONS,
    );
    expectCrashedThenScored(results);
  });

  it('a worker that dies while it opens a database: that item is marked, the database is not given up, its later items run', async () => {
    // The first worker crashes as it receives the database bytes.
    const { spawned } = poolWithFirstWorkerBroken((h) => {
      const api = new Proxy(h.api, {
        get: (target, prop, receiver) =>
          prop === 'loadDb' ? () => (h.terminate(), new Promise(() => undefined)) : Reflect.get(target, prop, receiver),
      });
      return { ...h, api };
    });
    const results = await pool!.evaluate(
      [
        item(0, 'a', 'SELECT 1', 'SELECT 1'),
        item(1, 'a', 'SELECT count(*) FROM t', 'SELECT 3'),
        item(2, 'a', 'SELECT 2', 'SELECT 2'),
      ],
      DEFAULT_EVAL_OPTIONS,
    );
    expect(results[0]!.status).toBe('error');
    expect(results[0]!.error).toMatch(/^worker crashed/);
    expect(results.slice(1).map((r) => [r.status, r.ex])).toEqual([
      ['ok', 1],
      ['ok', 1],
    ]);
    expect(spawned()).toBe(2);
  });

  it('workers handed one compiled sql.js (as the CLI and the app start them) answer as workers that compile their own, a worker started again after a timeout included', async () => {
    const given: boolean[] = [];
    const spawn = (): WorkerHandle => {
      const h = spawnNodeSqlWorker();
      const api = new Proxy(h.api, {
        get: (target, prop, receiver) =>
          prop === 'init'
            ? (init: WorkerInit) => (given.push(init.wasmModule instanceof WebAssembly.Module), target.init(init))
            : Reflect.get(target, prop, receiver),
      });
      return { ...h, api };
    };
    const items = [
      item(0, 'a', RUNAWAY, 'SELECT 1'),
      ...Array.from({ length: 12 }, (_, i) =>
        item(i + 1, i % 2 ? 'a' : 'b', 'SELECT count(*), sum(x) FROM t', i % 3 ? 'SELECT 3, 3' : 'SELECT 5, 10'),
      ),
    ];
    const options = { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 1500 };
    pool = new SqlPool({ spawn, dbSource: memoryDbSource(dbs), size: 2, wasmModule: sqlJsWasmModule });
    const shared = await pool.evaluate(items, options);
    await pool.dispose();
    // The runaway's worker was replaced, and the new one got the module too.
    expect(given.length).toBe(3);
    expect(given.every(Boolean)).toBe(true);
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 2 });
    const own = await pool.evaluate(items, options);
    const verdict = (r: ItemResult) => [r.index, r.status, r.ex, r.softF1, r.error];
    expect(shared.map(verdict)).toEqual(own.map(verdict));
    expect(shared[0]!.status).toBe('timeout');
    expect(shared.filter((r) => r.ex === 1).length).toBe(6);
  });

  it('an item posted ahead that runs away never holds up the opening of the item before it: both are scored within their own timeouts, the database is not given up', async () => {
    // A worker cache of one database: opening one evicts the other.
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 1, cacheBytes: 1 });
    // Opens a, then b: the worker holds b only (a was evicted), and prefers both as databases it has opened.
    const first = await pool.evaluate(
      [item(0, 'a', 'SELECT 1', 'SELECT 1'), item(1, 'b', 'SELECT 1', 'SELECT 1')],
      DEFAULT_EVAL_OPTIONS,
    );
    expect(first.map((r) => r.status)).toEqual(['ok', 'ok']);
    // The item of a must open a again; the next item is of b, which the worker holds, and never
    // finishes. Posted ahead of a's opening, it would make that opening wait for the opening's
    // own limit (10 minutes, far beyond this test's) and a would be given up.
    const events: EvalEvent[] = [];
    const results = await pool.evaluate(
      [item(2, 'a', 'SELECT count(*) FROM t', 'SELECT 3'), item(3, 'b', RUNAWAY, 'SELECT 1')],
      { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 1500 },
      { onEvent: (e) => events.push(e) },
    );
    expect(results[0]).toMatchObject({ index: 2, status: 'ok', ex: 1, error: null });
    expect(results[1]).toMatchObject({ index: 3, status: 'timeout', ex: 0 });
    expect(results[1]!.error).toMatch(/timed out after 1.5 s/);
    expect(events.filter((e) => e.type === 'db-loaded').map((e) => e.type === 'db-loaded' && e.dbId)).toEqual([
      'a',
      'b',
    ]);
    // The pool goes on serving a.
    const after = await pool.evaluate([item(4, 'a', 'SELECT count(*) FROM t', 'SELECT 3')], DEFAULT_EVAL_OPTIONS);
    expect(after[0]).toMatchObject({ status: 'ok', ex: 1 });
  }, 60_000);

  it('an item asked again once its database is open runs before the next item, not behind its query', async () => {
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 1 });
    // A fresh worker: the first two items (posted before a is opened) are answered need-db; the
    // second, asked again after the opening, would wait behind the third's endless query and
    // time out, though it is answered at once.
    const results = await pool.evaluate(
      [
        item(0, 'a', 'SELECT 1', 'SELECT 1'),
        item(1, 'a', 'SELECT count(*) FROM t', 'SELECT 3'),
        item(2, 'a', RUNAWAY, 'SELECT 1'),
        item(3, 'a', 'SELECT max(x) FROM t', 'SELECT 2'),
      ],
      { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 1500 },
    );
    expect(results.map((r) => [r.index, r.status, r.ex])).toEqual([
      [0, 'ok', 1],
      [1, 'ok', 1],
      [2, 'timeout', 0],
      [3, 'ok', 1],
    ]);
  }, 60_000);

  it('stops on abort and rejects with an AbortError', async () => {
    pool = new SqlPool({ spawn: spawnNodeSqlWorker, dbSource: memoryDbSource(dbs), size: 1 });
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 300);
    await expect(
      pool.evaluate(
        [item(0, 'a', RUNAWAY, 'SELECT 1')],
        { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 20_000 },
        { signal: ctrl.signal },
      ),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});
