import initSqlJs from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { Fnv1a64, resultKey } from '../../../src/core/rl/result-key.ts';
import { createSqlEngine } from '../../../workers/sql-engine.ts';
import type { ExecDone, SqlWorkerApi } from '../../../workers/sql.api.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';

function referenceFnv(bytes: readonly number[]): string {
  let h = 0xcbf29ce484222325n;
  for (const x of bytes) h = ((h ^ BigInt(x)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

describe('FNV-1a 64 in 16-bit limbs', () => {
  it('gives the published values', () => {
    const hash = (bytes: number[]) => {
      const h = new Fnv1a64();
      for (const b of bytes) h.addByte(b);
      return h.hex();
    };
    expect(hash([])).toBe('cbf29ce484222325');
    expect(hash([0x61])).toBe('af63dc4c8601ec8c'); // "a"
    expect(hash([...'foobar'].map((c) => c.charCodeAt(0)))).toBe('85944171f73967e8');
  });

  it('agrees with a BigInt reference on random byte strings', () => {
    const rng = mulberry32(3);
    for (let t = 0; t < 200; t++) {
      const bytes = Array.from({ length: Math.floor(rng.next() * 64) }, () => Math.floor(rng.next() * 256));
      const h = new Fnv1a64();
      for (const b of bytes) h.addByte(b);
      expect(h.hex()).toBe(referenceFnv(bytes));
    }
  });
});

describe('result keys: EX-equal results share a key', () => {
  it('ignores row order and duplicate rows, and compares values as Python does', () => {
    const k = resultKey([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(
      resultKey([
        [2, 'b'],
        [1, 'a'],
        [1, 'a'],
      ]),
    ).toBe(k);
    expect(
      resultKey([
        [1.0, 'a'],
        [2n, 'b'],
      ]),
    ).toBe(k);
    expect(resultKey([[1, 'a']])).not.toBe(k);
    expect(
      resultKey([
        ['1', 'a'],
        [2, 'b'],
      ]),
    ).not.toBe(k);
    expect(
      resultKey([
        ['a', 1],
        ['b', 2],
      ]),
    ).not.toBe(k);
    expect(resultKey([])).not.toBe(resultKey([[null]]));
    expect(resultKey([[1], [2]])).not.toBe(resultKey([[1, 2]]));
    expect(resultKey([])).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('the SQL engine reports a result key when the prediction executed', () => {
  let engine: SqlWorkerApi;
  beforeAll(async () => {
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    db.exec("CREATE TABLE t (x INTEGER, y TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (2, 'b');");
    const bytes = db.export();
    db.close();
    engine = createSqlEngine(() => initSqlJs());
    await engine.init({ cacheBytes: 1 << 24 });
    await engine.loadDb('t', bytes);
  });
  const run = async (predSql: string, goldSql = 'SELECT x, y FROM t') =>
    (await engine.evaluate({
      dbId: 't',
      predSql,
      goldSql,
      readOnly: false,
      softF1: false,
      previewRows: 0,
    })) as ExecDone;

  it('gives EX-equal predictions the same key and others a different one', async () => {
    const gold = await run('SELECT x, y FROM t');
    const reordered = await run('SELECT DISTINCT x, y FROM t ORDER BY x DESC');
    const other = await run('SELECT y, x FROM t');
    expect(gold.ex).toBe(1);
    expect(reordered.ex).toBe(1);
    expect(reordered.resultKey).toBe(gold.resultKey);
    expect(other.ex).toBe(0);
    expect(other.resultKey).not.toBe(gold.resultKey);
  });

  it('gives no key when the prediction fails, and a key when only the gold query fails', async () => {
    expect((await run('SELECT nope FROM t')).resultKey).toBeUndefined();
    const goldFails = await run('SELECT x FROM t', 'SELECT nope FROM t');
    expect(goldFails.status).toBe('error');
    expect(goldFails.resultKey).toBe(resultKey([[1], [2]]));
  });
});
