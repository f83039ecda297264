import { describe, expect, it } from 'vitest';
import { parseGoldSql, pyStrip } from '../../../src/core/formats/gold.ts';
import { readSharedText } from '../../helpers/shared-data.ts';
import { workbenchErrorOf as errorOf } from '../../helpers/errors.ts';

describe('parseGoldSql', () => {
  it('reads `SQL<TAB>db_id` lines in order', () => {
    expect(parseGoldSql('SELECT 1\tdb_a\nSELECT 2\tdb_b\n', 'gold.sql')).toEqual([
      { sql: 'SELECT 1', dbId: 'db_a' },
      { sql: 'SELECT 2', dbId: 'db_b' },
    ]);
  });

  it.each([
    ['a final newline does not produce an entry', 'SELECT 1\ta\n', 1],
    ['no final newline is fine', 'SELECT 1\ta', 1],
    ['blank lines after the last entry are ignored', 'SELECT 1\ta\n\n  \n', 1],
    ['Windows line ends are line ends', 'SELECT 1\ta\r\nSELECT 2\tb\r\n', 2],
    ['old Mac line ends are line ends, as in Python universal newlines', 'SELECT 1\ta\rSELECT 2\tb', 2],
    ['a byte-order mark is dropped', '\ufeffSELECT 1\ta\n', 1],
  ])('%s', (_title, text, count) => {
    const gold = parseGoldSql(text, 'gold.sql');
    expect(gold).toHaveLength(count);
    expect(gold[0]).toEqual({ sql: 'SELECT 1', dbId: 'a' });
  });

  it('strips each line like Python but keeps spaces before the tab inside the SQL', () => {
    expect(parseGoldSql('  SELECT 1  \tdb\t \n', 'gold.sql')).toEqual([{ sql: 'SELECT 1  ', dbId: 'db' }]);
  });

  it.each([
    ['an empty line in the middle', 'SELECT 1\ta\n\nSELECT 2\tb\n', 'gold.sql:2', /empty line/],
    ['a whitespace-only line in the middle', 'SELECT 1\ta\n \t \nSELECT 2\tb\n', 'gold.sql:2', /empty line/],
    ['a line without a tab', 'SELECT 1\ta\nSELECT 2 b\n', 'gold.sql:2', /no tab.*must not contain a tab/s],
    ['a line with two tabs', 'SELECT 1\ta\nSELECT\t2\tb\n', 'gold.sql:2', /2 tabs.*must not contain a tab/s],
    ['a line whose SQL is empty', '\tdb\n', 'gold.sql:1', /no tab/],
    ['a db_id with spaces around it', 'SELECT 1\t db\n', 'gold.sql:1', /spaces around it/],
    ['an empty file', '\n\n', 'gold.sql', /empty/],
  ])('rejects %s, naming the line', (_title, text, where, message) => {
    const e = errorOf(() => parseGoldSql(text, 'gold.sql'));
    expect(e.code).toBe('BAD_FORMAT');
    expect(e.where).toBe(where);
    expect(e.message).toMatch(message);
  });
});

describe('pyStrip', () => {
  it.each([
    ['ASCII whitespace', ' \t\n\v\f\r x \r\n', 'x'],
    ['the file/group/record/unit separators Python counts as space', '\x1c\x1dx\x1e\x1f', 'x'],
    ['NEL and no-break space', '\x85\xa0x\xa0', 'x'],
    ['but not the byte-order mark, which Python keeps', '\ufeffx', '\ufeffx'],
  ])('strips %s like Python str.strip()', (_title, input, output) => {
    expect(pyStrip(input)).toBe(output);
  });
});

describe('real gold files', () => {
  it.each([
    ['BIRD mini-dev', ['bird', 'minidev', 'mini_dev_sqlite_gold.sql'], 500],
    ['BIRD dev', ['bird', 'dev', 'dev_gold.sql'], 1534],
    ['Spider dev', ['spider', 'dev_gold.sql'], 1034],
  ])('%s has one entry per line', (_title, parts, count) => {
    const gold = parseGoldSql(readSharedText(...parts), parts[parts.length - 1]!);
    expect(gold).toHaveLength(count);
    expect(gold.every((g) => g.sql.length > 0 && g.dbId.length > 0)).toBe(true);
  });

  it('reads the first mini-dev gold line exactly', () => {
    const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold.sql');
    expect(gold[0]!.dbId).toBe('debit_card_specializing');
    expect(gold[0]!.sql).toMatch(/^SELECT CAST\(SUM\(IIF\(Currency = 'EUR'/);
  });
});
