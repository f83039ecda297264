import { describe, expect, it } from 'vitest';
import { runSqlCheck, writeKeywords, type SqlExecutionFacts } from '../../src/core/rubric/sql-checks.ts';
import { evidenceFormulas, missingFromQuery } from '../../src/core/rubric/sql-evidence.ts';
import { describeViolation, schemaViolations } from '../../src/core/rubric/sql-schema-refs.ts';
import { tokenizeSql } from '../../src/core/sql/sql-tokens.ts';

const schema = {
  superhero: ['id', 'superhero_name', 'height_cm', 'publisher_id', 'eye_colour_id'],
  publisher: ['id', 'publisher_name'],
  colour: ['id', 'colour'],
  'hero power': ['hero_id', 'power name'],
};
const violations = (sql: string) => schemaViolations(sql, schema).map(describeViolation);

describe('SQL tokenizer', () => {
  it('keeps strings, quoted identifiers and comments apart from code', () => {
    const toks = tokenizeSql(
      `SELECT "a ""b""", \`c\`, [d e], 'it''s -- no', x -- DELETE\n/* DROP */ FROM t WHERE y >= 1.5e3`,
    );
    expect(toks.map((t) => [t.kind, t.value])).toEqual([
      ['word', 'SELECT'],
      ['quoted', 'a "b"'],
      ['op', ','],
      ['quoted', 'c'],
      ['op', ','],
      ['quoted', 'd e'],
      ['op', ','],
      ['string', "it's -- no"],
      ['op', ','],
      ['word', 'x'],
      ['word', 'FROM'],
      ['word', 't'],
      ['word', 'WHERE'],
      ['word', 'y'],
      ['op', '>='],
      ['number', '1.5e3'],
    ]);
  });

  it('runs unterminated strings and comments to the end instead of failing', () => {
    expect(tokenizeSql("SELECT 'abc").map((t) => t.kind)).toEqual(['word', 'string']);
    expect(tokenizeSql('SELECT 1 /* open').map((t) => t.kind)).toEqual(['word', 'number']);
  });
});

describe('schema-only: tables and columns of the schema', () => {
  it.each([
    [
      'aliases, qualified and bare columns',
      'SELECT T1.superhero_name, T2.publisher_name FROM superhero AS T1 INNER JOIN publisher T2 ON T1.publisher_id = T2.id',
    ],
    [
      'column aliases used before and after their definition',
      'SELECT COUNT(*) AS n, height_cm h FROM superhero GROUP BY h ORDER BY n DESC',
    ],
    [
      'CAST types, functions, keywords and literals',
      "SELECT CAST(SUM(CASE WHEN height_cm > 200 THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(id), strftime('%Y', 'now') FROM superhero WHERE superhero_name LIKE 'A%' AND TRUE",
    ],
    ['quoted names with spaces', 'SELECT `power name`, [hero_id] FROM "hero power"'],
    [
      'a CTE with a column list and a derived table',
      'WITH tall(hid) AS (SELECT id FROM superhero WHERE height_cm > 200) SELECT t.x FROM (SELECT hid AS x FROM tall) AS t',
    ],
    [
      'a window and a table name as qualifier',
      'SELECT superhero.superhero_name, RANK() OVER (ORDER BY superhero.height_cm DESC) AS r FROM superhero',
    ],
    ['rowid', 'SELECT rowid FROM colour'],
    ['a double-quoted string SQLite reads as a literal', 'SELECT id FROM colour WHERE colour = "Blue"'],
    [
      'a correlated subquery',
      'SELECT superhero_name FROM superhero AS s WHERE EXISTS (SELECT 1 FROM publisher p WHERE p.id = s.publisher_id)',
    ],
  ])('accepts %s', (_, sql) => {
    expect(violations(sql)).toEqual([]);
  });

  it.each([
    ['an unknown table', 'SELECT id FROM heroes', ['unknown table "heroes"']],
    ['a column of another table', 'SELECT colour FROM superhero', ['no column "colour" in the tables the query uses']],
    [
      'a wrong column behind an alias',
      'SELECT T1.name FROM superhero AS T1',
      ['no column "name" in table "superhero"'],
    ],
    ['an unknown qualifier', 'SELECT x.id FROM superhero', ['unknown table or alias "x"']],
    [
      'a table used only under its alias',
      'SELECT superhero.id FROM superhero AS s',
      ['table "superhero" qualifies a column but is not in a FROM or JOIN (or only under an alias)'],
    ],
    [
      'a backticked unknown name',
      'SELECT `weight` FROM superhero',
      ['no column "weight" in the tables the query uses'],
    ],
  ])('rejects %s', (_, sql, expected) => {
    expect(violations(sql)).toEqual(expected);
  });
});

describe('no-write: write keywords as code', () => {
  it.each([
    ['DELETE FROM superhero', ['DELETE']],
    ['INSERT OR REPLACE INTO colour VALUES (1, "x")', ['INSERT', 'REPLACE']],
    ["SELECT REPLACE(colour, 'a', 'b') FROM colour", []],
    ['SELECT \'DROP TABLE x\' AS s, "update" FROM t -- DELETE', []],
    ['PRAGMA writable_schema = 1', ['PRAGMA']],
  ])('%s', (sql, words) => {
    expect(writeKeywords(sql)).toEqual(words);
  });

  it('fails when the execution changed the database, whatever the text says', () => {
    const facts: SqlExecutionFacts = { status: 'ok', ex: 1, error: null, mutatedDb: true };
    expect(runSqlCheck({ kind: 'sql', name: 'no-write' }, { sql: 'SELECT 1', execution: facts })).toMatchObject({
      met: false,
      explanation: 'the query changed the database',
    });
  });
});

describe('evidence formulas (documented heuristic)', () => {
  it('finds `name = formula` clauses and ignores value mappings and prose hyphens', () => {
    const f = evidenceFormulas(
      "female refers to gender = 'Female'; percentage = DIVIDE(SUM(gender = 'Female'), COUNT(id)) * 100; label = '-' means non-carcinogenic",
    );
    expect(f).toEqual([
      {
        text: "percentage = DIVIDE(SUM(gender = 'Female'), COUNT(id)) * 100",
        operators: ['*', '/'],
        functions: ['SUM', 'COUNT'],
        columns: ['gender', 'id'],
      },
    ]);
  });

  it('with a schema, requires only schema columns; pseudo-functions SQLite lacks are not required', () => {
    const f = evidenceFormulas('difference = SUBTRACT(SUM(height_cm WHERE YEAR(x) = 2019), total)', schema);
    expect(f[0]).toMatchObject({ operators: ['-'], functions: ['SUM'], columns: ['height_cm'] });
  });

  it('treats SUM and COUNT as one counting aggregate and MAX / MIN as ORDER BY ... LIMIT', () => {
    const [f] = evidenceFormulas('ratio = DIVIDE(SUM(colour = 1), COUNT(id))');
    expect(
      missingFromQuery(f!, 'SELECT CAST(COUNT(CASE WHEN colour = 1 THEN 1 END) AS REAL) / COUNT(id) FROM colour'),
    ).toEqual([]);
    expect(missingFromQuery(f!, 'SELECT AVG(colour) FROM colour')).toEqual([
      'operator /',
      'function SUM',
      'function COUNT',
      'column id',
    ]);
    const [m] = evidenceFormulas('tallest = MAX(height_cm)');
    expect(missingFromQuery(m!, 'SELECT superhero_name FROM superhero ORDER BY height_cm DESC LIMIT 1')).toEqual([]);
  });
});

describe('schema-only: a query that reads no table does not tick', () => {
  const schema = { member: ['member_id', 'first_name'], expense: ['expense_id', 'approved'] };
  it.each([["SELECT 'true'"], ['VALUES (1)'], [''], ["WITH a AS (SELECT 'true' AS v) SELECT v FROM a"]])(
    '%j',
    (sql) => {
      const r = runSqlCheck({ kind: 'sql', name: 'schema-only' }, { sql, schema });
      expect(r.status).toBe('ok');
      expect(r.met).toBe(false);
      expect(r.explanation).toContain('reads no table of the database');
    },
  );

  it('a query of schema tables still ticks, one of an unknown table still fails on the table', () => {
    expect(runSqlCheck({ kind: 'sql', name: 'schema-only' }, { sql: 'SELECT approved FROM expense', schema }).met).toBe(
      true,
    );
    const r = runSqlCheck({ kind: 'sql', name: 'schema-only' }, { sql: 'SELECT approved FROM expenses', schema });
    expect(r.met).toBe(false);
    expect(r.explanation).not.toContain('reads no table');
  });
});

describe('checks without what they need are not-applicable, never failed', () => {
  it.each([
    ['matches-gold', { sql: 'SELECT 1' }],
    ['executes', { sql: 'SELECT 1', execution: { status: 'missing-db', ex: 0, error: 'x', mutatedDb: false } }],
    ['schema-only', { sql: 'SELECT 1' }],
    ['uses-evidence-formula', { sql: 'SELECT 1', evidence: "female refers to gender = 'Female'" }],
    ['column-count', { sql: 'SELECT 1', execution: { status: 'ok', ex: 1, error: null, mutatedDb: false } }],
  ] as const)('%s', (name, input) => {
    expect(runSqlCheck({ kind: 'sql', name }, input).status).toBe('not-applicable');
  });

  it('a failure on the gold side does not count against "executes"', () => {
    const r = runSqlCheck(
      { kind: 'sql', name: 'executes' },
      { sql: 'SELECT 1', execution: { status: 'error', ex: 0, error: 'gold: no such table: t', mutatedDb: false } },
    );
    expect(r).toMatchObject({ status: 'ok', met: true });
  });

  it('column-count can take the number asked for from the rubric instead of gold', () => {
    const execution: SqlExecutionFacts = {
      status: 'ok',
      ex: 0,
      error: null,
      mutatedDb: false,
      predColumnCount: 2,
      goldColumnCount: 1,
    };
    expect(runSqlCheck({ kind: 'sql', name: 'column-count' }, { sql: 'x', execution }).met).toBe(false);
    expect(runSqlCheck({ kind: 'sql', name: 'column-count', expected: 2 }, { sql: 'x', execution }).met).toBe(true);
  });
});
