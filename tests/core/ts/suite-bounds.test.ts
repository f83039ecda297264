/**
 * Weak cases of metric ts, on real sql.js: a suite's memory grows with its rows, not
 * with the size of the original's values; a suite that tells nothing apart says so; an FTS5
 * table is left out of the suite and a query reading it fails with what it means; an empty
 * difficulty bucket has no TS rather than 0.00.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import initSqlJs, { type SqlJsStatic } from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { officialTable } from '../../../src/core/eval/report.ts';
import { summarize } from '../../../src/core/eval/summary.ts';
import { itemResult } from '../../../src/core/eval/item-result.ts';
import { MAX_SAMPLED_VALUE_LENGTH } from '../../../src/core/ts/generate.ts';
import type { SuiteSpec } from '../../../src/core/ts/suite.ts';
import type { EvalItem } from '../../../src/core/types.ts';
import { createSqlEngine } from '../../../workers/sql-engine.ts';
import { OpenSuite, buildSuiteOn } from '../../../workers/sql-suite.ts';
import { NativeDatabase } from '../../helpers/native-sqlite.ts';

let SQL: SqlJsStatic;
beforeAll(async () => {
  SQL = await initSqlJs();
});
const SPEC: SuiteSpec = { seed: 3, size: 4, candidates: 8, maxRows: 60, sampleRows: 200 };

describe('test suites are bounded by rows, not by value sizes', () => {
  it('100 MiB of 1 MiB blobs (100 rows): the suite keeps prefixes, a few hundred KiB in all', () => {
    const db = new SQL.Database();
    db.exec('CREATE TABLE doc (id INTEGER PRIMARY KEY, kind TEXT, body BLOB, note TEXT)');
    db.exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100)
      INSERT INTO doc SELECT x, CASE WHEN x % 2 THEN 'a' ELSE 'b' END, randomblob(1048576), printf('%.*c', 200000, 'n') FROM c`);
    const golds = ["SELECT count(*) FROM doc WHERE kind = 'a'", 'SELECT id FROM doc WHERE id > 50 ORDER BY id LIMIT 3'];
    const suite = buildSuiteOn(SQL, db, golds, SPEC);
    db.close();
    // Before the bound, each kept database held up to 60 rows of 1.2 MB (about 290 MB for 4).
    expect(suite.stats.bytes).toBeLessThan(8 * 60 * 2 * (MAX_SAMPLED_VALUE_LENGTH + 512) * 4);
    const open = new OpenSuite(SQL, suite);
    try {
      const widest = new SQL.Database(suite.dbs[0]!);
      const [[maxBody, maxNote]] = widest.exec('SELECT max(length(body)), max(length(note)) FROM doc')[0]!.values as [
        [number, number],
      ];
      widest.close();
      expect(maxBody).toBe(MAX_SAMPLED_VALUE_LENGTH);
      expect(maxNote).toBe(MAX_SAMPLED_VALUE_LENGTH);
      // The suite still tells a near miss apart.
      expect(open.check('SELECT id FROM doc WHERE id >= 50 ORDER BY id LIMIT 3', golds[1]!).ts).toBe(0);
      expect(open.check(golds[1]!, golds[1]!).ts).toBe(1);
    } finally {
      open.close();
    }
    console.log(`suite of 4 databases from 100 MiB of blobs: ${(suite.stats.bytes / 1024).toFixed(0)} KiB`);
  }, 120_000);
});

describe('a suite that tells nothing apart says so', () => {
  it('every table empty: a warning naming the reason', () => {
    const db = new SQL.Database();
    db.exec('CREATE TABLE a (x INTEGER, y TEXT); CREATE TABLE b (z INTEGER)');
    const suite = buildSuiteOn(SQL, db, ['SELECT count(*) FROM a WHERE x > 3', 'SELECT z FROM b'], SPEC);
    db.close();
    expect(suite.stats.distinguishable).toBe(0);
    expect(suite.stats.warning).toMatch(
      /^every table of the database is empty \(2\), so is every suite database: the suite tells no query apart/,
    );
  });
  it('a database with rows: no warning', () => {
    const db = new SQL.Database();
    db.exec("CREATE TABLE a (x INTEGER, y TEXT); INSERT INTO a VALUES (1, 'p'), (5, 'q'), (9, 'r')");
    const suite = buildSuiteOn(SQL, db, ['SELECT count(*) FROM a WHERE x > 3'], SPEC);
    db.close();
    expect(suite.stats.distinguishable).toBeGreaterThan(0);
    expect(suite.stats.warning).toBeUndefined();
  });
});

describe('FTS5 tables (sql.js has FTS3 only)', () => {
  const fts5Db = () => {
    // Written by native SQLite (better-sqlite3 has FTS5), read by sql.js.
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'wb-fts5-')), 'f.sqlite');
    const n = new NativeDatabase(file);
    n.exec(
      "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');" +
        "CREATE VIRTUAL TABLE docs USING fts5(body); INSERT INTO docs VALUES ('hello world');",
    );
    n.close();
    return new Uint8Array(readFileSync(file));
  };
  it('the suite leaves the virtual table out and is built; a query reading it fails naming the missing module', async () => {
    const engine = createSqlEngine(() => initSqlJs());
    await engine.init({ cacheBytes: 1 << 26 });
    await engine.loadDb('f', fts5Db());
    const built = await engine.buildSuite('f', SPEC, [
      'SELECT name FROM t WHERE id > 1',
      "SELECT * FROM docs WHERE docs MATCH 'hello'",
    ]);
    expect(built.kind).toBe('done');
    const r = await engine.evaluate({
      dbId: 'f',
      predSql: "SELECT * FROM docs WHERE docs MATCH 'hello'",
      goldSql: 'SELECT 1',
      readOnly: false,
      softF1: false,
      previewRows: 0,
    });
    expect(r).toMatchObject({ kind: 'done', status: 'error' });
    expect((r as { error: string }).error).toMatch(
      /^prediction: no such module: fts5 \(this SQL worker's SQLite, sql\.js, is built without the fts5 virtual-table module/,
    );
  });
});

describe('an empty difficulty bucket has no TS', () => {
  it('summary ts null and the official table prints "-" for it, not 0.00', () => {
    const it0: EvalItem = {
      index: 0,
      questionId: 0,
      dbId: 'd',
      difficulty: 'simple',
      predSql: 'SELECT 1',
      goldSql: 'SELECT 1',
      extraction: { rule: 'sql-field', thinkStripped: false },
    };
    const s = summarize([itemResult(it0, { status: 'ok', ex: 1, ts: 1 })], ['ex', 'ts']);
    expect(s.byDifficulty.simple!.ts).toBe(100);
    expect(s.byDifficulty.moderate?.ts ?? null).toBeNull();
    const tsLine = officialTable(s)
      .split('\n')
      .find((l) => l.startsWith('TS'))!;
    expect(tsLine.split(/\s+/)).toEqual(['TS', '100.00', '-', '-', '100.00']);
  });
});
