import { WorkbenchError } from '../errors.ts';
import type { GoldEntry } from '../types.ts';

/**
 * Python's `str.isspace()` set. JavaScript's `trim()` differs: it keeps U+001C..U+001F and
 * U+0085 and removes U+FEFF, so a JS trim would not reproduce the official evaluator exactly.
 */
const PY_WS = '[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_WS}+|${PY_WS}+$`, 'g');

/** Python `str.strip()` with no argument. */
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, '');
}

/**
 * A UTF-8 byte-order mark is invisible in editors but would become part of the first SQL
 * (Python keeps it), so every parser drops it.
 */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Lines as Python's text-mode `readlines()` sees them (universal newlines: `\r\n`, `\r` and
 * `\n` all end a line), without the terminators; a final terminator does not open a new line.
 */
export function pythonLines(text: string): string[] {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Parses a gold file: one question per line, `SQL<TAB>db_id`, read as the official evaluator
 * does (each line Python-stripped, then split on the tab). Gold is paired with predictions by
 * position, so a line that is not an entry is an error rather than something to skip; only
 * blank lines after the last entry are ignored, since they cannot shift any pairing.
 */
export function parseGoldSql(text: string, fileName: string): GoldEntry[] {
  const lines = pythonLines(stripBom(text));
  let end = lines.length;
  while (end > 0 && pyStrip(lines[end - 1]!) === '') end--;
  if (end === 0) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'the gold file is empty: expected one `SQL<TAB>db_id` line per question',
      fileName,
    );
  }

  const entries: GoldEntry[] = [];
  for (let i = 0; i < end; i++) {
    const where = `${fileName}:${i + 1}`;
    const line = pyStrip(lines[i]!);
    if (line === '') {
      throw new WorkbenchError(
        'BAD_FORMAT',
        'empty line inside the gold file: it would shift every later question against its prediction ' +
          '(the official evaluator crashes on it). Remove the line.',
        where,
      );
    }
    const parts = line.split('\t');
    if (parts.length !== 2) {
      // Stripping happens first, so a line `\tdb_id` (empty SQL) also ends up here.
      const found = parts.length === 1 ? 'no tab between SQL and db_id' : `${parts.length - 1} tabs`;
      throw new WorkbenchError(
        'BAD_FORMAT',
        `expected \`SQL<TAB>db_id\` with exactly one tab, found ${found}. ` +
          'The gold SQL must not contain a tab: replace tabs inside the SQL with spaces.',
        where,
      );
    }
    const [sql, dbId] = parts as [string, string];
    // The official code would build a database path from such a name and fail to open it.
    if (dbId === '' || pyStrip(dbId) !== dbId) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `the db_id after the tab is ${dbId === '' ? 'empty' : `"${dbId}", with spaces around it`}: ` +
          'write the database name right after the tab, with nothing around it',
        where,
      );
    }
    entries.push({ sql, dbId });
  }
  return entries;
}
