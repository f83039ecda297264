import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { MAX_RESULT_BYTES, createSqlEngine } from '../../workers/sql-engine.ts';
import { sqlEngineFixture } from '../helpers/sql-engine-fixture.ts';

const SCHEMA = `
  CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, score REAL, big INTEGER, photo BLOB);
  INSERT INTO person VALUES
    (1, 'Ada', 1.0, 9223372036854775807, x'00ff'),
    (2, 'Bob', 2.5, 9223372036854775806, NULL),
    (3, 'Cy', NULL, -9007199254740993, x'6162');
  CREATE TABLE empty_table (x);
`;

// The engine is the SQL worker's body: here it runs in-process on real sql.js.
const fx = sqlEngineFixture('people', SCHEMA, { softF1: true, previewRows: 10 });
const run = fx.run;

describe('statement rules of Python sqlite3', () => {
  const ok: [string, string][] = [
    ['a trailing semicolon', 'SELECT name FROM person;'],
    ['trailing whitespace and a line comment', 'SELECT name FROM person;  \n -- the end'],
    ['a trailing block comment', 'SELECT name FROM person; /* done */'],
    ['leading comments', '-- names\n/* all */ SELECT name FROM person'],
    ['a leading empty statement, which SQLite skips', ';SELECT name FROM person'],
  ];
  it.each(ok)('accepts %s', async (_n, sql) => {
    const r = await run(sql, 'SELECT name FROM person');
    expect(r.status).toBe('ok');
    expect(r.ex).toBe(1);
  });

  const empty: [string, string][] = [
    ['empty SQL', ''],
    ['whitespace-only SQL', '  \n\t '],
    ['comment-only SQL', '-- nothing here\n/* still nothing */'],
    ['a lone semicolon', ';'],
    ['a single space (what BIRD substitutes for a non-string prediction)', ' '],
  ];
  it.each(empty)('runs %s as no rows, which matches an empty gold result', async (_n, sql) => {
    const r = await run(sql, 'SELECT * FROM empty_table');
    expect(r).toMatchObject({ status: 'ok', ex: 1, softF1: 1, predRowCount: 0 });
    const r2 = await run(sql, 'SELECT name FROM person');
    expect(r2).toMatchObject({ status: 'ok', ex: 0, softF1: 0 });
  });

  const multiple: [string, string][] = [
    ['two statements', 'SELECT 1; SELECT 2'],
    ['a doubled semicolon', 'SELECT name FROM person;;'],
    ['a statement after a comment', 'SELECT 1; /* c */ SELECT 2'],
  ];
  it.each(multiple)("refuses %s with Python's message", async (_n, sql) => {
    const r = await run(sql, 'SELECT 1');
    expect(r.status).toBe('error');
    expect(r.error).toBe('prediction: You can only execute one statement at a time.');
  });

  it('refuses a second statement before executing the first', async () => {
    const r = await run('DELETE FROM person; SELECT 1', 'SELECT count(*) FROM person');
    expect(r.status).toBe('error');
    expect(r.mutatedDb).toBe(false);
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
  });

  it('reports SQLite errors with the side that failed', async () => {
    expect((await run('SELEC 1', 'SELECT 1')).error).toBe('prediction: near "SELEC": syntax error');
    expect((await run('SELECT nope FROM person', 'SELECT 1')).error).toBe('prediction: no such column: nope');
    expect((await run('SELECT 1', 'SELECT * FROM missing')).error).toBe('gold: no such table: missing');
  });

  it('refuses SQL containing a NUL character, as Python does', async () => {
    const r = await run('SELECT 1\u0000', 'SELECT 1');
    expect(r.status).toBe('error');
    expect(r.error).toContain('null character');
  });
});

describe('values as Python sees them', () => {
  it('reads integers beyond 2^53 exactly', async () => {
    const r = await run('SELECT big FROM person WHERE id = 1', 'SELECT 9223372036854775807');
    expect(r.ex).toBe(1);
    expect(r.predPreview).toEqual([[9223372036854775807n]]);
    expect((await run('SELECT big FROM person WHERE id = 2', 'SELECT 9223372036854775807')).ex).toBe(0);
    expect((await run('SELECT big FROM person WHERE id = 3', 'SELECT -9007199254740992')).ex).toBe(0);
  });
  it('matches INTEGER 1 with REAL 1.0 and not with TEXT', async () => {
    expect((await run('SELECT score FROM person WHERE id = 1', 'SELECT 1')).ex).toBe(1);
    expect((await run("SELECT '1'", 'SELECT 1')).ex).toBe(0);
  });
  it('never matches a BLOB with TEXT of the same bytes', async () => {
    expect((await run('SELECT photo FROM person WHERE id = 3', "SELECT 'ab'")).ex).toBe(0);
    expect((await run('SELECT photo FROM person WHERE id = 3', "SELECT x'6162'")).ex).toBe(1);
  });
  it('matches NULL with NULL', async () => {
    expect((await run('SELECT score FROM person WHERE id = 3', 'SELECT NULL')).ex).toBe(1);
  });
  it('matches -0.0 with 0', async () => {
    expect((await run('SELECT -0.0', 'SELECT 0')).ex).toBe(1);
  });
  it('ignores row order and duplicates but not column order', async () => {
    expect((await run('SELECT name FROM person ORDER BY name DESC', 'SELECT name FROM person')).ex).toBe(1);
    expect((await run('SELECT name FROM person UNION ALL SELECT name FROM person', 'SELECT name FROM person')).ex).toBe(
      1,
    );
    expect((await run('SELECT id, name FROM person', 'SELECT name, id FROM person')).ex).toBe(0);
  });
});

describe('a prediction that writes', () => {
  it('is seen by its own gold query, as in the official evaluator (DELETE can score as correct)', async () => {
    const r = await run('DELETE FROM person', 'SELECT * FROM person WHERE score > 1');
    expect(r).toMatchObject({ status: 'ok', ex: 1, mutatedDb: true, goldRowCount: 0 });
  });
  it('does not leak into the next item', async () => {
    await run('DELETE FROM person', 'SELECT 1');
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
    await run('DROP TABLE person', 'SELECT 1');
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
    await run("UPDATE person SET name = 'x'", 'SELECT 1');
    expect((await run("SELECT count(*) FROM person WHERE name = 'x'", 'SELECT 0')).ex).toBe(1);
  });
  it('does not leave an ATTACH, a temp table, a PRAGMA or an open transaction behind', async () => {
    await run("ATTACH ':memory:' AS other", 'SELECT 1');
    expect((await run('SELECT count(*) FROM pragma_database_list', 'SELECT 1')).ex).toBe(1);
    await run('CREATE TEMP TABLE t(x)', 'SELECT 1');
    expect((await run('SELECT count(*) FROM temp.sqlite_master', 'SELECT 0')).ex).toBe(1);
    await run('PRAGMA case_sensitive_like = 1', 'SELECT 1');
    expect((await run("SELECT 'A' LIKE 'a'", 'SELECT 1')).ex).toBe(1);
    await run('BEGIN', 'SELECT 1');
    expect((await run('COMMIT', 'SELECT 1')).error).toBe('prediction: cannot commit - no transaction is active');
  });
  it('does not flag a read of the temp schema as a write to the database', async () => {
    expect((await run('SELECT count(*) FROM temp.sqlite_master', 'SELECT 0')).mutatedDb).toBe(false);
  });
  // a TEMP table, view or trigger of a gold's table name shadows it for the gold query.
  it.each([
    ['a TEMP table', 'CREATE TEMP TABLE person AS SELECT * FROM main.person WHERE 0'],
    ['a TEMPORARY table named temp.x', 'CREATE TABLE temp.person(id, name, score, big, photo)'],
    ['a TEMP view', 'CREATE TEMP VIEW person AS SELECT * FROM main.person WHERE 0'],
    ['a TEMP trigger', 'CREATE TEMP TRIGGER tr AFTER INSERT ON person BEGIN SELECT 1; END'],
  ])('flags %s as a write (mutated_db), refused under --read-only', async (_n, sql) => {
    const r = await run(sql, 'SELECT count(*) FROM person');
    expect(r.mutatedDb).toBe(true);
    const ro = await run(sql, 'SELECT count(*) FROM person', { readOnly: true });
    expect(ro.status).toBe('error');
    expect(ro.error).toMatch(/^prediction: /);
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
  });
  it('flags CREATE TABLE and INSERT as mutations too', async () => {
    expect((await run('CREATE TABLE x(a)', 'SELECT 1')).mutatedDb).toBe(true);
    expect((await run("INSERT INTO person(name) VALUES ('Zed')", 'SELECT count(*) FROM person')).mutatedDb).toBe(true);
  });
  it('is an error under read-only, and the gold query never sees it', async () => {
    const r = await run('DELETE FROM person', 'SELECT * FROM person WHERE score > 1', { readOnly: true });
    expect(r.status).toBe('error');
    expect(r.ex).toBe(0);
    expect(r.error).toMatch(/^prediction: /);
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
  });
  it('never changes the bytes it was given', async () => {
    const copy = fx.pristine.slice();
    await fx.engine.loadDb('people', copy);
    await run('DELETE FROM person', 'SELECT 1');
    expect(copy).toEqual(fx.pristine);
  });
});

describe('loading databases', () => {
  it('rejects bytes that are not SQLite, naming the database', async () => {
    await expect(fx.engine.loadDb('bad', new TextEncoder().encode('{"not": "sqlite"}'.padEnd(200)))).rejects.toThrow(
      /database bad: not an SQLite 3 file/,
    );
  });
  it('rejects a truncated SQLite file', async () => {
    await expect(fx.engine.loadDb('cut', fx.pristine.slice(0, 4096 + 100))).rejects.toThrow(
      /database cut: unreadable SQLite file/,
    );
  });
  it('evicts the least recently used database beyond the byte budget', async () => {
    const small = createSqlEngine(() => initSqlJs());
    await small.init({ cacheBytes: fx.pristine.length * 2 });
    await small.loadDb('a', fx.pristine.slice());
    await small.loadDb('b', fx.pristine.slice());
    const select1 = (dbId: string) =>
      small.evaluate({
        dbId,
        predSql: 'SELECT 1',
        goldSql: 'SELECT 1',
        readOnly: false,
        softF1: false,
        previewRows: 0,
      });
    await select1('a');
    await small.loadDb('c', fx.pristine.slice());
    expect(await small.openDbs()).toEqual(['a', 'c']);
    expect((await select1('b')).kind).toBe('need-db');
  });
});

describe('every execution starts from the pristine database, R-VES timing repetitions included', () => {
  /** As the pool does: a database the worker no longer holds is loaded again. */
  const time = async (predSql: string, goldSql: string, iterations = 3) => {
    const req = { dbId: 'people', predSql, goldSql, iterations };
    const r = await fx.engine.timeQueries(req);
    if (r.kind === 'done') return r;
    await fx.engine.loadDb('people', fx.pristine.slice());
    return fx.engine.timeQueries(req);
  };

  it('a writing prediction timed for R-VES leaves nothing for the next item', async () => {
    expect(await run('DELETE FROM person', 'SELECT * FROM person WHERE score > 100')).toMatchObject({
      ex: 1,
      mutatedDb: true,
    });
    expect(await time('DELETE FROM person', 'SELECT * FROM person WHERE score > 100')).toMatchObject({ kind: 'done' });
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
    await time('DROP TABLE person', 'SELECT 1', 2);
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
  });
  it('each repetition of a writing prediction runs on the pristine database (an INSERT with a key fails when repeated on the same one)', async () => {
    // INSERT of an existing-free key succeeds once; on a database kept from the previous
    // repetition, the second one fails with a UNIQUE constraint.
    const r = await time("INSERT INTO person(id, name) VALUES (10, 'Zed')", 'SELECT name FROM person WHERE id = 10', 3);
    expect(r).toMatchObject({ kind: 'done' });
    expect(r.kind === 'done' && r.ratios).toHaveLength(3);
  });
  it('a fast query is timed as a block of runs (each timing spans 2 ms), so no ratio is 0/0 whatever the clock', async () => {
    const r = await time('SELECT count(*) FROM person', 'SELECT 3', 4);
    expect(r.kind).toBe('done');
    if (r.kind !== 'done') return;
    expect(r.notTimed).toBeUndefined();
    expect(r.ratios).toHaveLength(4);
    expect(r.ratios.every((x) => Number.isFinite(x) && x > 0)).toBe(true);
    expect(r.maxRuns).toBeGreaterThan(1);
    expect(r.clockTickMs).toBeGreaterThan(0);
  });
  it('a writing gold query is re-opened from too', async () => {
    await run('SELECT 1', 'DELETE FROM person');
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
  });
});

/** EX 1 when the next item finds user_version 0 and one database (nothing attached): no write leaked. */
const untouched = async () =>
  (
    await run(
      'SELECT user_version, (SELECT count(*) FROM pragma_database_list) FROM pragma_user_version',
      'SELECT 0, 1',
    )
  ).ex;

describe('writes that change no row are flagged too: ATTACH, PRAGMA user_version, VACUUM INTO', () => {
  it.each([
    ['ATTACH of a file', "ATTACH 'other.db' AS other"],
    ['ATTACH of a memory database', "ATTACH ':memory:' AS other"],
    ['PRAGMA user_version = N', 'PRAGMA user_version = 7'],
    ['PRAGMA application_id = N', 'PRAGMA application_id = 7'],
  ])('%s is flagged mutated_db officially, an error under read-only, and never leaks', async (_n, sql) => {
    expect(await run(sql, 'SELECT * FROM empty_table')).toMatchObject({ status: 'ok', ex: 1, mutatedDb: true });
    expect(await untouched()).toBe(1);
    const ro = await run(sql, 'SELECT 1', { readOnly: true });
    expect(ro).toMatchObject({ status: 'error', ex: 0 });
    // SQLite's own refusal under query_only, or the worker's when SQLite lets it through (ATTACH).
    expect(ro.error).toMatch(
      /^prediction: (attempt to write a readonly database|writes to the database, which --read-only forbids)$/,
    );
    expect(await untouched()).toBe(1);
  });
  it.each([
    ["VACUUM INTO 'copy.db'"],
    ["vacuum main into 'copy.db'"],
    ['/* c */ VACUUM -- x\n "main" /* y */ INTO \'copy.db\';'],
    [";VACUUM INTO 'copy.db'"],
  ])("%j is refused (its copy would stay in the worker's memory), flagged, in both modes", async (sql) => {
    for (const readOnly of [false, true]) {
      const r = await run(sql, 'SELECT 1', { readOnly });
      expect(r).toMatchObject({ status: 'error', ex: 0, mutatedDb: true });
      expect(r.error).toMatch(
        /^prediction: VACUUM INTO writes a copy of the database to a file, which the SQL worker refuses/,
      );
    }
  });
  it('plain VACUUM and a column named into are not VACUUM INTO', async () => {
    expect((await run('VACUUM', 'SELECT count(*) FROM person')).status).toBe('ok');
    expect((await run('VACUUM main', 'SELECT count(*) FROM person')).status).toBe('ok');
    expect((await run('SELECT 1 AS "into"', 'SELECT 1')).ex).toBe(1);
  });
});

describe('results are capped by bytes as well as by values', () => {
  it(`text values adding up to more than ${MAX_RESULT_BYTES / 2 ** 20} MiB are an error naming the limit; the next item scores`, async () => {
    const r = await run(
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 200) SELECT i, replace(hex(zeroblob(500000)), '0', 'x') FROM c",
      'SELECT 1',
    );
    expect(r).toMatchObject({ status: 'error', ex: 0 });
    expect(r.error).toMatch(
      /^prediction: the result's values take more than 256 MiB \(the limit per result; \d+ rows of 2 columns so far/,
    );
    expect((await run('SELECT count(*) FROM person', 'SELECT 3')).ex).toBe(1);
  });
  it('BLOB values are counted by their length, on either side', async () => {
    const r = await run(
      'SELECT 1',
      'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 300) SELECT zeroblob(1000000) FROM c',
    );
    expect(r.status).toBe('error');
    expect(r.error).toMatch(/^gold: the result's values take more than 256 MiB/);
  });
  it('a result just under the byte limit is compared as usual', async () => {
    // 100 texts of 1,000,000 characters: 200 MiB as counted.
    const q =
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 100) SELECT i, replace(hex(zeroblob(500000)), '0', 'x') FROM c";
    expect(await run(q, q)).toMatchObject({ status: 'ok', ex: 1, predRowCount: 100 });
  });
});
