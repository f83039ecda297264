/**
 * A dataset's tables.json (BIRD's dev_tables.json, Spider's tables.json): per database its
 * tables, original and readable column names, column types and keys, as OmniSQL's schema
 * renderer (src/core/prompt/omnisql-schema.ts) reads them. Checked entry by entry, so that a
 * file of another shape is refused by name instead of rendering a wrong schema.
 */
import { WorkbenchError } from '../errors.ts';
import type { BirdTablesEntry } from '../prompt/omnisql-schema.ts';

const pairList = (v: unknown): boolean =>
  Array.isArray(v) &&
  v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'number' && typeof p[1] === 'string');

/** The entry's problem, or null when it has every field the renderer reads with the right shape. */
function entryProblem(e: unknown): string | null {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return 'is not an object';
  const r = e as Record<string, unknown>;
  if (typeof r.db_id !== 'string') return 'has no db_id';
  if (!Array.isArray(r.table_names_original) || !r.table_names_original.every((t) => typeof t === 'string'))
    return 'has no table_names_original list';
  if (!pairList(r.column_names_original)) return 'has no column_names_original list of [table, name]';
  if (!pairList(r.column_names)) return 'has no column_names list of [table, name]';
  if (!Array.isArray(r.column_types) || !r.column_types.every((t) => typeof t === 'string'))
    return 'has no column_types list';
  if ((r.column_types as unknown[]).length !== (r.column_names_original as unknown[]).length)
    return 'has column_types and column_names_original of different lengths';
  if (!Array.isArray(r.primary_keys) || !Array.isArray(r.foreign_keys)) return 'has no primary_keys or foreign_keys';
  return null;
}

/** Parses a tables.json; a BAD_FORMAT error naming the file and the first bad entry otherwise. */
export function parseTablesJson(text: string, fileName: string): BirdTablesEntry[] {
  const what = `${fileName} is not a tables.json (a list of databases with db_id, table_names_original, column_names_original, column_names, column_types, primary_keys, foreign_keys)`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new WorkbenchError('BAD_FORMAT', `${what}: it is not JSON (${(err as Error).message})`, fileName);
  }
  if (!Array.isArray(parsed)) throw new WorkbenchError('BAD_FORMAT', `${what}: it is not a list`, fileName);
  for (const [i, e] of parsed.entries()) {
    const problem = entryProblem(e);
    if (problem) throw new WorkbenchError('BAD_FORMAT', `${what}: entry ${i} ${problem}`, fileName);
  }
  return parsed as BirdTablesEntry[];
}
