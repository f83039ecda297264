/**
 * The statement rules of Python's `sqlite3` (`cursor.execute`), which the official evaluator
 * inherits: SQLite compiles the first statement, and whatever follows it may only be
 * whitespace and comments, otherwise "You can only execute one statement at a time."
 * (so `SELECT 1;;` and `SELECT 1; SELECT 2` are errors, `SELECT 1; -- done` is fine).
 * An SQL text that is empty, blank or only comments executes nothing and returns no rows.
 */
export const MULTIPLE_STATEMENTS_MESSAGE = 'You can only execute one statement at a time.';

/**
 * CPython's `lstrip_sql`: index of the first character that is not whitespace or part of a
 * comment, or -1 when there is none (an unterminated comment runs to the end).
 */
export function firstSignificantIndex(sql: string, from = 0): number {
  let pos = from;
  while (pos < sql.length) {
    const c = sql[pos];
    if (c === ' ' || c === '\t' || c === '\f' || c === '\n' || c === '\r') {
      pos += 1;
    } else if (c === '-' && sql[pos + 1] === '-') {
      const nl = sql.indexOf('\n', pos + 2);
      if (nl < 0) return -1;
      pos = nl + 1;
    } else if (c === '/' && sql[pos + 1] === '*') {
      const end = sql.indexOf('*/', pos + 2);
      if (end < 0) return -1;
      pos = end + 2;
    } else {
      return pos;
    }
  }
  return -1;
}

/** True when the text after the first statement would make Python refuse the SQL. */
export function hasTrailingStatement(tail: string): boolean {
  return firstSignificantIndex(tail) >= 0;
}

/** Python refuses SQL containing a NUL character before SQLite sees it. */
export const NUL_MESSAGE = 'the query string is not allowed to contain a null character';

/**
 * The leading keyword of a statement, upper-cased ('' when none). Used to decide whether a
 * statement can change connection state (PRAGMA, ATTACH, BEGIN...) beyond what a change
 * counter sees.
 */
export function leadingKeyword(sql: string): string {
  const i = firstSignificantIndex(sql);
  if (i < 0) return '';
  const m = /^[A-Za-z]+/.exec(sql.slice(i, i + 16));
  return m ? m[0].toUpperCase() : '';
}

const QUERY_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES']);

/** A statement that starts like a query; anything else may leave state on the connection. */
export function looksLikeQuery(sql: string): boolean {
  return QUERY_KEYWORDS.has(leadingKeyword(sql));
}
