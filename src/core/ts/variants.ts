/**
 * Near-miss variants of a gold query, the mutants that distillation (distill.ts) must tell apart
 * from the gold (Zhong, Yu, Klein, EMNLP 2020, section 3.2: "neighbor queries"). Each variant
 * is one small edit of the gold's text, made on tokens (src/core/sql/sql-tokens.ts), so
 * strings, quoted names and comments are never edited:
 * - a comparison operator shifted (`<` <-> `<=`, `>` <-> `>=`, `=` <-> `!=`);
 * - DISTINCT dropped (also inside COUNT(DISTINCT ...)) or added after the first SELECT;
 * - `LIMIT n` made `n + 1`, or removed;
 * - a JOIN (or INNER JOIN) made LEFT JOIN;
 * - one AND condition removed, or a WHERE with one condition removed;
 * - an ORDER BY's direction flipped.
 * A variant may not parse, or may be equivalent to the gold: distillation only counts the
 * variants that some candidate database tells apart.
 */
import { WHERE_END, isWord, tokenizeSql, type SqlToken } from '../sql/sql-tokens.ts';

type VariantKind = 'comparison' | 'distinct' | 'limit' | 'left-join' | 'drop-condition' | 'order-direction';

interface GoldVariant {
  kind: VariantKind;
  sql: string;
}

/** Variants per kind at most (a gold with 30 comparisons would otherwise give 30 variants). */
const MAX_VARIANTS_PER_KIND = 4;

const SHIFT: Record<string, string> = {
  '<': '<=',
  '<=': '<',
  '>': '>=',
  '>=': '>',
  '=': '!=',
  '==': '!=',
  '!=': '=',
  '<>': '=',
};

/** Words that end an AND operand or a WHERE clause at the same parenthesis depth. */
const CLAUSE_END: ReadonlySet<string> = new Set(['AND', 'OR', ...WHERE_END]);

const isLiteral = (t: SqlToken | undefined) => t?.kind === 'number' || t?.kind === 'string';
const end = (t: SqlToken) => t.start + t.text.length;

function splice(sql: string, from: number, to: number, text: string): string {
  return sql.slice(0, from) + text + sql.slice(to);
}

/** Depth of each token (parentheses opened before it). */
function depths(tokens: readonly SqlToken[]): number[] {
  let d = 0;
  return tokens.map((t) => {
    if (t.kind === 'op' && t.value === ')') d--;
    const here = d;
    if (t.kind === 'op' && t.value === '(') d++;
    return here;
  });
}

/** Index of the first token after `from` that ends a clause at depth `depth` (or tokens.length). */
function clauseEnd(
  tokens: readonly SqlToken[],
  dep: readonly number[],
  from: number,
  depth: number,
  stop: ReadonlySet<string>,
): number {
  let between = false;
  for (let j = from; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (dep[j]! < depth || (dep[j] === depth && t.kind === 'op' && (t.value === ')' || t.value === ';'))) return j;
    if (dep[j] !== depth) continue;
    if (isWord(t, 'BETWEEN')) between = true;
    else if (isWord(t, 'AND') && between) between = false;
    else if (t.kind === 'word' && stop.has(t.value.toUpperCase())) return j;
  }
  return tokens.length;
}

export function goldVariants(gold: string): GoldVariant[] {
  const tokens = tokenizeSql(gold);
  const dep = depths(tokens);
  const out: GoldVariant[] = [];
  const seen = new Set<string>([gold]);
  const counts = new Map<VariantKind, number>();
  const add = (kind: VariantKind, sql: string) => {
    if (seen.has(sql) || (counts.get(kind) ?? 0) >= MAX_VARIANTS_PER_KIND) return;
    seen.add(sql);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    out.push({ kind, sql });
  };
  let firstSelect = -1;
  let inBetween = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    // Only comparisons with a literal: shifting a join condition (`a.id = b.id`) gives a near
    // cross product, slow to run on every candidate and never what a near miss looks like.
    if (t.kind === 'op' && SHIFT[t.value] && (isLiteral(tokens[i - 1]) || isLiteral(next))) {
      add('comparison', splice(gold, t.start, end(t), SHIFT[t.value]!));
    }
    if (isWord(t, 'SELECT')) {
      if (firstSelect < 0) firstSelect = i;
      if (isWord(next, 'DISTINCT')) add('distinct', splice(gold, next!.start, end(next!), ''));
      else if (i === firstSelect) add('distinct', splice(gold, end(t), end(t), ' DISTINCT'));
    }
    if (t.kind === 'op' && t.value === '(' && isWord(next, 'DISTINCT'))
      add('distinct', splice(gold, next!.start, end(next!), ''));
    if (isWord(t, 'LIMIT') && next?.kind === 'number' && /^\d+$/.test(next.value)) {
      add('limit', splice(gold, next.start, end(next), String(Number(next.value) + 1)));
      // LIMIT n [OFFSET m | , m] removed.
      let stop = i + 2;
      if (
        (isWord(tokens[stop], 'OFFSET') || (tokens[stop]?.kind === 'op' && tokens[stop]!.value === ',')) &&
        tokens[stop + 1]?.kind === 'number'
      )
        stop += 2;
      add('limit', splice(gold, t.start, stop < tokens.length ? tokens[stop]!.start : gold.length, ''));
    }
    if (isWord(t, 'JOIN')) {
      const prev = tokens[i - 1];
      if (isWord(prev, 'INNER')) add('left-join', splice(gold, prev!.start, end(t), 'LEFT JOIN'));
      else if (!isWord(prev, 'LEFT', 'RIGHT', 'FULL', 'OUTER', 'CROSS', 'NATURAL'))
        add('left-join', splice(gold, t.start, end(t), 'LEFT JOIN'));
    }
    if (isWord(t, 'BETWEEN')) inBetween = true;
    else if (isWord(t, 'AND')) {
      if (inBetween) inBetween = false;
      else {
        const stop = clauseEnd(tokens, dep, i + 1, dep[i]!, CLAUSE_END);
        // A condition without a literal may be a join condition: dropping it gives a cross product.
        if (tokens.slice(i + 1, stop).some(isLiteral))
          add('drop-condition', splice(gold, t.start, stop < tokens.length ? tokens[stop]!.start : gold.length, ''));
      }
    }
    if (isWord(t, 'WHERE')) {
      const stop = clauseEnd(tokens, dep, i + 1, dep[i]!, WHERE_END);
      const body = tokens.slice(i + 1, stop);
      const single = !body.some((b, k) => dep[i + 1 + k] === dep[i] && isWord(b, 'AND', 'OR'));
      if (single && body.some(isLiteral))
        add('drop-condition', splice(gold, t.start, stop < tokens.length ? tokens[stop]!.start : gold.length, ''));
    }
    if (isWord(t, 'ORDER') && isWord(next, 'BY')) {
      const variant = flipOrder(gold, tokens, dep, i + 2);
      if (variant) add('order-direction', variant);
    }
  }
  return out;
}

/** Each ORDER BY term's direction flipped (a term without one gets DESC), from token `from`. */
function flipOrder(gold: string, tokens: readonly SqlToken[], dep: readonly number[], from: number): string | null {
  const depth = dep[from - 1]!;
  const stop = clauseEnd(tokens, dep, from, depth, new Set(['LIMIT', 'UNION', 'EXCEPT', 'INTERSECT', 'WINDOW']));
  const edits: Array<{ at: number; to: number; text: string }> = [];
  let termEnd = -1;
  const closeTerm = (j: number) => {
    const last = tokens[j - 1];
    if (!last) return;
    if (isWord(last, 'ASC')) edits.push({ at: last.start, to: end(last), text: 'DESC' });
    else if (isWord(last, 'DESC')) edits.push({ at: last.start, to: end(last), text: 'ASC' });
    else if (isWord(last, 'FIRST', 'LAST'))
      return; // NULLS FIRST/LAST: left as it is
    else edits.push({ at: end(last), to: end(last), text: ' DESC' });
  };
  for (let j = from; j < stop; j++) {
    if (dep[j] === depth && tokens[j]!.kind === 'op' && tokens[j]!.value === ',') closeTerm(j);
    termEnd = j;
  }
  if (termEnd < from) return null;
  closeTerm(stop);
  let sql = gold;
  for (const e of edits.sort((a, b) => b.at - a.at)) sql = splice(sql, e.at, e.to, e.text);
  return sql;
}

/**
 * Literals a gold compares a column with (`col op literal`, `col IN (...)`, `col BETWEEN a AND b`),
 * by lower-case column name: the generator puts them, and their neighbours, in that column's
 * domain so that a boundary the original database lacks exists on some suite database.
 */
export function comparedLiterals(gold: string): Map<string, Array<number | string>> {
  const tokens = tokenizeSql(gold);
  const out = new Map<string, Array<number | string>>();
  const lit = (t: SqlToken | undefined): number | string | undefined => {
    if (t?.kind === 'number' && /^[0-9.eE+-]+$/.test(t.value)) return Number(t.value);
    if (t?.kind === 'string' && !t.text.startsWith('x') && !t.text.startsWith('X')) return t.value;
    return undefined;
  };
  const put = (name: string, v: number | string | undefined) => {
    if (v === undefined) return;
    const key = name.toLowerCase();
    const list = out.get(key) ?? [];
    if (!list.includes(v)) list.push(v);
    out.set(key, list);
  };
  for (let i = 0; i + 2 < tokens.length + 1; i++) {
    const t = tokens[i];
    if (!t || (t.kind !== 'word' && t.kind !== 'quoted')) continue;
    const op = tokens[i + 1];
    if (op?.kind === 'op' && SHIFT[op.value]) put(t.value, lit(tokens[i + 2]));
    else if (isWord(op, 'BETWEEN')) {
      put(t.value, lit(tokens[i + 2]));
      put(t.value, lit(tokens[i + 4]));
    } else if (isWord(op, 'IN') && tokens[i + 2]?.value === '(') {
      for (let j = i + 3; j < tokens.length && tokens[j]!.value !== ')'; j++) put(t.value, lit(tokens[j]));
    }
  }
  return out;
}
