/**
 * Statement scanning for engines other than sql.js (better-sqlite3: the bench's native
 * reference, bench/native.ts), where Python sqlite3's statement rules must be applied by hand:
 * where the first statement ends, and the legacy double-quoted-string rule that better-sqlite3
 * is compiled without (SQLITE_DQS=0).
 */
import { WorkbenchError } from '../errors.ts';

/**
 * Index just past the `;` that ends the statement starting at `start`, or the text's length.
 * Skips '...', "...", `...`, [...] and both comment forms, as SQLite's tokenizer does.
 */
export function firstStatementEnd(sql: string, start: number): number {
  let i = start;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === ';') return i + 1;
    if (c === "'" || c === '"' || c === '`') {
      // A doubled quote inside is an escaped quote: scanning on to the next quote covers it.
      const end = sql.indexOf(c, i + 1);
      if (end < 0) return sql.length;
      i = end + 1;
    } else if (c === '[') {
      const end = sql.indexOf(']', i + 1);
      if (end < 0) return sql.length;
      i = end + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i + 2);
      if (nl < 0) return sql.length;
      i = nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return sql.length;
      i = end + 2;
    } else {
      i += 1;
    }
  }
  return sql.length;
}

const DQS_ERROR = /^no such column: "(.*)" - should this be a string literal in single-quotes\?$/s;

/**
 * better-sqlite3 is compiled with SQLITE_DQS=0, Python's sqlite3 and sql.js are not: there a
 * double-quoted token that names no column is a string literal. SQLite names the token in its
 * error; this turns that token (outside strings and comments) into a single-quoted literal, which
 * is what the legacy rule does, and the statement is prepared again.
 */
/**
 * Prepares `text` with `prepare`, and again after each legacy double-quoted-string rewrite
 * (dqsFallback) while SQLite's error names such a token. `multiple` tells the engine's error
 * for a text of several statements, which becomes Python's message.
 */
export function prepareLegacy<T>(
  prepare: (sql: string) => T,
  text: string,
  multiple: (err: unknown) => boolean,
  multipleMessage: string,
): T {
  let sql = text;
  for (let attempt = 0; ; attempt++) {
    try {
      return prepare(sql);
    } catch (err) {
      if (multiple(err)) throw new WorkbenchError('REFUSED', multipleMessage, undefined, { cause: err });
      const next = attempt < 64 ? dqsFallback(sql, (err as Error).message) : null;
      if (next === null) throw err;
      sql = next;
    }
  }
}

export function dqsFallback(sql: string, message: string): string | null {
  const m = DQS_ERROR.exec(message);
  if (!m) return null;
  const token = '"' + m[1]!.replace(/"/g, '""') + '"';
  const literal = "'" + m[1]!.replace(/'/g, "''") + "'";
  let out = '';
  let i = 0;
  let replaced = false;
  while (i < sql.length) {
    const c = sql[i]!;
    let end = i + 1;
    if (c === "'" || c === '`') {
      const close = sql.indexOf(c, i + 1);
      end = close < 0 ? sql.length : close + 1;
    } else if (c === '"') {
      if (sql.startsWith(token, i)) {
        out += literal;
        i += token.length;
        replaced = true;
        continue;
      }
      const close = sql.indexOf('"', i + 1);
      end = close < 0 ? sql.length : close + 1;
    } else if (c === '[') {
      const close = sql.indexOf(']', i + 1);
      end = close < 0 ? sql.length : close + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i + 2);
      end = nl < 0 ? sql.length : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      end = close < 0 ? sql.length : close + 2;
    }
    out += sql.slice(i, end);
    i = end;
  }
  return replaced ? out : null;
}
