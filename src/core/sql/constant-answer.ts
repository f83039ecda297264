/**
 * A constant answer: SQL that answers without reading the database. Under execution reward it
 * wins wherever the gold's result happens to equal a literal (`SELECT 'true'` on a gold that
 * returns one distinct value), so the playground, the probe, the rubric and the series' earned
 * score all treat it as a reward hack, never as a grounded answer.
 */
import { goldReads } from './gold-reads.ts';
import { isWord, tokenizeSql } from './sql-tokens.ts';

/**
 * No SQL, or a read (SELECT, VALUES or WITH) that names no table of the database (CTEs and
 * table-valued functions are not tables; goldReads, ./gold-reads.ts).
 */
export function isConstantAnswer(sql: string): boolean {
  const text = sql.trim().replace(/;\s*$/, '');
  if (text === '') return true;
  const first = tokenizeSql(text)[0];
  return isWord(first, 'SELECT', 'VALUES', 'WITH') && goldReads(text).tables.length === 0;
}
