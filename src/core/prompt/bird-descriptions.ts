/**
 * BIRD's column descriptions: one CSV per table in `database_description/<table>.csv` with the
 * header `original_column_name,column_name,column_description,data_format,value_description`.
 * The real files are hand-made: Windows-1252 or UTF-8 (with or without BOM), CRLF or LF,
 * quoted multi-line values, stray spaces around names, header spelling variations. Columns are
 * found by header name when the header is recognisable, else by position.
 */
import { parseCsv } from './csv.ts';
import type { DescriptionFile } from './schema-source.ts';
import { decodeText, type DetectedEncoding } from './text-decode.ts';

export interface ColumnDescription {
  /** `original_column_name`: the column as named in the database. */
  column: string;
  /** `column_name`: a readable name, often empty. */
  fullName: string;
  description: string;
  /** `data_format`: integer, text, real, date... */
  format: string;
  /** `value_description`: units, codes, and BIRD's "commonsense evidence". */
  valueDescription: string;
}

export interface TableDescription {
  /** Table name from the file name (without `.csv`). */
  table: string;
  file: string;
  encoding: DetectedEncoding;
  columns: ColumnDescription[];
}

const FIELDS = ['column', 'fullName', 'description', 'format', 'valueDescription'] as const;
const HEADER_NAMES: Record<string, (typeof FIELDS)[number]> = {
  original_column_name: 'column',
  column_name: 'fullName',
  column_description: 'description',
  data_format: 'format',
  value_description: 'valueDescription',
};

function norm(s: string): string {
  return s
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase()
    .replace(/\s+/g, '_');
}

/** Whitespace of a description collapsed to single spaces (the files wrap lines by hand). */
function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

export function parseDescriptionFile(file: DescriptionFile): TableDescription {
  const { text, encoding } = decodeText(file.bytes);
  const rows = parseCsv(text);
  const table = file.name
    .replace(/^.*[\\/]/, '')
    .replace(/\.csv$/i, '')
    .trim();
  const header = rows[0]?.map(norm) ?? [];
  const known = header.filter((h) => h in HEADER_NAMES).length;
  // Map each field to its column index: by header when at least the key column is named.
  const index: Record<(typeof FIELDS)[number], number> = {
    column: 0,
    fullName: 1,
    description: 2,
    format: 3,
    valueDescription: 4,
  };
  let body = rows;
  if (known >= 2 && header.includes('original_column_name')) {
    for (const f of FIELDS) index[f] = -1;
    header.forEach((h, i) => {
      const f = HEADER_NAMES[h];
      if (f && index[f] < 0) index[f] = i;
    });
    body = rows.slice(1);
  }
  const columns: ColumnDescription[] = [];
  for (const r of body) {
    const get = (f: (typeof FIELDS)[number]) => (index[f] >= 0 ? (r[index[f]] ?? '') : '');
    const column = get('column').trim();
    if (column === '') continue;
    columns.push({
      column,
      fullName: oneLine(get('fullName')),
      description: oneLine(get('description')),
      format: oneLine(get('format')),
      valueDescription: oneLine(get('valueDescription')),
    });
  }
  return { table, file: file.name, encoding, columns };
}

/** Descriptions by lower-cased table name (BIRD's file names differ in case from tables). */
export function parseDescriptions(files: readonly DescriptionFile[]): Map<string, TableDescription> {
  const out = new Map<string, TableDescription>();
  for (const f of files) {
    if (!/\.csv$/i.test(f.name)) continue;
    const d = parseDescriptionFile(f);
    out.set(d.table.toLowerCase(), d);
  }
  return out;
}
