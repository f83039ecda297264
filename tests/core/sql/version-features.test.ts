import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { readDbFacts, type DbFacts } from '../../../src/core/eval/db-facts.ts';
import { itemVersionFeatures, scanVersionFeatures } from '../../../src/core/sql/version-features.ts';
import { readSharedText, sharedData } from '../../helpers/shared-data.ts';

const minidev = JSON.parse(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json')) as {
  db_id: string;
  SQL: string;
}[];

/** The prediction at a BIRD JSON key (the SQL before the separator) and the gold at the same position. */
function item(dir: string, file: string, key: number): { pred: string; gold: string; dbId: string } {
  const preds = JSON.parse(readSharedText('bird', 'predictions', dir, file)) as Record<string, string>;
  return {
    pred: preds[String(key)]!.split('\t----- bird -----\t')[0]!,
    gold: minidev[key]!.SQL,
    dbId: minidev[key]!.db_id,
  };
}

let facts: DbFacts;
const pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 1 });
beforeAll(async () => {
  facts = await readDbFacts(pool, ['student_club', 'superhero', 'toxicology', 'not_here']);
});
afterAll(() => pool.dispose());

describe('readDbFacts (real sql.js worker)', () => {
  it('reads the SQLite version and declared column types; a missing database is left out', () => {
    expect(facts.sqliteVersion).toMatch(/^3\.\d+\.\d+$/);
    expect(Object.keys(facts.columnTypes).sort()).toEqual(['student_club', 'superhero', 'toxicology']);
    expect(facts.columnTypes.student_club!.expense!.cost).toBe('REAL');
    expect(facts.columnTypes.student_club!.expense!.expense_description).toBe('TEXT');
  });
});

describe('the four measured version-sensitive items of BIRD mini-dev', () => {
  const named = (dbId: string, pred: string, gold: string) =>
    itemVersionFeatures(pred, gold, facts.columnTypes[dbId]!).map((f) => `${f.feature}|${f.since}|${f.where}`);
  it('meta-llama-3-70b CoT items 76 and 77: CONCAT (3.44.0) in the prediction', () => {
    for (const key of [76, 77]) {
      const it = item('TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json', key);
      expect(named(it.dbId, it.pred, it.gold)).toEqual(['concat()|3.44.0|pred']);
    }
  });
  it('phi-3-medium item 37: AVG over the REAL column expense.cost, in prediction and gold', () => {
    const it = item('sql_output_kg', 'predict_mini_dev_phi-3-medium-128k-instruct-1_sqlite.json', 37);
    const f = named(it.dbId, it.pred, it.gold);
    expect(f).toContain('AVG over REAL (Kahan-Babuska-Neumaier summation)|3.43.0|pred');
    expect(f).toContain('AVG over REAL (Kahan-Babuska-Neumaier summation)|3.43.0|gold');
  });
  it("mixtral item 417: the subquery's GROUP BY names molecule.molecule_id (no such column on 3.40.1)", () => {
    const it = item('sql_output_kg', 'predict_mini_dev_mistralai-mixtral-8x7b-instru-4_sqlite.json', 417);
    expect(named(it.dbId, it.pred, it.gold)).toEqual([
      "outer query's column in a subquery's GROUP BY|after 3.40.1|pred",
    ]);
  });
  it("the same GROUP BY over the subquery's own column is not flagged (mini-dev gold 232 has none either)", () => {
    const types = facts.columnTypes.toxicology!;
    expect(
      scanVersionFeatures(
        'SELECT molecule_id FROM molecule WHERE molecule_id IN (SELECT molecule_id FROM bond GROUP BY molecule_id)',
        types,
      ),
    ).toEqual([]);
    expect(scanVersionFeatures(minidev[417]!.SQL, types)).toEqual([]);
  });
});

describe('scanVersionFeatures', () => {
  it('names each feature with its version; never inside strings, quoted names or comments', () => {
    const sql = `SELECT concat_ws('-', a), string_agg(b, ','), unixepoch(d), octet_length(e), j ->> '$.x', j -> 'y'
      FROM t RIGHT JOIN u ON 1 FULL OUTER JOIN v ON 1 -- concat(x) in a comment
      WHERE "concat" = 'concat(1)' /* unixepoch() */`;
    expect(scanVersionFeatures(sql)).toEqual([
      { feature: 'concat_ws()', since: '3.44.0' },
      { feature: 'string_agg()', since: '3.44.0' },
      { feature: 'unixepoch()', since: '3.38.0' },
      { feature: 'octet_length()', since: '3.43.0' },
      { feature: '->> operator', since: '3.38.0' },
      { feature: '-> operator', since: '3.38.0' },
      { feature: 'RIGHT JOIN', since: '3.39.0' },
      { feature: 'FULL JOIN', since: '3.39.0' },
    ]);
    expect(scanVersionFeatures("SELECT 'RIGHT JOIN concat(' || x FROM t LEFT JOIN u ON 1")).toEqual([]);
  });
  it('printf/format only with a precision; round() only with digits', () => {
    expect(scanVersionFeatures("SELECT printf('%.2f', 1.005), format('%d', 3)").map((f) => f.feature)).toEqual([
      'printf() with a precision (float-to-text rounding)',
    ]);
    expect(scanVersionFeatures('SELECT round(x), round(y, 2) FROM t').map((f) => f.feature)).toEqual([
      'round() to decimal places (float rounding)',
    ]);
  });
  it('AVG/SUM/TOTAL: REAL column, REAL literal or unknown type flagged; integer values and CASE conditions not', () => {
    const types = facts.columnTypes.student_club!;
    const f = (sql: string) => scanVersionFeatures(sql, types).map((x) => x.feature);
    expect(f('SELECT SUM(cost) FROM expense')).toEqual(['SUM over REAL (Kahan-Babuska-Neumaier summation)']);
    expect(f('SELECT SUM(CASE WHEN cost > 5 THEN 1 ELSE 0 END) FROM expense')).toEqual([]);
    expect(f("SELECT TOTAL(CASE WHEN x = 'a' THEN 1.0 ELSE 0 END) FROM expense")).toEqual([
      'TOTAL over REAL (Kahan-Babuska-Neumaier summation)',
    ]);
    expect(f('SELECT AVG(n) FROM (SELECT COUNT(*) AS n FROM expense)')).toEqual([
      'AVG over unknown type (Kahan-Babuska-Neumaier summation)',
    ]);
    // Without a schema every column's type is unknown.
    expect(scanVersionFeatures('SELECT SUM(cost) FROM expense').map((x) => x.feature)).toEqual([
      'SUM over unknown type (Kahan-Babuska-Neumaier summation)',
    ]);
    expect(f('SELECT COUNT(cost), SUM(1) FROM expense')).toEqual([]);
  });
});
