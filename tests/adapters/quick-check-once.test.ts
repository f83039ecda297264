/**
 * SQLite's quick_check reads every page of a database, so it runs once per database content
 * (by sha256), not at every opening: the pool remembers the contents that passed it, and a later
 * opening of the same bytes (another worker, a re-opening after the worker's cache let the
 * database go, the next run in the same process) skips it. The pool reports, with each opening,
 * whether the check ran (`db-loaded`'s `quickChecked`), so nothing here depends on time.
 * Real worker threads reading real files by pages, as the CLI's pool does.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import type { SqlPool } from '../../src/adapters/sql-pool.ts';
import { DEFAULT_EVAL_OPTIONS, type EvalEvent } from '../../src/core/eval/executor.ts';
import type { ItemResult } from '../../src/core/types.ts';
import { evalItem } from '../helpers/item-results.ts';
import { NativeDatabase } from '../helpers/native-sqlite.ts';

const pools: SqlPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.dispose();
});

const TOKEN = 24;

/**
 * A database `facts/facts.sqlite` under a fresh root, written by SQLite itself: 3,000 rows, each
 * with a random token of TOKEN hex characters, so its content (and sha256) is this test's own
 * whatever else the process has checked before. Rollback journal: an update of a token keeps
 * the file's size.
 */
function makeDb(): { root: string; file: string } {
  const root = fs.mkdtempSync(path.join(tmpdir(), 'wb-quickcheck-'));
  fs.mkdirSync(path.join(root, 'facts'));
  const file = path.join(root, 'facts', 'facts.sqlite');
  const db = new NativeDatabase(file);
  db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, token TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= 3000; i++) insert.run(i, randomBytes(TOKEN / 2).toString('hex'));
  })();
  db.close();
  return { root, file };
}

/** One item on `facts` in a fresh pool (one worker) over `root`: its result and whether the check ran at each opening. */
async function runOnce(root: string): Promise<{ result: ItemResult; quickChecked: (boolean | undefined)[] }> {
  const pool = createNodeSqlPool({ dbRoot: root, workers: 1 });
  pools.push(pool);
  const events: EvalEvent[] = [];
  const [result] = await pool.evaluate(
    [evalItem({ index: 0, dbId: 'facts', predSql: 'SELECT count(*) FROM t', goldSql: 'SELECT 3000' })],
    DEFAULT_EVAL_OPTIONS,
    { onEvent: (e) => events.push(e) },
  );
  const quickChecked = events.flatMap((e) => (e.type === 'db-loaded' ? [e.quickChecked] : []));
  return { result: result!, quickChecked };
}

/** Overwrites bytes inside the file's b-tree pages (not its header): same name, same size, damaged. */
function damage(file: string): void {
  const bytes = fs.readFileSync(file);
  const size = bytes.length;
  for (let i = 3 * 4096; i < 9 * 4096; i++) bytes[i] = (i * 7) & 255;
  fs.writeFileSync(file, bytes);
  expect(fs.statSync(file).size).toBe(size);
}

const DAMAGED =
  /^database facts: unreadable SQLite file \(damaged: Tree \d+ page \d+: .*\); import an intact copy of it again$/;

describe('the whole-file check runs once per database content', () => {
  it('a second opening of the same bytes (a new pool of the same process) skips quick_check and scores alike', async () => {
    const { root } = makeDb();
    const first = await runOnce(root);
    expect(first.quickChecked).toEqual([true]);
    expect(first.result).toMatchObject({ status: 'ok', ex: 1 });
    const second = await runOnce(root);
    expect(second.quickChecked).toEqual([false]);
    expect(second.result).toMatchObject({ status: 'ok', ex: 1, dbSha256: first.result.dbSha256 });
  });

  it('a different file under the same name and of the same size is checked again', async () => {
    const { root, file } = makeDb();
    const before = fs.statSync(file).size;
    expect((await runOnce(root)).quickChecked).toEqual([true]);
    // Other intact bytes: one token replaced by another of the same length.
    const db = new NativeDatabase(file);
    db.prepare('UPDATE t SET token = ? WHERE id = 1500').run(randomBytes(TOKEN / 2).toString('hex'));
    db.close();
    expect(fs.statSync(file).size).toBe(before);
    const changed = await runOnce(root);
    expect(changed.quickChecked).toEqual([true]);
    expect(changed.result).toMatchObject({ status: 'ok', ex: 1 });
    // Damaged bytes of the same size after the intact ones passed: checked, and refused.
    damage(file);
    const damaged = await runOnce(root);
    expect(damaged.result.status).toBe('error');
    expect(damaged.result.error).toMatch(DAMAGED);
  });

  it('a damaged file is refused at its first opening, and again at the next (a failed check is never remembered)', async () => {
    const { root, file } = makeDb();
    damage(file);
    for (let run = 0; run < 2; run++) {
      const { result, quickChecked } = await runOnce(root);
      expect(quickChecked).toEqual([]);
      expect(result.status).toBe('error');
      expect(result.error).toMatch(DAMAGED);
    }
  });
});
