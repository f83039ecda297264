import { describe, expect, it } from 'vitest';
import { goldReads, quoteName } from '../../../src/core/sql/gold-reads.ts';

describe('goldReads: the tables and columns a gold query reads', () => {
  const cases: Array<{ sql: string; tables: string[]; columns: string[] }> = [
    { sql: 'SELECT name FROM singer WHERE age > 30', tables: ['singer'], columns: ['singer.name', 'singer.age'] },
    {
      sql: 'SELECT T2.major_name FROM member AS T1 INNER JOIN major AS T2 ON T1.link_to_major = T2.major_id',
      tables: ['member', 'major'],
      columns: ['major.major_name', 'member.link_to_major', 'major.major_id'],
    },
    {
      sql: 'SELECT a FROM t1, t2 WHERE t1.id = t2.id',
      tables: ['t1', 't2'],
      columns: ['t1.a', 't2.a', 't1.id', 't2.id'],
    },
    { sql: 'WITH c AS (SELECT x FROM base) SELECT x FROM c', tables: ['base'], columns: ['base.x'] },
    { sql: 'SELECT T.e FROM (SELECT e FROM atom) AS T', tables: ['atom'], columns: ['atom.e'] },
    { sql: 'SELECT CAST(COUNT(id) AS REAL) AS share FROM "my table"', tables: ['my table'], columns: ['my table.id'] },
    { sql: "SELECT count(*) FROM json_each('[1]')", tables: [], columns: [] },
    { sql: 'SELECT 1 -- FROM commented\n', tables: [], columns: [] },
  ];
  it.each(cases)('$sql', ({ sql, tables, columns }) => {
    const r = goldReads(sql);
    expect(r.tables).toEqual(tables);
    expect(r.columns.map((c) => `${c.table}.${c.column}`)).toEqual(columns);
  });

  it('quotes names so that any table name is one identifier', () => {
    expect(quoteName('a"b')).toBe('"a""b"');
  });
});
