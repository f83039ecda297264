/**
 * Simple lexical relevance of a table to a question and its evidence, used to decide which
 * tables a prompt can lose when it does not fit: a table whose name, or one of whose columns,
 * appears in the text is "mentioned". Identifiers are split on `_`, digits and camelCase and
 * compared in lower case with a naive singular (`schools` = `school`).
 */
import type { TableInfo } from './schema-source.ts';

export function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+|(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])/)
    .filter((w) => w.length > 0)
    .map(singular);
}

function singular(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** Column names too generic to count as a mention. */
const GENERIC = new Set(['id', 'name', 'type', 'date', 'value', 'code', 'number', 'no']);

function mentioned(identifier: string, vocabulary: ReadonlySet<string>): boolean {
  const parts = words(identifier);
  return parts.length > 0 && parts.every((p) => vocabulary.has(p));
}

/** 10 for a mentioned table name, plus 1 per mentioned non-generic column. 0: not mentioned. */
export function tableRelevance(table: Pick<TableInfo, 'name' | 'columns'>, text: string): number {
  const vocabulary = new Set(words(text));
  let score = mentioned(table.name, vocabulary) ? 10 : 0;
  for (const c of table.columns) {
    if (!GENERIC.has(c.toLowerCase()) && mentioned(c, vocabulary)) score += 1;
  }
  return score;
}
