/**
 * Result rows of the wrong items in an offline report (docs/report.md, "Result rows"). A run
 * keeps no rows: the app runs a wrong item's prediction and gold again on the stored databases
 * when the report is made (the same re-execution as its result tables), and the report keeps the
 * first rows of each side, within a stated budget, with each side's total count from the run.
 * SQLite values that JSON cannot hold (an integer past 2^53 as a bigint, a blob, a non-finite
 * real) are written as tagged objects and given back as they were.
 */
import type { ItemPreview } from '../eval/executor.ts';
import type { RunFile, SampleRecord } from '../run/types.ts';
import { fmtBytes, utf8Length } from './limits.ts';

/** How many rows of each side, how many items and how many bytes of rows a report keeps. */
export interface ResultRowsBudget {
  rowsPerSide: number;
  maxItems: number;
  maxBytes: number;
  /** A wrong sample whose SQL took longer than this in the run (its `elapsedMs`) is not run again. */
  maxRunMs?: number;
}

/** A cell as JSON holds it: a JSON value, or `{big}` (a bigint), `{blob}` (hex), `{real}` (NaN, ±Infinity). */
type RowCell = string | number | null | { big: string } | { blob: string } | { real: string };

/** One wrong sample's first rows of each side. */
export interface ItemRows {
  runId: string;
  index: number;
  sample: number;
  predColumns: string[];
  goldColumns: string[];
  predRows: RowCell[][];
  goldRows: RowCell[][];
}

/** What the report says about its rows: the budget, what it kept, and the wrong samples left out. */
export interface ResultRows {
  rowsPerSide: number;
  maxItems: number;
  maxBytes: number;
  /** A wrong sample that took longer than this (ms) in the run was not run again (absent in older reports). */
  maxRunMs?: number;
  /** The wrong samples of the report's runs (EX 0 with a database): those the rows were asked for. */
  wrong: number;
  /** Wrong samples whose prediction gave no rows to show (an error, a timeout): nothing kept. */
  noRows: number;
  /** Wrong samples left out because the budget (items or bytes) was reached. */
  leftOut: number;
  /** Wrong samples not run again because they took longer than `maxRunMs` in the run (absent in older reports). */
  slow?: number;
  /** The bytes of the kept rows (their JSON). */
  bytes: number;
  items: ItemRows[];
}

export function encodeCell(v: unknown): RowCell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : { real: String(v) };
  if (typeof v === 'bigint') return { big: v.toString() };
  if (v instanceof Uint8Array) return { blob: Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('') };
  return String(v);
}

export function decodeCell(c: RowCell): unknown {
  if (c === null || typeof c !== 'object') return c;
  if ('big' in c) return BigInt(c.big);
  if ('real' in c) return Number(c.real);
  const bytes = new Uint8Array(c.blob.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(c.blob.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** The wrong samples whose rows a report asks for: EX 0 on a stored database. */
export function isWrongSample(s: SampleRecord): boolean {
  return s.ex !== 1 && s.status !== 'missing-db';
}

/** An item's rows as the explorer's result tables show them. */
export function previewOf(rows: ItemRows): ItemPreview {
  return {
    predColumns: rows.predColumns,
    goldColumns: rows.goldColumns,
    predRows: rows.predRows.map((r) => r.map(decodeCell)),
    goldRows: rows.goldRows.map((r) => r.map(decodeCell)),
  };
}

/** How many wrong samples of a run are asked for at once (one pass over the pool each). */
const ASK_AT_ONCE = 100;

/**
 * The rows of the wrong samples of `runs` (in their order: the report's run first), asked of
 * `preview` (the app's re-execution, many samples of one run at a time) for their first
 * `budget.rowsPerSide` rows of each side, until `budget.maxItems` items or `budget.maxBytes`
 * bytes are kept; the rest counted as left out. A sample that failed or timed out in the run gave
 * no rows and is not run again (a timeout would cost its whole limit a second time).
 */
export async function collectResultRows(
  runs: readonly RunFile[],
  preview: (file: RunFile, samples: readonly SampleRecord[], rows: number) => Promise<(ItemPreview | null)[]>,
  budget: ResultRowsBudget,
): Promise<ResultRows> {
  const out: ResultRows = { ...budget, wrong: 0, noRows: 0, leftOut: 0, slow: 0, bytes: 0, items: [] };
  const tooSlow = (s: SampleRecord) =>
    budget.maxRunMs !== undefined && s.elapsedMs !== null && s.elapsedMs !== undefined && s.elapsedMs > budget.maxRunMs;
  let full = false;
  const keep = (file: RunFile, s: SampleRecord, p: ItemPreview | null) => {
    if (full) return void out.leftOut++;
    if (!p) return void out.noRows++;
    const item: ItemRows = {
      runId: file.run.id,
      index: s.index,
      sample: s.sample,
      predColumns: p.predColumns,
      goldColumns: p.goldColumns,
      predRows: p.predRows.slice(0, budget.rowsPerSide).map((r) => r.map(encodeCell)),
      goldRows: p.goldRows.slice(0, budget.rowsPerSide).map((r) => r.map(encodeCell)),
    };
    const bytes = utf8Length(JSON.stringify(item));
    if (out.items.length >= budget.maxItems || out.bytes + bytes > budget.maxBytes) {
      full = true;
      return void out.leftOut++;
    }
    out.items.push(item);
    out.bytes += bytes;
  };
  for (const file of runs) {
    const wrong = file.samples.filter(isWrongSample);
    out.wrong += wrong.length;
    for (let at = 0; at < wrong.length;) {
      // As many as the samples budget can still keep (at least one: the one that tells it is full).
      const room = Math.max(1, Math.min(ASK_AT_ONCE, budget.maxItems - out.items.length + 1));
      const batch = wrong.slice(at, at + room);
      at += batch.length;
      if (full) {
        out.leftOut += batch.length;
        continue;
      }
      const ran = batch.filter((s) => s.status !== 'error' && s.status !== 'timeout' && !tooSlow(s));
      const previews = ran.length > 0 ? await preview(file, ran, budget.rowsPerSide) : [];
      const byKey = new Map(ran.map((s, i) => [s, previews[i] ?? null]));
      for (const s of batch) {
        if (!full && s.status === 'ok' && tooSlow(s)) out.slow!++;
        else keep(file, s, byKey.get(s) ?? null);
      }
    }
  }
  return out;
}

/** "first 20 rows of each side for 140 wrong samples, 1.2 MiB (budget 2,000 samples, 4.0 MiB)" and what was left out. */
export function resultRowsText(r: ResultRows): string {
  const n = r.items.length;
  let text =
    `first ${r.rowsPerSide} rows of each side for ${n.toLocaleString('en-US')} wrong ${n === 1 ? 'sample' : 'samples'}` +
    ` of ${r.wrong.toLocaleString('en-US')}, ${fmtBytes(r.bytes)}` +
    ` (budget: ${r.maxItems.toLocaleString('en-US')} samples, ${fmtBytes(r.maxBytes)})`;
  if (r.noRows > 0) text += `; ${r.noRows.toLocaleString('en-US')} gave no rows (an error or a timeout)`;
  if (r.slow)
    text += `; ${r.slow.toLocaleString('en-US')} not run again: each took over ${(r.maxRunMs ?? 0) / 1000} s in the run`;
  if (r.leftOut > 0) text += `; ${r.leftOut.toLocaleString('en-US')} left out: the budget was reached`;
  return text;
}
