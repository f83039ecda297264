import initSqlJs from 'sql.js';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSqlEngine } from '../../workers/sql-engine.ts';
import type { ExecDone, ExecRequest, SqlWorkerApi } from '../../workers/sql.api.ts';

// The engine is the SQL worker's body: here it runs in-process on real sql.js.
let engine: SqlWorkerApi;
let pristine: Uint8Array;

const SCHEMA = `
  CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, score REAL, big INTEGER, photo BLOB);
  INSERT INTO person VALUES
    (1, 'Ada', 1.0, 9223372036854775807, x'00ff'),
    (2, 'Bob', 2.5, 9223372036854775806, NULL),
    (3, 'Cy', NULL, -9007199254740993, x'6162');
  CREATE TABLE empty_table (x);
`;

beforeAll(async () => {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.exec(SCHEMA);
  pristine = db.export();
  db.close();
});

beforeEach(async () => {
  engine = createSqlEngine(() => initSqlJs());
  await engine.init({ cacheBytes: 64 * 1024 * 1024 });
  await engine.loadDb('people', pristine.slice());
});

async function run(predSql: string, goldSql: string, extra: Partial<ExecRequest> = {}): Promise<ExecDone> {
  const req: ExecRequest = { dbId: 'people', predSql, goldSql, readOnly: false, softF1: true, previewRows: 10, ...extra };
  let r = await engine.evaluate(req);
  if (r.kind === 'need-db') {
    await engine.loadDb('people', pristine.slice());
    r = await engine.evaluate(req);
  }
  if (r.kind !== 'done') throw new Error('database not loaded');
  return r;
}

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
  it.each(multiple)('refuses %s with Python\'s message', async (_n, sql) => {
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
    expect((await run('SELECT name FROM person UNION ALL SELECT name FROM person', 'SELECT name FROM person')).ex).toBe(1);
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
  it('does not flag a read of the temp schema or a temp table as a write to the database', async () => {
    expect((await run('SELECT count(*) FROM temp.sqlite_master', 'SELECT 0')).mutatedDb).toBe(false);
    expect((await run('CREATE TEMP TABLE t(x)', 'SELECT 1')).mutatedDb).toBe(false);
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
    const copy = pristine.slice();
    await engine.loadDb('people', copy);
    await run('DELETE FROM person', 'SELECT 1');
    expect(copy).toEqual(pristine);
  });
});

describe('loading databases', () => {
  it('rejects bytes that are not SQLite, naming the database', async () => {
    await expect(engine.loadDb('bad', new TextEncoder().encode('{"not": "sqlite"}'.padEnd(200)))).rejects.toThrow(/database bad: not an SQLite 3 file/);
  });
  it('rejects a truncated SQLite file', async () => {
    await expect(engine.loadDb('cut', pristine.slice(0, 4096 + 100))).rejects.toThrow(/database cut: unreadable SQLite file/);
  });
  it('evicts the least recently used database beyond the byte budget', async () => {
    const small = createSqlEngine(() => initSqlJs());
    await small.init({ cacheBytes: pristine.length * 2 });
    await small.loadDb('a', pristine.slice());
    await small.loadDb('b', pristine.slice());
    await small.evaluate({ dbId: 'a', predSql: 'SELECT 1', goldSql: 'SELECT 1', readOnly: false, softF1: false, previewRows: 0 });
    await small.loadDb('c', pristine.slice());
    expect(await small.openDbs()).toEqual(['a', 'c']);
    expect((await small.evaluate({ dbId: 'b', predSql: 'SELECT 1', goldSql: 'SELECT 1', readOnly: false, softF1: false, previewRows: 0 })).kind).toBe('need-db');
  });
});
