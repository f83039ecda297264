/**
 * The pool's probe (multi-turn episodes): real sql.js workers over the mini-dev databases. A probe
 * returns every row in the query's order with storage classes; it can never write, attach or change
 * what the run's items see; a probe past its timeout is stopped (its worker replaced) and the
 * database is not given up: the next probe and the run's items still read it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import type { EvalItem } from '../../src/core/types.ts';
import { sharedData } from '../helpers/shared-data.ts';

const pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 1 });
afterAll(() => pool.dispose());
const probe = (sql: string, timeoutMs = 60_000) => pool.probe('toxicology', sql, { timeoutMs });
const COUNT = 'SELECT count(*) FROM bond';

describe('SqlPool.probe', () => {
  it('returns rows in query order with storage classes (REAL 1.0 stays real, INTEGER integer)', async () => {
    const r = await probe("SELECT 1.0, 2, 'x', NULL, x'00ff' UNION ALL SELECT 3.5, 4, 'y', 1, x'01'");
    expect(r.error).toBeUndefined();
    expect(r.rows).toEqual([
      [1, 2, 'x', null, new Uint8Array([0, 255])],
      [3.5, 4, 'y', 1, new Uint8Array([1])],
    ]);
    expect(r.classes).toEqual([
      ['real', 'integer', 'text', 'null', 'blob'],
      ['real', 'integer', 'text', 'integer', 'blob'],
    ]);
  });

  it('refuses writes, ATTACH and temp objects; nothing changes for later probes', async () => {
    const before = (await probe(COUNT)).rows;
    for (const sql of [
      "INSERT INTO bond (bond_id, molecule_id, bond_type) VALUES ('X_1', 'TR000', '-')",
      'DELETE FROM bond',
      'DROP TABLE connected',
      "ATTACH DATABASE ':memory:' AS other",
      'CREATE TEMP TABLE bond (x)',
    ]) {
      const r = await probe(sql);
      expect(r.error, sql).toBeTruthy();
      expect(r.rows).toEqual([]);
    }
    expect((await probe(COUNT)).rows).toEqual(before);
    expect((await probe("SELECT count(*) FROM pragma_database_list WHERE name = 'other'")).rows).toEqual([[0]]);
    expect((await probe('SELECT count(*) FROM connected')).error).toBeUndefined();
  });

  it("a probe past its timeout is stopped; the database is not given up, for probes nor the run's items", async () => {
    const r = await probe(
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
      1000,
    );
    expect(r).toEqual({ columns: [], rows: [], classes: [], timedOut: true });
    expect((await probe(COUNT)).error).toBeUndefined();
    const item: EvalItem = {
      index: 0,
      questionId: 0,
      dbId: 'toxicology',
      difficulty: 'simple',
      predSql: COUNT,
      goldSql: COUNT,
      extraction: { rule: 'sql-line', thinkStripped: false },
    };
    const [res] = await pool.evaluate([item], {
      metrics: ['ex'],
      timeoutMs: 30_000,
      readOnly: false,
      vesIterations: 1,
      previewRows: 0,
    });
    expect(res).toMatchObject({ status: 'ok', ex: 1 });
  }, 60_000);

  it("a missing database is that probe's error, naming where it was expected", async () => {
    const r = await pool.probe('nowhere', 'SELECT 1', { timeoutMs: 10_000 });
    expect(r.error).toMatch(/database nowhere not found: expected .*nowhere/);
  });
});
