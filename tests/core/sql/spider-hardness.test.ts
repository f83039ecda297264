/**
 * Spider's hardness on Spider dev's real golds: our token-based counting against a reference
 * that applies the documented rule of Spider's evaluation.py to dev.json's own parsed `sql`
 * field (the parse Spider's process_sql made), written here independently of the product.
 */
import { describe, expect, it } from 'vitest';
import { spiderHardness, spiderHardnessCounts } from '../../../src/core/sql/spider-hardness.ts';
import { readSharedText } from '../../helpers/shared-data.ts';

type Parsed = {
  select: [boolean, [number, unknown][]];
  from: { table_units: unknown[]; conds: unknown[] };
  where: unknown[];
  groupBy: [number, unknown, boolean][];
  having: unknown[];
  orderBy: [] | [string, [number, [number, unknown, boolean] | null, [number, unknown, boolean] | null][]];
  limit: number | null;
  intersect: Parsed | null;
  union: Parsed | null;
  except: Parsed | null;
};
type Cond = [boolean, number, unknown, unknown, unknown];
const LIKE = 9; // WHERE_OPS index of 'like'

/** The reference: eval_hardness as documented, over Spider's parse. */
function referenceLevel(sql: Parsed): string {
  const units = (list: unknown[]) => list.filter((_, i) => i % 2 === 0) as Cond[];
  const joins = (list: unknown[]) => list.filter((_, i) => i % 2 === 1) as string[];
  const allConds = [...units(sql.from.conds), ...units(sql.where), ...units(sql.having)];
  const allJoins = [...joins(sql.from.conds), ...joins(sql.where), ...joins(sql.having)];
  const isSql = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  let c1 = 0;
  if (sql.where.length) c1++;
  if (sql.groupBy.length) c1++;
  if (sql.orderBy.length) c1++;
  if (sql.limit !== null) c1++;
  if (sql.from.table_units.length) c1 += sql.from.table_units.length - 1;
  c1 += allJoins.filter((j) => j === 'or').length;
  c1 += allConds.filter((c) => c[1] === LIKE).length;
  let c2 = 0;
  for (const c of allConds) {
    if (isSql(c[3])) c2++;
    if (isSql(c[4])) c2++;
  }
  if (sql.intersect) c2++;
  if (sql.except) c2++;
  if (sql.union) c2++;
  // count_agg: an element "has an aggregate" when its first entry is not 0 (the script's test).
  const hasAgg = (u: unknown) => (u as unknown[])[0] !== 0 && (u as unknown[])[0] !== false;
  let agg =
    sql.select[1].filter(hasAgg).length + units(sql.where).filter(hasAgg).length + sql.groupBy.filter(hasAgg).length;
  if (sql.orderBy.length) {
    const terms = sql.orderBy[1];
    agg += [...terms.map((t) => t[1]).filter(Boolean), ...terms.map((t) => t[2]).filter(Boolean)].filter(hasAgg).length;
  }
  agg += sql.having.filter(hasAgg).length;
  let o = 0;
  if (agg > 1) o++;
  if (sql.select[1].length > 1) o++;
  if (sql.where.length > 1) o++;
  if (sql.groupBy.length > 1) o++;
  if (c1 <= 1 && o === 0 && c2 === 0) return 'easy';
  if ((o <= 2 && c1 <= 1 && c2 === 0) || (c1 <= 2 && o < 2 && c2 === 0)) return 'medium';
  if ((o > 2 && c1 <= 2 && c2 === 0) || (2 < c1 && c1 <= 3 && o <= 2 && c2 === 0) || (c1 <= 1 && o === 0 && c2 <= 1))
    return 'hard';
  return 'extra';
}

describe('Spider hardness on dev (1,034 real golds)', () => {
  const dev = JSON.parse(readSharedText('spider', 'dev.json')) as { query: string; sql: Parsed }[];
  const golds = readSharedText('spider', 'dev_gold.sql')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('\t')[0]!);

  it("gives every gold the level the documented rule gives Spider's own parse", () => {
    expect(golds).toHaveLength(dev.length);
    const off: string[] = [];
    const tally: Record<string, number> = {};
    dev.forEach((q, i) => {
      const want = referenceLevel(q.sql);
      const got = spiderHardness(golds[i]!);
      tally[got] = (tally[got] ?? 0) + 1;
      if (got !== want)
        off.push(`${i}: ${want} vs ${got} ${JSON.stringify(spiderHardnessCounts(golds[i]!))} ${golds[i]}`);
    });
    expect(off, off.slice(0, 20).join('\n')).toEqual([]);
    // The published dev split's levels (Spider's leaderboard: 248 easy, 446 medium, 174 hard, 166 extra).
    expect(tally).toEqual({ easy: 248, medium: 446, hard: 174, extra: 166 });
  });

  it('counts a hand-labelled sample as the rule says', () => {
    expect(spiderHardness('SELECT count(*) FROM singer')).toBe('easy');
    expect(spiderHardness('SELECT name , country , age FROM singer ORDER BY age DESC')).toBe('medium');
    expect(
      spiderHardness('SELECT T2.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T1.x = 1 ORDER BY T2.y'),
    ).toBe('hard');
    // join, WHERE, ORDER BY and LIMIT: four of component 1.
    expect(
      spiderHardness('SELECT T2.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T1.x = 1 ORDER BY T2.y LIMIT 1'),
    ).toBe('extra');
    expect(spiderHardness('SELECT name FROM a WHERE id NOT IN (SELECT id FROM b) INTERSECT SELECT name FROM c')).toBe(
      'extra',
    );
    expect(spiderHardness("SELECT name FROM a WHERE x BETWEEN 1 AND 2 AND y LIKE '%z%'")).toBe('medium');
  });
});
