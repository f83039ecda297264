import { describe, expect, it } from 'vitest';
import { classifyFiles } from '../../src/core/import/classify-files.ts';

describe('classifyFiles: which file of a download is what', () => {
  it('finds BIRD mini-dev questions, gold and databases in the folder as downloaded', () => {
    const c = classifyFiles([
      'MINIDEV/mini_dev_sqlite.json',
      'MINIDEV/mini_dev_sqlite.jsonl',
      'MINIDEV/mini_dev_mysql.json',
      'MINIDEV/mini_dev_postgresql.json',
      'MINIDEV/mini_dev_sqlite_gold.sql',
      'MINIDEV/mini_dev_mysql_gold.sql',
      'MINIDEV/dev_tables.json',
      'MINIDEV/dev_databases/superhero/superhero.sqlite',
      'MINIDEV/dev_databases/superhero/database_description/hero.csv',
      'MINIDEV/dev_databases/toxicology/toxicology.sqlite',
      '__MACOSX/MINIDEV/._mini_dev_sqlite.json',
    ]);
    expect(c.questions).toBe('MINIDEV/mini_dev_sqlite.json');
    expect(c.gold).toBe('MINIDEV/mini_dev_sqlite_gold.sql');
    expect(Object.fromEntries(c.databases)).toEqual({
      superhero: 'MINIDEV/dev_databases/superhero/superhero.sqlite',
      toxicology: 'MINIDEV/dev_databases/toxicology/toxicology.sqlite',
    });
    expect(c.ignored).not.toContain('__MACOSX/MINIDEV/._mini_dev_sqlite.json');
  });

  it('lists the other copies of a database of the same rank (twins), which the import compares; a stray copy beside <db>/<db>.sqlite is no twin', () => {
    const c = classifyFiles([
      'spider/dev.json',
      'spider/dev_gold.sql',
      'spider/database/concert_singer/concert_singer.sqlite',
      'spider/test_database/concert_singer/concert_singer.sqlite',
      'spider/database/pets_1/pets_1.sqlite',
      'spider/backup/pets_1.sqlite',
    ]);
    expect(c.databases.get('concert_singer')).toBe('spider/database/concert_singer/concert_singer.sqlite');
    expect(Object.fromEntries(c.twins)).toEqual({
      concert_singer: ['spider/test_database/concert_singer/concert_singer.sqlite'],
    });
    expect(c.databases.get('pets_1')).toBe('spider/database/pets_1/pets_1.sqlite');
  });

  it('finds BIRD dev (dev.json + dev.sql) and Spider dev (dev.json + dev_gold.sql, schema.sql inside database folders ignored)', () => {
    expect(
      classifyFiles([
        'dev/dev.json',
        'dev/dev.sql',
        'dev/dev_tables.json',
        'dev/dev_tied_append.json',
        'dev/dev_databases/a/a.sqlite',
      ]),
    ).toMatchObject({ questions: 'dev/dev.json', gold: 'dev/dev.sql' });
    const spider = classifyFiles([
      'spider/dev.json',
      'spider/train_spider.json',
      'spider/train_others.json',
      'spider/tables.json',
      'spider/dev_gold.sql',
      'spider/train_gold.sql',
      'spider/database/concert_singer/concert_singer.sqlite',
      'spider/database/concert_singer/schema.sql',
    ]);
    expect(spider).toMatchObject({ questions: 'spider/dev.json', gold: 'spider/dev_gold.sql' });
    expect(spider.databases.get('concert_singer')).toBe('spider/database/concert_singer/concert_singer.sqlite');
  });

  it('takes the questions SQL as gold when there is no gold file (custom and Spider sets without one)', () => {
    expect(classifyFiles(['my_questions.json', 'shop.sqlite', 'crm.db'])).toMatchObject({
      questions: 'my_questions.json',
      gold: null,
    });
    expect([...classifyFiles(['my_questions.json', 'shop.sqlite', 'crm.db']).databases.keys()].sort()).toEqual([
      'crm',
      'shop',
    ]);
  });

  it('refuses to guess between two possible question files, and says so when there is none', () => {
    expect(() => classifyFiles(['a.json', 'b.json'])).toThrow(
      /several files could be the questions \(a\.json, b\.json\)/,
    );
    expect(() => classifyFiles(['x/x.sqlite', 'tables.json'])).toThrow(/no questions file/);
  });

  it('follows the paths the user chose, and names a chosen path that is not among the files', () => {
    expect(classifyFiles(['a.json', 'b.json', 'g.sql'], { questionsPath: 'b.json', goldPath: 'g.sql' })).toMatchObject({
      questions: 'b.json',
      gold: 'g.sql',
    });
    expect(() => classifyFiles(['a.json'], { questionsPath: 'c.json' })).toThrow(
      /c\.json: the chosen questions file is not among the files given/,
    );
  });

  it("picks the dataset's tables.json beside the questions (not the other copy, never one inside a database folder), else the only one", () => {
    const both = classifyFiles([
      'bird/minidev/mini_dev_sqlite.json',
      'bird/minidev/mini_dev_sqlite_gold.sql',
      'bird/minidev/dev_tables.json',
      'bird/dev/dev_tables.json',
      'bird/databases/superhero/superhero.sqlite',
    ]);
    expect(both.tables).toBe('bird/minidev/dev_tables.json');
    expect(both.ignored).not.toContain('bird/minidev/dev_tables.json');
    expect(classifyFiles(['q/dev.json', 'other/tables.json', 'x/x.sqlite']).tables).toBe('other/tables.json');
    // Two elsewhere: which belongs to the questions cannot be told.
    expect(classifyFiles(['q/dev.json', 'a/tables.json', 'b/dev_tables.json']).tables).toBeNull();
    expect(classifyFiles(['q/dev.json', 'database/shop/tables.json', 'database/shop/shop.sqlite']).tables).toBeNull();
    expect(classifyFiles(['q/dev.json', 'q/KaggleDBQA_tables.json']).tables).toBeNull();
  });
});
