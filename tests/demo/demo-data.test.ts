import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DB_FILE, DEMO_DIR, buildDemoDatabase, demoTextFiles } from '../../scripts/build-demo.ts';
import { HOSTILE, HOSTILE_PREDICTIONS, MODEL_PREDICTIONS } from '../../scripts/demo/predictions.ts';
import { DEMO_DB_ID, DEMO_QUESTIONS } from '../../scripts/demo/questions.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { pairPredictions, parsePredictions } from '../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';

const read = (name: string) => readFileSync(path.join(DEMO_DIR, name), 'utf8');

/** Every table's schema and rows, in a form that compares by content. */
function contents(db: Database): Record<string, { sql: string; rows: unknown[][] }> {
  const out: Record<string, { sql: string; rows: unknown[][] }> = {};
  const tables = db.exec("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")[0]!.values;
  for (const [name, sql] of tables) {
    const rows = db.exec(`SELECT * FROM "${String(name)}" ORDER BY rowid`)[0]?.values ?? [];
    out[String(name)] = { sql: String(sql), rows };
  }
  return out;
}

describe('the embedded demo (public/demo)', () => {
  let SQL: SqlJsStatic;
  let committed: Database;

  beforeAll(async () => {
    SQL = await initSqlJs();
    committed = new SQL.Database(readFileSync(path.join(DEMO_DIR, DEMO_DB_FILE)));
  });

  it('has a committed database with the same tables and rows as scripts/demo/city_library.sql builds', async () => {
    const rebuilt = new SQL.Database(await buildDemoDatabase());
    try {
      const expected = contents(rebuilt);
      expect(Object.keys(expected)).toEqual(['authors', 'books', 'branches', 'loans', 'members']);
      expect(contents(committed)).toEqual(expected);
    } finally {
      rebuilt.close();
    }
  });

  it('keeps the database small and realistic: a few hundred rows, NULLs, REAL values, accents', () => {
    expect(statSync(path.join(DEMO_DIR, DEMO_DB_FILE)).size).toBeLessThan(256 * 1024);
    const one = (sql: string) => committed.exec(sql)[0]!.values[0]![0];
    const rows = ['branches', 'authors', 'books', 'members', 'loans'].reduce(
      (n, t) => n + Number(one(`SELECT count(*) FROM ${t}`)),
      0,
    );
    expect(rows).toBeGreaterThan(150);
    expect(rows).toBeLessThan(500);
    expect(one('SELECT count(*) FROM books WHERE price IS NULL')).toBeGreaterThan(0);
    expect(one('SELECT count(*) FROM loans WHERE return_date IS NULL')).toBeGreaterThan(0);
    expect(one("SELECT count(*) FROM books WHERE typeof(price) = 'real'")).toBeGreaterThan(0);
    expect(one("SELECT count(*) FROM authors WHERE name GLOB '*[^ -~]*'")).toBeGreaterThan(0);
  });

  it('has committed text files that match what scripts/build-demo.ts writes (run `npm run demo:build`)', () => {
    for (const [name, text] of Object.entries(demoTextFiles())) expect(read(name), name).toBe(text);
  });

  it('has a gold query for every question that executes and returns rows on the pristine database', () => {
    const gold = parseGoldSql(read('gold.sql'), 'gold.sql');
    expect(gold).toHaveLength(DEMO_QUESTIONS.length);
    for (const [i, g] of gold.entries()) {
      const result = committed.exec(g.sql);
      // An empty gold result would let an empty (or destructive) prediction score by accident.
      expect(result[0]?.values.length ?? 0, `gold line ${i + 1}: ${g.sql}`).toBeGreaterThan(0);
    }
  });

  it('agrees on question ids, db ids and databases across questions, gold and both predictions files', () => {
    const questions = parseQuestions(read('questions.json'), 'questions.json');
    const gold = parseGoldSql(read('gold.sql'), 'gold.sql');
    expect(questions.map((q) => q.questionId)).toEqual(questions.map((_, i) => i));
    expect(questions.map((q) => q.dbId)).toEqual(gold.map((g) => g.dbId));
    expect(questions.map((q) => q.goldSql)).toEqual(gold.map((g) => g.sql));
    expect(new Set(gold.map((g) => g.dbId))).toEqual(new Set([DEMO_DB_ID]));
    expect(statSync(path.join(DEMO_DIR, DEMO_DB_ID, `${DEMO_DB_ID}.sqlite`)).isFile()).toBe(true);
    expect(new Set(questions.map((q) => q.difficulty))).toEqual(new Set(['simple', 'moderate', 'challenging']));
    for (const file of ['predictions.json', 'predictions-hostile.json']) {
      const text = read(file);
      const preds = parsePredictions(text, file);
      expect(
        preds.every((p) => p.extraction.rule === 'bird-separator'),
        file,
      ).toBe(true);
      const { items, warnings } = pairPredictions(preds, gold, questions, file);
      expect(warnings, file).toEqual([]);
      expect(
        items.map((it) => it.index),
        file,
      ).toEqual(gold.map((_, i) => i));
      // The db name written after the separator is the gold line's database.
      const values = Object.values(JSON.parse(text) as Record<string, string>);
      expect(
        values.map((v) => v.split('\t----- bird -----\t')[1]),
        file,
      ).toEqual(gold.map((g) => g.dbId));
    }
  });

  it('differs between the two predictions files only at the hostile items', () => {
    const changed = MODEL_PREDICTIONS.flatMap((p, i) => (p.sql === HOSTILE_PREDICTIONS[i]!.sql ? [] : [i]));
    expect(changed).toEqual(Object.values(HOSTILE).sort((a, b) => a - b));
    expect(HOSTILE_PREDICTIONS[HOSTILE.deleteRows]!.sql).toMatch(/^DELETE FROM loans$/);
    expect(HOSTILE_PREDICTIONS[HOSTILE.runaway]!.sql).toBe(
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c',
    );
    expect(HOSTILE_PREDICTIONS[HOSTILE.markup]!.sql).toContain('<img src=x onerror=alert(1)>');
    expect(HOSTILE_PREDICTIONS[HOSTILE.markup]!.sql).toContain('<script>');
  });

  it('designs the DELETE question so that the gold result comes back empty after the DELETE', () => {
    const gold = DEMO_QUESTIONS[HOSTILE.deleteRows]!.SQL;
    const scratch = new SQL.Database(committed.export());
    try {
      expect(scratch.exec(gold)[0]!.values.length).toBeGreaterThan(0);
      scratch.exec(HOSTILE_PREDICTIONS[HOSTILE.deleteRows]!.sql);
      expect(scratch.exec(gold)).toEqual([]);
    } finally {
      scratch.close();
    }
  });
});
