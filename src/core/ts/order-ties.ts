/**
 * Ties at a LIMIT: `ORDER BY k LIMIT n` picks n rows, and when row n and row n + 1 have equal
 * keys but different values, which of them the gold returns is up to SQLite's row order (BIRD
 * golds such as `ORDER BY count DESC LIMIT 1` over a tie). `PRAGMA reverse_unordered_selects`
 * does not see this (it leaves ordered selects alone), so the gold is probed: the same query
 * with the ORDER BY keys in front of its columns, ordered by them, `LIMIT 2 OFFSET offset + n - 1`.
 * Two rows with equal keys and different columns: the gold cuts through a tie.
 * Only a plain top-level SELECT (no compound, no WITH, no DISTINCT, literal LIMIT) is probed.
 */
import { isWord, tokenizeSql, type SqlToken } from '../sql/sql-tokens.ts';

interface TieProbe {
  sql: string;
  /** Columns of the probe that are ORDER BY keys (the first ones). */
  keys: number;
}

const end = (t: SqlToken) => t.start + t.text.length;
const isOpTok = (t: SqlToken | undefined, v: string) => t?.kind === 'op' && t.value === v;

export function tieProbe(gold: string): TieProbe | null {
  const tokens = tokenizeSql(gold);
  let depth = 0;
  const top: number[] = [];
  tokens.forEach((t, i) => {
    if (isOpTok(t, ')')) depth--;
    if (depth === 0) top.push(i);
    if (isOpTok(t, '(')) depth++;
  });
  const at = (word: string) => top.filter((i) => isWord(tokens[i], word));
  if (['UNION', 'EXCEPT', 'INTERSECT', 'WITH', 'WINDOW'].some((w) => at(w).length > 0)) return null;
  const select = at('SELECT')[0];
  const from = at('FROM')[0];
  const order = at('ORDER').find((i) => isWord(tokens[i + 1], 'BY'));
  const limit = at('LIMIT')[0];
  if (
    select !== 0 ||
    from === undefined ||
    order === undefined ||
    limit === undefined ||
    !(from < order && order < limit)
  )
    return null;
  if (isWord(tokens[select + 1], 'DISTINCT', 'ALL')) return null;
  const a = tokens[limit + 1];
  if (a?.kind !== 'number' || !/^\d+$/.test(a.value)) return null;
  let n = Number(a.value);
  let offset = 0;
  const after = tokens[limit + 2];
  const b = tokens[limit + 3];
  let rest = limit + 2;
  if (isWord(after, 'OFFSET') && b?.kind === 'number' && /^\d+$/.test(b.value)) {
    offset = Number(b.value);
    rest = limit + 4;
  } else if (isOpTok(after, ',') && b?.kind === 'number' && /^\d+$/.test(b.value)) {
    offset = n; // LIMIT m, n: m is the offset
    n = Number(b.value);
    rest = limit + 4;
  }
  if (rest < tokens.length && !(isOpTok(tokens[rest], ';') && rest === tokens.length - 1)) return null;
  if (n < 1 || !Number.isSafeInteger(offset + n)) return null;

  const list = gold.slice(end(tokens[select]!), tokens[from]!.start).trim();
  // ORDER BY terms, split at top-level commas, without their ASC / DESC / NULLS FIRST|LAST.
  const topSet = new Set(top);
  const terms: string[] = [];
  const dirs: string[] = [];
  let first = order + 2;
  for (let j = order + 2; j <= limit; j++) {
    if (j < limit && !(topSet.has(j) && isOpTok(tokens[j], ','))) continue;
    let last = j - 1;
    const dir: string[] = [];
    while (last >= first && isWord(tokens[last], 'ASC', 'DESC', 'NULLS', 'FIRST', 'LAST'))
      dir.unshift(tokens[last--]!.text);
    if (last < first) return null;
    terms.push(gold.slice(tokens[first]!.start, end(tokens[last]!)));
    dirs.push(dir.join(' '));
    first = j + 1;
  }
  // A positional term (ORDER BY 2) or a column alias cannot stand in front of the columns.
  const aliases = new Set<string>();
  for (let i = select + 1; i < from; i++)
    if (isWord(tokens[i], 'AS') && tokens[i + 1]) aliases.add(tokens[i + 1]!.value.toLowerCase());
  if (terms.some((t) => /^\d+$/.test(t) || aliases.has(t.replace(/^["`[]|["`\]]$/g, '').toLowerCase()))) return null;
  const body = gold.slice(tokens[from]!.start, tokens[order]!.start);
  const by = terms.map((_, i) => `${i + 1}${dirs[i] ? ' ' + dirs[i] : ''}`).join(', ');
  return {
    sql: `SELECT ${terms.join(', ')}, ${list} ${body}ORDER BY ${by} LIMIT 2 OFFSET ${offset + n - 1}`,
    keys: terms.length,
  };
}
