/**
 * Spider's hardness levels (easy / medium / hard / extra), the counting rule of Spider's
 * `evaluation.py` (`eval_hardness`), applied to the gold SQL through our tokenizer instead of
 * Spider's parser (docs/spider-rules.md). Only the outermost query is counted; a nested query
 * counts once as a whole.
 *
 * - component 1: one each for WHERE, GROUP BY, ORDER BY, LIMIT; one per table joined beyond
 *   the first; one per OR and per LIKE among the conditions of ON, WHERE and HAVING;
 * - component 2: one per subquery used as a value in those conditions, plus one for an
 *   INTERSECT / UNION / EXCEPT;
 * - others: one each for "more than one aggregate", "more than one selected column", "more than
 *   one WHERE condition", "more than one GROUP BY column". Aggregates are counted as the script
 *   counts them: the SELECT items and ORDER BY terms that are aggregate calls, plus (a quirk of
 *   the script, kept so the levels agree) each NOT condition of WHERE and HAVING and each
 *   AND/OR that joins HAVING conditions.
 *
 * easy: c1 <= 1, others 0, c2 0. medium: (others <= 2, c1 <= 1, c2 0) or (c1 <= 2, others < 2,
 * c2 0). hard: (others > 2, c1 <= 2, c2 0) or (2 < c1 <= 3, others <= 2, c2 0) or (c1 <= 1,
 * others 0, c2 <= 1). extra: everything else.
 */
import { isOp, isWord, tokenizeSql, type SqlToken } from './sql-tokens.ts';

type SpiderHardness = 'easy' | 'medium' | 'hard' | 'extra';

const AGGS = ['MAX', 'MIN', 'COUNT', 'SUM', 'AVG'];
const CLAUSES = ['FROM', 'WHERE', 'GROUP', 'HAVING', 'ORDER', 'LIMIT'];
const SET_OPS = ['INTERSECT', 'UNION', 'EXCEPT'];

interface HardnessCounts {
  component1: number;
  component2: number;
  others: number;
}

interface Conditions {
  units: number;
  connectors: number;
  ors: number;
  likes: number;
  nots: number;
  subqueries: number;
}

/** Paren depth before each token, relative to the first. */
function depths(tokens: readonly SqlToken[]): number[] {
  let d = 0;
  return tokens.map((t) => {
    if (isOp(t, ')')) d--;
    const here = d;
    if (isOp(t, '(')) d++;
    return here;
  });
}

function splitTop(
  tokens: readonly SqlToken[],
  depth: readonly number[],
  from: number,
  to: number,
  at: (t: SqlToken) => boolean,
): [number, number][] {
  const parts: [number, number][] = [];
  let s = from;
  for (let i = from; i < to; i++) {
    if (depth[i] === depth[from] && at(tokens[i]!)) {
      parts.push([s, i]);
      s = i + 1;
    }
  }
  parts.push([s, to]);
  return parts.filter(([a, b]) => b > a);
}

function isAggCall(tokens: readonly SqlToken[], i: number): boolean {
  return isWord(tokens[i], ...AGGS) && isOp(tokens[i + 1], '(');
}

function conditions(tokens: readonly SqlToken[], depth: readonly number[], from: number, to: number): Conditions {
  const c: Conditions = { units: 0, connectors: 0, ors: 0, likes: 0, nots: 0, subqueries: 0 };
  if (to <= from) return c;
  const base = depth[from]!;
  let inBetween = false;
  c.units = 1;
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    if (depth[i] === base + 1 && isWord(t, 'SELECT') && isOp(tokens[i - 1], '(')) c.subqueries++;
    if (depth[i] !== base) continue;
    if (isWord(t, 'BETWEEN')) inBetween = true;
    else if (isWord(t, 'AND') && inBetween) inBetween = false;
    else if (isWord(t, 'AND', 'OR')) {
      c.units++;
      c.connectors++;
      if (isWord(t, 'OR')) c.ors++;
    } else if (isWord(t, 'LIKE')) c.likes++;
    else if (isWord(t, 'NOT') && !isWord(tokens[i - 1], 'IS')) c.nots++;
  }
  return c;
}

/** The counts of Spider's rule for one SQL text (its first statement). */
export function spiderHardnessCounts(sql: string): HardnessCounts {
  let tokens = tokenizeSql(sql);
  const semi = tokens.findIndex((t) => isOp(t, ';'));
  if (semi >= 0) tokens = tokens.slice(0, semi);
  const depth = depths(tokens);
  // The outermost SELECT, possibly inside parentheses.
  const start = tokens.findIndex((t) => isWord(t, 'SELECT'));
  if (start < 0) return { component1: 0, component2: 0, others: 0 };
  const base = depth[start]!;
  let end = tokens.length;
  let setOp = false;
  for (let i = start + 1; i < tokens.length; i++) {
    if (depth[i]! < base) {
      end = i;
      break;
    }
    if (depth[i] === base && isWord(tokens[i], ...SET_OPS)) {
      end = i;
      setOp = true;
      break;
    }
  }
  const clause = new Map<string, number>();
  for (let i = start + 1; i < end; i++) {
    if (depth[i] !== base) continue;
    const w = tokens[i]!.kind === 'word' ? tokens[i]!.value.toUpperCase() : '';
    if (CLAUSES.includes(w) && !clause.has(w)) clause.set(w, i);
  }
  const order = [...clause.entries()].sort((a, b) => a[1] - b[1]);
  const range = (name: string): [number, number] | null => {
    const at = clause.get(name);
    if (at === undefined) return null;
    const next = order.find(([, i]) => i > at);
    const skip = name === 'GROUP' || name === 'ORDER' ? 2 : 1;
    return [at + skip, next ? next[1] : end];
  };
  const firstClause = order[0]?.[1] ?? end;
  let selFrom = start + 1;
  if (isWord(tokens[selFrom], 'DISTINCT', 'ALL')) selFrom++;
  const selectItems = splitTop(tokens, depth, selFrom, firstClause, (t) => isOp(t, ','));
  let aggs = selectItems.filter(([a]) => isAggCall(tokens, a)).length;

  let c1 = 0;
  let c2 = setOp ? 1 : 0;
  let others = 0;
  const all: Conditions[] = [];

  const from = range('FROM');
  if (from) {
    const [a, b] = from;
    let tables = 1;
    let onStart = -1;
    const flushOn = (to: number) => {
      if (onStart >= 0) all.push(conditions(tokens, depth, onStart, to));
      onStart = -1;
    };
    for (let i = a; i < b; i++) {
      if (depth[i] !== base) continue;
      if (isWord(tokens[i], 'JOIN') || isOp(tokens[i], ',')) {
        tables++;
        flushOn(i);
      } else if (isWord(tokens[i], 'ON')) {
        flushOn(i);
        onStart = i + 1;
      } else if (onStart >= 0 && isWord(tokens[i], 'LEFT', 'RIGHT', 'INNER', 'CROSS', 'NATURAL', 'FULL', 'OUTER')) {
        flushOn(i);
      }
    }
    flushOn(b);
    c1 += tables - 1;
  }
  const where = range('WHERE');
  if (where) {
    c1++;
    const w = conditions(tokens, depth, where[0], where[1]);
    all.push(w);
    aggs += w.nots;
    if (w.units > 1) others++;
  }
  const group = range('GROUP');
  if (group) {
    c1++;
    const items = splitTop(tokens, depth, group[0], group[1], (t) => isOp(t, ','));
    aggs += items.filter(([a]) => isAggCall(tokens, a)).length;
    if (items.length > 1) others++;
  }
  const having = range('HAVING');
  if (having) {
    const h = conditions(tokens, depth, having[0], having[1]);
    all.push(h);
    aggs += h.nots + h.connectors;
  }
  const orderBy = range('ORDER');
  if (orderBy) {
    c1++;
    for (const [a, b] of splitTop(tokens, depth, orderBy[0], orderBy[1], (t) => isOp(t, ','))) {
      let calls = 0;
      for (let i = a; i < b; i++) if (depth[i] === base && isAggCall(tokens, i)) calls++;
      aggs += Math.min(calls, 2);
    }
  }
  if (range('LIMIT')) c1++;
  for (const c of all) {
    c1 += c.ors + c.likes;
    c2 += c.subqueries;
  }
  if (aggs > 1) others++;
  if (selectItems.length > 1) others++;
  return { component1: c1, component2: c2, others };
}

/** The level Spider's `eval_hardness` gives these counts. */
function hardnessOf({ component1: c1, component2: c2, others: o }: HardnessCounts): SpiderHardness {
  if (c1 <= 1 && o === 0 && c2 === 0) return 'easy';
  if ((o <= 2 && c1 <= 1 && c2 === 0) || (c1 <= 2 && o < 2 && c2 === 0)) return 'medium';
  if ((o > 2 && c1 <= 2 && c2 === 0) || (c1 > 2 && c1 <= 3 && o <= 2 && c2 === 0) || (c1 <= 1 && o === 0 && c2 <= 1))
    return 'hard';
  return 'extra';
}

export function spiderHardness(sql: string): SpiderHardness {
  return hardnessOf(spiderHardnessCounts(sql));
}

/** Items of a run scored by Spider's rule: a question without a level gets its gold's hardness. */
export function withSpiderHardness<T extends { difficulty: string; goldSql: string }>(items: readonly T[]): T[] {
  return items.map((it) => (it.difficulty === 'unknown' ? { ...it, difficulty: spiderHardness(it.goldSql) } : it));
}
