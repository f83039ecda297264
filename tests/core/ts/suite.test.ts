/**
 * The suite generator and distillation on BIRD's real toxicology and superhero databases, with
 * sql.js in-process (the worker's own code, workers/sql-suite.ts): determinism, schema and
 * constraints kept, bounded size, and the variants and set cover it distils with.
 */
import { readFileSync } from 'node:fs';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { distill } from '../../../src/core/ts/distill.ts';
import { tieProbe } from '../../../src/core/ts/order-ties.ts';
import type { SuiteSpec } from '../../../src/core/ts/suite.ts';
import { comparedLiterals, goldVariants } from '../../../src/core/ts/variants.ts';
import { buildSuiteOn } from '../../../workers/sql-suite.ts';
import { sharedData, readSharedText } from '../../helpers/shared-data.ts';

let SQL: SqlJsStatic;
const open = (db: string): Database =>
  new SQL.Database(new Uint8Array(readFileSync(sharedData('bird', 'databases', db, `${db}.sqlite`))));
const goldsOf = (db: string) =>
  readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))
    .filter((p) => p[1] === db)
    .map((p) => p[0]!);
const SPEC: SuiteSpec = { seed: 7, size: 4, candidates: 8, maxRows: 40, sampleRows: 100 };

beforeAll(async () => {
  SQL = await initSqlJs();
});

describe('suite generator on BIRD databases', () => {
  it('the same seed gives byte-identical suite databases; another seed gives others', () => {
    const original = open('toxicology');
    const golds = goldsOf('toxicology');
    const a = buildSuiteOn(SQL, original, golds, SPEC);
    const b = buildSuiteOn(SQL, original, [...golds].reverse(), SPEC);
    const c = buildSuiteOn(SQL, original, golds, { ...SPEC, seed: 8 });
    original.close();
    expect(a.chosen).toEqual(b.chosen);
    expect(a.dbs.length).toBe(SPEC.size);
    a.dbs.forEach((bytes, i) => expect(Buffer.from(bytes).equals(Buffer.from(b.dbs[i]!)), `suite db ${i}`).toBe(true));
    expect(a.dbs.some((bytes, i) => !Buffer.from(bytes).equals(Buffer.from(c.dbs[i]!)))).toBe(true);
  });

  it('keeps the schema, the foreign keys and NOT NULL, and bounds the rows per table', () => {
    const original = open('superhero');
    const suite = buildSuiteOn(SQL, original, goldsOf('superhero'), SPEC);
    const schemaOf = (db: Database) =>
      db.exec("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")[0]!.values;
    const want = schemaOf(original);
    original.close();
    let rows = 0;
    for (const bytes of suite.dbs) {
      const db = new SQL.Database(bytes);
      try {
        expect(schemaOf(db)).toEqual(want);
        // Every foreign key value exists in its referenced table.
        expect(db.exec('PRAGMA foreign_key_check')).toEqual([]);
        for (const [name] of db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]!.values) {
          const n = Number(db.exec(`SELECT count(*) FROM "${name}"`)[0]!.values[0]![0]);
          expect(n, String(name)).toBeLessThanOrEqual(SPEC.maxRows);
          rows += n;
        }
        // superhero.id is INTEGER NOT NULL PRIMARY KEY: never NULL, never repeated.
        expect(
          db.exec('SELECT count(*) - count(DISTINCT id), count(*) - count(id) FROM superhero')[0]!.values[0],
        ).toEqual([0, 0]);
      } finally {
        db.close();
      }
    }
    expect(rows).toBeGreaterThan(0);
  });

  it('distillation keeps databases that tell golds from their variants', () => {
    const original = open('superhero');
    const suite = buildSuiteOn(SQL, original, goldsOf('superhero'), SPEC);
    original.close();
    expect(suite.stats.golds).toBe(new Set(goldsOf('superhero')).size);
    expect(suite.stats.variants).toBeGreaterThan(suite.stats.golds);
    expect(suite.stats.distinguishable).toBeGreaterThan(0);
    expect(suite.stats.covered).toBeGreaterThan(0);
    expect(suite.stats.covered).toBeLessThanOrEqual(suite.stats.distinguishable);
  });
});

describe('near-miss variants of a gold', () => {
  const gold =
    "SELECT DISTINCT T1.name FROM a AS T1 INNER JOIN b AS T2 ON T1.id = T2.a_id WHERE T1.x > 5 AND T2.y = 'k' ORDER BY T1.name LIMIT 2";
  const variants = goldVariants(gold);
  const of = (kind: string) => variants.filter((v) => v.kind === kind).map((v) => v.sql);

  it('shifts comparisons with a literal, never a join condition', () => {
    expect(of('comparison')).toEqual([
      gold.replace('T1.x > 5', 'T1.x >= 5'),
      gold.replace("T2.y = 'k'", "T2.y != 'k'"),
    ]);
  });

  it('drops DISTINCT, changes or removes LIMIT, makes the join LEFT, flips ORDER BY', () => {
    expect(of('distinct')).toEqual([gold.replace('SELECT DISTINCT ', 'SELECT  ')]);
    expect(of('limit')).toEqual([gold.replace('LIMIT 2', 'LIMIT 3'), gold.replace(' LIMIT 2', ' ')]);
    expect(of('left-join')).toEqual([gold.replace('INNER JOIN', 'LEFT JOIN')]);
    expect(of('order-direction')).toEqual([gold.replace('ORDER BY T1.name', 'ORDER BY T1.name DESC')]);
  });

  it('removes one AND condition (not the AND of BETWEEN), or a WHERE with one condition', () => {
    expect(of('drop-condition')).toEqual([gold.replace("AND T2.y = 'k' ", '')]);
    const between = goldVariants('SELECT a FROM t WHERE b BETWEEN 1 AND 3 AND c = 2')
      .filter((v) => v.kind === 'drop-condition')
      .map((v) => v.sql);
    expect(between).toEqual(['SELECT a FROM t WHERE b BETWEEN 1 AND 3 ']);
    const single = goldVariants("SELECT a FROM t WHERE c = 'x' GROUP BY a")
      .filter((v) => v.kind === 'drop-condition')
      .map((v) => v.sql);
    expect(single).toEqual(['SELECT a FROM t GROUP BY a']);
  });

  it('adds DISTINCT where there is none, and never edits strings', () => {
    expect(goldVariants("SELECT a FROM t WHERE b = 'x < y'").map((v) => v.sql)).toContain(
      "SELECT DISTINCT a FROM t WHERE b = 'x < y'",
    );
    expect(goldVariants("SELECT a FROM t WHERE b = 'x < y'").some((v) => v.sql.includes("'x <= y'"))).toBe(false);
  });

  it('collects the literals each column is compared with', () => {
    expect(
      Object.fromEntries(
        comparedLiterals("SELECT 1 FROM t WHERE t.h > 250 AND name IN ('a', 'b') AND w BETWEEN 1 AND 9"),
      ),
    ).toEqual({
      h: [250],
      name: ['a', 'b'],
      w: [1, 9],
    });
  });
});

describe('tie probe of a gold with ORDER BY ... LIMIT', () => {
  it('puts the keys in front, orders by them and reads the two rows around the cut', () => {
    expect(tieProbe('SELECT name FROM t WHERE x = 1 ORDER BY score DESC, id LIMIT 3')).toEqual({
      sql: 'SELECT score, id, name FROM t WHERE x = 1 ORDER BY 1 DESC, 2 LIMIT 2 OFFSET 2',
      keys: 2,
    });
    expect(tieProbe('SELECT a FROM t ORDER BY b LIMIT 2, 1')?.sql).toBe(
      'SELECT b, a FROM t ORDER BY 1 LIMIT 2 OFFSET 2',
    );
    expect(tieProbe('SELECT T1.a FROM t AS T1 GROUP BY T1.a ORDER BY COUNT(*) DESC LIMIT 1')?.sql).toBe(
      'SELECT COUNT(*), T1.a FROM t AS T1 GROUP BY T1.a ORDER BY 1 DESC LIMIT 2 OFFSET 0',
    );
  });

  it('leaves out what it cannot probe: no LIMIT, DISTINCT, compounds, aliases or positions as keys', () => {
    for (const sql of [
      'SELECT a FROM t ORDER BY b',
      'SELECT DISTINCT a FROM t ORDER BY b LIMIT 1',
      'SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 LIMIT 1',
      'SELECT a, COUNT(*) AS n FROM t GROUP BY a ORDER BY n DESC LIMIT 1',
      'SELECT a FROM t ORDER BY 1 LIMIT 1',
      'SELECT a FROM (SELECT a FROM t ORDER BY b LIMIT 1)',
    ])
      expect(tieProbe(sql), sql).toBeNull();
  });
});

describe('greedy distillation', () => {
  it('keeps the candidate covering most pairs first, stops the cover when nothing is gained, then tops up in order', () => {
    const d = distill({ distinguishes: [new Set([1]), new Set([1, 2, 3]), new Set([3, 4]), new Set()], size: 3 });
    expect(d.chosen).toEqual([1, 2, 0]);
    expect(d.byCover).toBe(2);
    expect(d.covered).toBe(4);
    expect(d.distinguishable).toBe(4);
  });
});
