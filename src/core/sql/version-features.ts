/**
 * Version sensitivity: which parts of a query can give a different result (or an error instead
 * of a result) under the SQLite versions that evaluators use. BIRD's evaluator runs whatever
 * Python's `sqlite3` links (3.40.1 on Debian 12, newer elsewhere); the workbench runs sql.js
 * (3.54 at the time of writing). A documented token scan (src/core/sql/sql-tokens.ts: never
 * inside strings or comments), not a parser. Versions are from sqlite.org/releaselog:
 * - 3.38.0: `->` / `->>` operators, `unixepoch()`, `format()` (alias of printf).
 * - 3.39.0: RIGHT and FULL OUTER JOIN.
 * - 3.43.0: `octet_length()`, `timediff()`; sum()/avg()/total() use Kahan-Babuska-Neumaier
 *   summation (a REAL sum can differ in the last bits, so `= 0.1*10` style comparisons and the
 *   compared result change); the float-to-text conversion behind printf/format precision and
 *   round() was rewritten. Measured here: printf('%.2f', 1.005) is '1.01' on 3.40.1 and '1.00'
 *   on 3.54.1; round(1.005, 2) 1.01 vs 1.0; avg of ten 0.1 is 0.09999999999999999 vs 0.1.
 * - 3.44.0: `concat()`, `concat_ws()`, `string_agg()`.
 * - 3.46.0 `json_pretty()`, 3.48.0 `if()`, 3.50.0 `unistr()`.
 * - A subquery's GROUP BY naming a column of the outer query: "no such column" on 3.40.1,
 *   accepted on 3.54.1 (measured; BIRD mini-dev mixtral item 417). The release that changed it
 *   is not pinned, so `since` says "after 3.40.1".
 * AVG/SUM/TOTAL are flagged when their argument holds a REAL literal, a CAST to a floating
 * type, a column declared REAL/FLOAT/DOUBLE/NUMERIC/DECIMAL (NUMERIC affinity stores 1.5 as
 * REAL), or a column whose type is unknown (no schema, or a name the schema lacks). Integer
 * arguments are not: their sum is exact in every version. This over-flags (a REAL column in a
 * condition of IIF() counts; CASE WHEN conditions are skipped) rather than miss a changed verdict.
 */
import { isName, isOp, isWord, tokenizeSql, type SqlToken } from './sql-tokens.ts';

interface VersionFeature {
  feature: string;
  /** The SQLite version that changed the result, e.g. `3.44.0`. */
  since: string;
  where: 'pred' | 'gold';
}

/** Lower-cased table name -> lower-cased column name -> declared type (as in PRAGMA table_info). */
export type ColumnTypes = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Functions whose existence depends on the version: calling one on an older SQLite is an error. */
const FUNCTIONS: Readonly<Record<string, string>> = {
  concat: '3.44.0',
  concat_ws: '3.44.0',
  string_agg: '3.44.0',
  unixepoch: '3.38.0',
  octet_length: '3.43.0',
  timediff: '3.43.0',
  json_pretty: '3.46.0',
  if: '3.48.0',
  unistr: '3.50.0',
};

const SUMS = new Set(['avg', 'sum', 'total']);
const FLOAT_TYPE = /REAL|FLOA|DOUB|NUMERIC|DECIMAL/i;
const PRECISION = /%[-+ 0#,!]*\d*\.\d/;

/** Index of the `)` that closes the `(` at `open` (or the last token when unbalanced). */
function closing(tokens: readonly SqlToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isOp(tokens[i], '(')) depth++;
    else if (isOp(tokens[i], ')') && --depth === 0) return i;
  }
  return tokens.length - 1;
}

function columnType(types: ColumnTypes, name: string, table: string | null): string | null {
  const col = name.toLowerCase();
  if (table !== null) {
    const t = types[table.toLowerCase()];
    if (t && col in t) return t[col]!;
  }
  let found: string | null = null;
  for (const t of Object.values(types)) {
    if (!(col in t)) continue;
    // A name in several tables: REAL in any of them decides (the alias is not resolved).
    if (found === null || FLOAT_TYPE.test(t[col]!)) found = t[col]!;
  }
  return found;
}

/** Why an AVG/SUM/TOTAL argument may be REAL, or null when it is integer/text for sure. */
function realArgument(args: readonly SqlToken[], types: ColumnTypes | null): 'REAL' | 'unknown type' | null {
  let unknown = types === null;
  let inCondition = false;
  let hasColumn = false;
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!;
    // CASE WHEN <condition> THEN <value>: only the values are summed.
    if (isWord(t, 'WHEN')) inCondition = true;
    else if (isWord(t, 'THEN')) inCondition = false;
    if (inCondition) continue;
    if (t.kind === 'number' && /[.eE]/.test(t.text) && !/^0[xX]/.test(t.text)) return 'REAL';
    if (isWord(t, 'AS') && isWord(args[i + 1], 'REAL', 'FLOAT', 'DOUBLE', 'NUMERIC', 'DECIMAL')) return 'REAL';
    if (!isName(t) || isOp(args[i + 1], '(') || isOp(args[i + 1], '.')) continue;
    hasColumn = true;
    if (types === null) continue;
    const table = isOp(args[i - 1], '.') && isName(args[i - 2]) ? args[i - 2]!.value : null;
    const type = columnType(types, t.value, table);
    if (type === null) unknown = true;
    else if (FLOAT_TYPE.test(type)) return 'REAL';
  }
  return unknown && hasColumn ? 'unknown type' : null;
}

/** Subqueries `(SELECT ...)` whose GROUP BY names a column of none of their own tables but of the schema. */
function outerGroupBy(tokens: readonly SqlToken[], types: ColumnTypes): boolean {
  for (let open = 0; open < tokens.length; open++) {
    if (!isOp(tokens[open], '(') || !isWord(tokens[open + 1], 'SELECT')) continue;
    const end = closing(tokens, open);
    const own = new Set<string>();
    const aliases = new Set<string>();
    const groupTerms: SqlToken[] = [];
    let depth = 0;
    let clause = '';
    for (let i = open + 1; i < end; i++) {
      const t = tokens[i]!;
      if (isOp(t, '(')) depth++;
      else if (isOp(t, ')')) depth--;
      if (depth !== 0) continue;
      if (isWord(t, 'AS') && isName(tokens[i + 1])) aliases.add(tokens[i + 1]!.value.toLowerCase());
      if (isWord(t, 'FROM', 'JOIN') && isName(tokens[i + 1])) own.add(tokens[i + 1]!.value.toLowerCase());
      if (clause === 'from' && isOp(t, ',') && isName(tokens[i + 1])) own.add(tokens[i + 1]!.value.toLowerCase());
      if (isWord(t, 'FROM')) clause = 'from';
      else if (isWord(t, 'GROUP') && isWord(tokens[i + 1], 'BY')) clause = 'group';
      else if (isWord(t, 'WHERE', 'HAVING', 'ORDER', 'LIMIT', 'UNION', 'EXCEPT', 'INTERSECT', 'WINDOW')) clause = '';
      else if (
        clause === 'group' &&
        isName(t) &&
        !isOp(tokens[i - 1], '.') &&
        !isOp(tokens[i + 1], '.') &&
        !isOp(tokens[i + 1], '(')
      )
        groupTerms.push(t);
    }
    for (const term of groupTerms) {
      const col = term.value.toLowerCase();
      if (aliases.has(col)) continue;
      const inOwn = [...own].some((table) => types[table] !== undefined && col in types[table]!);
      const ownKnown = [...own].every((table) => types[table] !== undefined);
      if (!inOwn && ownKnown && Object.values(types).some((t) => col in t)) return true;
    }
  }
  return false;
}

/** The version-sensitive features of one query, each once, in the order first met. */
export function scanVersionFeatures(
  sql: string,
  types: ColumnTypes | null = null,
): { feature: string; since: string }[] {
  const tokens = tokenizeSql(sql);
  const out = new Map<string, string>();
  const add = (feature: string, since: string) => {
    if (!out.has(feature)) out.set(feature, since);
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'op' && (t.value === '->' || t.value === '->>')) add(`${t.value} operator`, '3.38.0');
    if (
      isWord(t, 'RIGHT', 'FULL') &&
      (isWord(tokens[i + 1], 'JOIN') || (isWord(tokens[i + 1], 'OUTER') && isWord(tokens[i + 2], 'JOIN')))
    ) {
      add(`${t.value.toUpperCase()} JOIN`, '3.39.0');
    }
    if (t.kind !== 'word' || !isOp(tokens[i + 1], '(') || isOp(tokens[i - 1], '.')) continue;
    const name = t.value.toLowerCase();
    const since = FUNCTIONS[name];
    if (since !== undefined) add(`${name}()`, since);
    const end = closing(tokens, i + 1);
    const args = tokens.slice(i + 2, end);
    if (SUMS.has(name)) {
      const why = realArgument(args, types);
      if (why !== null) add(`${name.toUpperCase()} over ${why} (Kahan-Babuska-Neumaier summation)`, '3.43.0');
    }
    if ((name === 'printf' || name === 'format') && args[0]?.kind === 'string' && PRECISION.test(args[0].value)) {
      add(`${name}() with a precision (float-to-text rounding)`, '3.43.0');
    }
    if (name === 'round' && args.some((a, k) => isOp(a, ',') && k > 0))
      add('round() to decimal places (float rounding)', '3.43.0');
  }
  if (types !== null && outerGroupBy(tokens, types))
    add("outer query's column in a subquery's GROUP BY", 'after 3.40.1');
  return [...out].map(([feature, since]) => ({ feature, since }));
}

/** The features of an item's prediction, then of its gold. */
export function itemVersionFeatures(
  predSql: string,
  goldSql: string,
  types: ColumnTypes | null = null,
): VersionFeature[] {
  return [
    ...scanVersionFeatures(predSql, types).map((f) => ({ ...f, where: 'pred' as const })),
    ...scanVersionFeatures(goldSql, types).map((f) => ({ ...f, where: 'gold' as const })),
  ];
}
