/**
 * A small SQLite tokenizer for light SQL analysis (rubric checks): it respects '...' strings,
 * "..." / `...` / [...] quoted identifiers and comments, so keywords or names inside them are
 * never mistaken for code. Not a parser: the checks built on it are documented heuristics.
 */

type SqlTokenKind = 'word' | 'quoted' | 'string' | 'number' | 'op' | 'param';

export interface SqlToken {
  kind: SqlTokenKind;
  /** The source text of the token. */
  text: string;
  /** Words and quoted identifiers: the name, unquoted; strings: the value; otherwise the text. */
  value: string;
  /** For `quoted`: the opening quote character (`"`, `` ` `` or `[`). */
  quote?: string;
  start: number;
}

const OPS3 = new Set(['->>']);
const OPS2 = new Set(['<=', '>=', '<>', '!=', '==', '||', '<<', '>>', '->']);
const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

/** Unterminated strings, identifiers and comments run to the end of the text. */
export function tokenizeSql(sql: string): SqlToken[] {
  return [...sqlTokens(sql)];
}

/**
 * The tokens of `sql` one at a time, for a reader that needs only the first few (the worker's
 * PRAGMA refusal): the text after the last token taken is never scanned.
 */
export function* sqlTokens(sql: string): Generator<SqlToken, void, undefined> {
  let i = 0;
  const n = sql.length;
  const quotedRun = (close: string, doubled: boolean): { end: number; value: string } => {
    let value = '';
    let j = i + 1;
    while (j < n) {
      if (sql[j] === close) {
        if (doubled && sql[j + 1] === close) {
          value += close;
          j += 2;
          continue;
        }
        return { end: j + 1, value };
      }
      value += sql[j];
      j++;
    }
    return { end: n, value };
  };
  while (i < n) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'") {
      const { end, value } = quotedRun("'", true);
      yield { kind: 'string', text: sql.slice(i, end), value, start: i };
      i = end;
    } else if (c === '"' || c === '`' || c === '[') {
      const { end, value } = quotedRun(c === '[' ? ']' : c, c !== '[');
      yield { kind: 'quoted', text: sql.slice(i, end), value, quote: c, start: i };
      i = end;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const m = /^(?:0[xX][0-9a-fA-F]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)/.exec(sql.slice(i))!;
      yield { kind: 'number', text: m[0], value: m[0], start: i };
      i += m[0].length;
    } else if ((c === 'x' || c === 'X') && sql[i + 1] === "'") {
      i++;
      const { end, value } = quotedRun("'", true);
      yield { kind: 'string', text: sql.slice(i - 1, end), value, start: i - 1 };
      i = end;
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < n && WORD_PART.test(sql[j]!)) j++;
      const text = sql.slice(i, j);
      yield { kind: 'word', text, value: text, start: i };
      i = j;
    } else if (c === '?' || ((c === ':' || c === '@' || c === '$') && WORD_START.test(sql[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < n && WORD_PART.test(sql[j]!)) j++;
      yield { kind: 'param', text: sql.slice(i, j), value: sql.slice(i, j), start: i };
      i = j;
    } else {
      const three = sql.slice(i, i + 3);
      const two = sql.slice(i, i + 2);
      const op = OPS3.has(three) ? three : OPS2.has(two) ? two : c;
      yield { kind: 'op', text: op, value: op, start: i };
      i += op.length;
    }
  }
}

/** SQLite's keywords (sqlite.org/lang_keywords.html) plus literals that read like words. */
const SQL_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE ' +
    'CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP ' +
    'DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE ' +
    'EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS HAVING IF IGNORE IMMEDIATE ' +
    'IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH MATERIALIZED ' +
    'NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA PRECEDING ' +
    'PRIMARY QUERY RAISE RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT ROLLBACK ' +
    'ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED UNION UNIQUE UPDATE USING ' +
    'VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT TRUE FALSE'
  ).split(' '),
);

/** Keywords that end a WHERE clause at its parenthesis depth. */
export const WHERE_END: ReadonlySet<string> = new Set([
  'GROUP',
  'ORDER',
  'LIMIT',
  'HAVING',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'WINDOW',
]);

/** Keywords that end a FROM list at its parenthesis depth (its commas separate tables until one of these). */
export const FROM_END: ReadonlySet<string> = new Set([
  'WHERE',
  ...WHERE_END,
  'ON',
  'USING',
  'SELECT',
  'VALUES',
  'SET',
  'RETURNING',
]);

export function isKeyword(t: SqlToken | undefined): boolean {
  return t?.kind === 'word' && SQL_KEYWORDS.has(t.value.toUpperCase());
}

/** A token that names something: a non-keyword word or a quoted identifier. */
export function isName(t: SqlToken | undefined): t is SqlToken {
  return t !== undefined && ((t.kind === 'word' && !SQL_KEYWORDS.has(t.value.toUpperCase())) || t.kind === 'quoted');
}

export function isOp(t: SqlToken | undefined, op: string): boolean {
  return t?.kind === 'op' && t.value === op;
}

export function isWord(t: SqlToken | undefined, ...words: string[]): boolean {
  return t?.kind === 'word' && words.includes(t.value.toUpperCase());
}
