/**
 * A report's samples in columns (docs/report.md, "Data"): one array per field instead of one
 * object per sample, every string once in a shared table (gold SQL is the same for each sample
 * of a question, a policy repeats its SQL), and the samples' key lists ("shapes") once each. At
 * 100,000 samples the JSON is a tenth of the run file's and decodes in a fraction of the time
 * (a typed loop over columns, each sample copied from its shape's template object), and gzip
 * compresses it further. `unpackSamples(packSamples(s))` gives back `s` exactly, key order
 * included (a test holds it to that), so the import stores what the run file would.
 */
import { WorkbenchError } from '../errors.ts';
import type { SampleRecord } from '../run/types.ts';

/** Strings (and JSON texts of nested values) shared by every column of a payload, each once. */
export class StringTable {
  readonly strings: string[] = [];
  readonly #ids = new Map<string, number>();

  id(s: string): number {
    let i = this.#ids.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.#ids.set(s, i);
    }
    return i;
  }
}

/**
 * How a column's cells are written: `v` numbers, booleans and null as they are; `s` a string's
 * id in the table (null as null); `j` the id of a nested value's JSON text (null as null).
 */
type ColumnKind = 'v' | 's' | 'j';

export interface PackedSamples {
  count: number;
  /** Every distinct key list of the samples, in the samples' own key order. */
  shapes: string[][];
  /** Each sample's shape (its position in `shapes`). */
  shape: number[];
  /** Per key: how its cells are written and one cell per sample (0 where the sample lacks the key). */
  columns: Record<string, { kind: ColumnKind; cells: unknown[] }>;
}

function kindOf(values: Iterable<unknown>): ColumnKind {
  let kind: ColumnKind = 'v';
  for (const v of values) {
    if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') continue;
    if (typeof v === 'string' && kind === 'v') kind = 's';
    else if (typeof v !== 'string') return 'j';
  }
  return kind;
}

export function packSamples(samples: readonly SampleRecord[], table: StringTable): PackedSamples {
  const rows = samples as unknown as readonly Record<string, unknown>[];
  const shapes: string[][] = [];
  const shapeIds = new Map<string, number>();
  const shape = new Array<number>(rows.length);
  const keys = new Set<string>();
  for (const [i, row] of rows.entries()) {
    const list = Object.keys(row);
    const sig = list.join('\u0000');
    let id = shapeIds.get(sig);
    if (id === undefined) {
      id = shapes.length;
      shapes.push(list);
      shapeIds.set(sig, id);
      for (const k of list) keys.add(k);
    }
    shape[i] = id;
  }
  const columns: PackedSamples['columns'] = {};
  for (const key of keys) {
    const kind = kindOf(rows.map((r) => r[key]));
    const cells = rows.map((r) => {
      const v = r[key];
      if (v === undefined) return 0;
      if (v === null || kind === 'v') return v;
      return table.id(kind === 's' ? (v as string) : JSON.stringify(v));
    });
    columns[key] = { kind, cells };
  }
  return { count: rows.length, shapes, shape, columns };
}

/**
 * The samples of `packed`. A nested value (extraction, generation, rubric) is parsed once per
 * distinct text and shared by the samples that have it: the report never changes a sample.
 */
export function unpackSamples(packed: PackedSamples, strings: readonly string[], where: string): SampleRecord[] {
  const bad = (what: string): never => {
    throw new WorkbenchError('BAD_FORMAT', `the packed samples ${what}`, where);
  };
  if (!Array.isArray(packed.shape) || packed.shape.length !== packed.count) bad('have no shape per sample');
  const parsed = new Map<number, unknown>();
  const json = (id: number): unknown => {
    let v = parsed.get(id);
    if (v === undefined) {
      const text = strings[id];
      if (text === undefined) bad(`refer to string ${id}, which the table does not hold`);
      v = JSON.parse(text!) as unknown;
      parsed.set(id, v);
    }
    return v;
  };
  const str = (id: number): string => strings[id] ?? bad(`refer to string ${id}, which the table does not hold`);
  // Per shape: its keys' columns, and a template object whose copies have the sample's key order.
  const plans = packed.shapes.map((keys) => {
    const cols = keys.map((k) => packed.columns[k] ?? bad(`name a column "${k}" they do not hold`));
    return { keys, cols, template: Object.fromEntries(keys.map((k) => [k, null])) };
  });
  const out = new Array<SampleRecord>(packed.count);
  for (let i = 0; i < packed.count; i++) {
    const plan = plans[packed.shape[i]!] ?? bad(`name shape ${packed.shape[i]}, which they do not hold`);
    const o: Record<string, unknown> = { ...plan.template };
    for (let j = 0; j < plan.keys.length; j++) {
      const col = plan.cols[j]!;
      const v = col.cells[i];
      o[plan.keys[j]!] = v === null || col.kind === 'v' ? v : col.kind === 's' ? str(v as number) : json(v as number);
    }
    out[i] = o as unknown as SampleRecord;
  }
  return out;
}
