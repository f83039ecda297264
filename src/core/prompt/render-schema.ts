/**
 * The schema part of a BIRD prompt, as BIRD's own `generate_schema_prompt_sqlite` writes it:
 * each table's CREATE TABLE statement from sqlite_master, optionally followed by
 *
 *     /* \n 3 example rows: \n SELECT * FROM t LIMIT 3; \n <table> \n *\/
 *
 * where <table> is BIRD's `nice_look_table` (every cell right-justified to its column's width,
 * a space after each), and tables are separated by a blank line. Column descriptions, which
 * BIRD's script does not print, are added by us as a comment block after the statement.
 */
import type { ColumnDescription, TableDescription } from './bird-descriptions.ts';
import { pyStr, rjust, codePoints } from './py-format.ts';
import type { SampleRows, TableInfo } from './schema-source.ts';

/** One table with everything a prompt may show of it. */
export interface TableContext extends TableInfo {
  sample: SampleRows | null;
  description: TableDescription | null;
}

/** What to print of a table; the budget fitter turns parts off. */
export interface TableParts {
  rows: number;
  descriptions: boolean;
}

/** BIRD's nice_look_table. */
function niceLookTable(sample: SampleRows, limit: number): string {
  const rows = sample.rows.slice(0, limit).map((r, i) => r.map((v, j) => pyStr(v, sample.classes[i]![j]!)));
  const widths = sample.columns.map((c, j) => Math.max(codePoints(c), ...rows.map((r) => codePoints(r[j]!))));
  const line = (cells: string[]) => cells.map((c, j) => `${rjust(c, widths[j]!)} `).join('');
  return `${line(sample.columns)}\n${rows.map(line).join('\n')}`;
}

/** BIRD quotes only these table names in its sample query. */
const BIRD_QUOTED = new Set(['order', 'by', 'group']);

export function sampleRowsBlock(table: TableContext, n: number): string {
  const name = BIRD_QUOTED.has(table.name) ? `\`${table.name}\`` : table.name;
  return `/* \n ${n} example rows: \n SELECT * FROM ${name} LIMIT ${n}; \n ${niceLookTable(table.sample!, n)} \n */`;
}

function describeColumn(c: ColumnDescription): string {
  const name =
    c.fullName && c.fullName.toLowerCase() !== c.column.toLowerCase() ? `${c.column} (${c.fullName})` : c.column;
  let text = c.description;
  if (c.valueDescription)
    text = text
      ? `${text}${/[.!?]$/.test(text) ? '' : '.'} Values: ${c.valueDescription}`
      : `Values: ${c.valueDescription}`;
  return `  ${name}: ${text}`;
}

/** Our description block; `*\/` inside the text is broken up so the comment stays closed. */
export function descriptionBlock(table: TableContext): string {
  const cols = table.description!.columns.filter((c) => c.description || c.valueDescription);
  const lines = cols.map(describeColumn).map((l) => l.replace(/\*\//g, '* /'));
  return `/* Column descriptions of ${table.name}:\n${lines.join('\n')}\n*/`;
}

export function hasDescriptions(table: TableContext): boolean {
  return !!table.description && table.description.columns.some((c) => c.description || c.valueDescription);
}

export function renderTable(table: TableContext, parts: TableParts): string {
  let out = table.createSql;
  if (parts.descriptions && hasDescriptions(table)) out += `\n${descriptionBlock(table)}`;
  if (parts.rows > 0 && table.sample) out = `${out} \n ${sampleRowsBlock(table, parts.rows)}`;
  return out;
}

export function renderSchema(tables: readonly TableContext[], parts: ReadonlyMap<string, TableParts>): string {
  return tables
    .filter((t) => parts.has(t.name))
    .map((t) => renderTable(t, parts.get(t.name)!))
    .join('\n\n');
}
