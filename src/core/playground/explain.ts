/**
 * Why an attempt earned its verdict, in the words a student needs: for EX 0, the first rows that
 * differ and why (missing, extra, the same value of another type, other float digits); for an
 * EX-only pass, the test-suite database that tells the attempt from the gold; for a pass on an
 * empty gold result, that emptiness is all it matched. Pure: it reads the item's result and the
 * first rows the executor returned (ItemPreview).
 */
import type { ItemPreview } from '../eval/executor.ts';
import type { ExRule } from '../compare/spider-ex.ts';
import { rowKey, valueKey } from '../compare/value-key.ts';
import type { ItemResult, SqlValue } from '../types.ts';

/** How one differing row is explained. */
interface RowNote {
  /** `missing`: a gold row no predicted row equals; `extra`: a predicted row no gold row equals. */
  kind: 'missing' | 'extra' | 'type' | 'float';
  /** Position of the row among the rows shown (0-based) on its side; `type`/`float` name both. */
  goldRow: number | null;
  predRow: number | null;
  /** One sentence. */
  detail: string;
}

type VerdictReason =
  | { kind: 'match'; detail: string }
  | { kind: 'empty-pass'; detail: string }
  | { kind: 'row-order'; detail: string }
  /** EX 0 under a rule that compares in order: the same rows, another order; `position` is the first row (0-based) that differs. */
  | { kind: 'order'; detail: string; position: number }
  /** EX 0 under a rule that compares bags (Spider's): the same distinct rows, other counts of duplicates. */
  | { kind: 'duplicates'; detail: string }
  | { kind: 'ex-only'; detail: string; suiteDb: number }
  | { kind: 'not-scored'; detail: string }
  | { kind: 'no-sql'; detail: string }
  | { kind: 'pred-error'; detail: string }
  | { kind: 'gold-error'; detail: string }
  | { kind: 'timeout'; detail: string }
  | { kind: 'column-count'; detail: string }
  /** The attempt changed the database before the gold ran: the gold's result is of the changed database. */
  | { kind: 'write'; detail: string }
  | { kind: 'rows'; detail: string; notes: RowNote[] };

export interface Explanation {
  /** The main reason, then any further ones (e.g. an EX pass that is also order luck). */
  reasons: VerdictReason[];
  /** True when the row notes judge only the first rows of a side (the preview was cut). */
  partial: boolean;
}

/** At most this many differing rows are explained. */
const MAX_ROW_NOTES = 5;

const typeName = (v: SqlValue): string =>
  v === null
    ? 'NULL'
    : typeof v === 'string'
      ? 'TEXT'
      : typeof v === 'number'
        ? Number.isInteger(v)
          ? 'INTEGER'
          : 'REAL'
        : typeof v === 'bigint'
          ? 'INTEGER'
          : 'BLOB';

const shown = (v: SqlValue): string =>
  v === null
    ? 'NULL'
    : typeof v === 'string'
      ? `'${v.length > 40 ? v.slice(0, 40) + '…' : v}'`
      : v instanceof Uint8Array
        ? `BLOB(${v.length} bytes)`
        : String(v);

const asNumber = (v: SqlValue): number | null => {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
};

/** How two values that EX finds different relate: the same number as TEXT, other float digits, or just different. */
function valueRelation(p: SqlValue, g: SqlValue): 'equal' | 'type' | 'float' | 'other' {
  if (valueKey(p) === valueKey(g)) return 'equal';
  const pn = asNumber(p);
  const gn = asNumber(g);
  if (pn === null || gn === null) {
    return p !== null && g !== null && String(p) === String(g) ? 'type' : 'other';
  }
  if (typeof p === 'string' || typeof g === 'string') return pn === gn ? 'type' : 'other';
  const scale = Math.max(Math.abs(pn), Math.abs(gn), 1e-300);
  return Math.abs(pn - gn) / scale < 1e-6 ? 'float' : 'other';
}

/** A predicted row that differs from a gold row only by types or float digits, with the first such column. */
function nearRelation(
  pred: readonly SqlValue[],
  gold: readonly SqlValue[],
): { kind: 'type' | 'float'; column: number } | null {
  if (pred.length !== gold.length) return null;
  let found: { kind: 'type' | 'float'; column: number } | null = null;
  for (let c = 0; c < gold.length; c++) {
    const rel = valueRelation(pred[c] ?? null, gold[c] ?? null);
    if (rel === 'other') return null;
    if (rel !== 'equal' && !found) found = { kind: rel, column: c };
  }
  return found;
}

function rowNotes(preview: ItemPreview): RowNote[] {
  const pred = preview.predRows as SqlValue[][];
  const gold = preview.goldRows as SqlValue[][];
  const predKeys = new Set(pred.map((r) => rowKey(r)));
  const goldKeys = new Set(gold.map((r) => rowKey(r)));
  const predOnly = pred.map((r, i) => ({ r, i })).filter(({ r }) => !goldKeys.has(rowKey(r)));
  const goldOnly = gold.map((r, i) => ({ r, i })).filter(({ r }) => !predKeys.has(rowKey(r)));
  const used = new Set<number>();
  const notes: RowNote[] = [];
  for (const g of goldOnly) {
    if (notes.length >= MAX_ROW_NOTES) break;
    const partner = predOnly.find((p) => !used.has(p.i) && nearRelation(p.r, g.r) !== null);
    if (partner) {
      used.add(partner.i);
      const rel = nearRelation(partner.r, g.r)!;
      const pv = partner.r[rel.column] ?? null;
      const gv = g.r[rel.column] ?? null;
      const col = preview.goldColumns[rel.column] ?? `column ${rel.column + 1}`;
      notes.push({
        kind: rel.kind,
        goldRow: g.i,
        predRow: partner.i,
        detail:
          rel.kind === 'type'
            ? `${col}: the gold has ${shown(gv)} (${typeName(gv)}), the attempt ${shown(pv)} (${typeName(pv)}); EX compares values as Python does, and a number never equals a text.`
            : `${col}: ${shown(pv)} against the gold's ${shown(gv)}; the same number to about six digits, but EX compares floats exactly (round as the gold does, or not at all).`,
      });
    } else {
      notes.push({
        kind: 'missing',
        goldRow: g.i,
        predRow: null,
        detail: `gold row ${g.i + 1} (${g.r.map(shown).join(', ')}) has no equal row in the attempt's result.`,
      });
    }
  }
  for (const p of predOnly) {
    if (notes.length >= MAX_ROW_NOTES) break;
    if (used.has(p.i)) continue;
    notes.push({
      kind: 'extra',
      goldRow: null,
      predRow: p.i,
      detail: `row ${p.i + 1} of the attempt (${p.r.map(shown).join(', ')}) is not in the gold result.`,
    });
  }
  return notes;
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/**
 * The reasons for `result`'s verdict. `preview` holds the first rows of each side (null when the
 * attempt did not run); `goldOrdered` says whether the gold sorts its rows (ORDER BY; under
 * Spider's rule, whether its text has `order by`, which makes that rule compare in order);
 * `rule` is the EX rule that gave the verdict (default BIRD's set equality).
 */
export function explainVerdict(
  result: ItemResult,
  preview: ItemPreview | null,
  options: ExplainOptions = {},
): Explanation {
  const explanation = explainResult(result, preview, options);
  // After a write the gold read what the attempt left: blame the write, never the gold.
  if (result.status === 'ok' && result.mutatedDb && explanation.reasons[0]?.kind !== 'empty-pass')
    explanation.reasons.push({
      kind: 'write',
      detail: `the attempt changed the database before the gold ran on the same connection: the gold's result (${plural(result.goldRowCount ?? 0, 'row')}) is what the changed database holds, not the question's answer (the read-only verdict is the honest one).`,
    });
  return explanation;
}

interface ExplainOptions {
  goldOrdered?: boolean;
  sqlEmpty?: boolean;
  rule?: ExRule;
}

/** Distinct rows of one side, when the preview holds all its rows; null when it was cut. */
function distinctRows(rows: unknown[][], total: number | null): number | null {
  if (total === null || rows.length < total) return null;
  return new Set(keysOf(rows)).size;
}

function explainResult(result: ItemResult, preview: ItemPreview | null, options: ExplainOptions): Explanation {
  const spider = options.rule === 'spider';
  const reasons: VerdictReason[] = [];
  const partial =
    preview !== null &&
    ((result.predRowCount ?? 0) > preview.predRows.length || (result.goldRowCount ?? 0) > preview.goldRows.length);
  const error = result.error ?? '';
  if (result.status === 'missing-db') {
    reasons.push({
      kind: 'not-scored',
      detail: `the database ${result.dbId} is not stored: nothing was run, and the attempt is not scored (never EX 0).`,
    });
    return { reasons, partial: false };
  }
  if (result.status === 'timeout') {
    reasons.push({
      kind: 'timeout',
      detail: `${error || 'the queries did not finish within the time limit'}: a timeout scores EX 0.`,
    });
    return { reasons, partial: false };
  }
  if (result.status === 'error') {
    if (error.startsWith('gold:')) {
      reasons.push({
        kind: 'gold-error',
        detail: `the gold query failed after the attempt ran (${error.slice(5).trim()}); a failing gold scores 0, so an attempt that breaks the gold (DROP TABLE) never wins.`,
      });
    } else {
      reasons.push({
        kind: 'pred-error',
        detail: `the attempt failed: ${error.replace(/^prediction:\s*/, '')}. A query that does not run scores EX 0.`,
      });
    }
    return { reasons, partial: false };
  }
  if (result.ex === 1) {
    if (result.goldRowCount === 0 && result.predRowCount === 0) {
      reasons.push({
        kind: 'empty-pass',
        detail: result.mutatedDb
          ? 'the attempt changed the database so that the gold query, run after it on the same connection, returns no rows, like the attempt: set() == set() earns full reward.'
          : 'both results are empty: EX compares the sets of rows, and two empty sets are equal, so any query that returns nothing earns full reward on this question.',
      });
    } else {
      reasons.push({
        kind: 'match',
        detail: spider
          ? `the attempt returns the same rows as the gold (${plural(result.goldRowCount ?? 0, 'row')} compared as Spider's rule does: duplicates count, ${options.goldOrdered ? "in the order of the gold's ORDER BY" : 'order ignored'}, columns in any order).`
          : setMatchText(result, preview),
      });
    }
    if (result.ts === 0 && result.tsCounterexample) {
      reasons.push({
        kind: 'ex-only',
        suiteDb: result.tsCounterexample.suiteDb,
        detail: `EX only: on test-suite database ${result.tsCounterexample.suiteDb + 1} the attempt and the gold return different rows, so it is right on this database by accident (TS 0).`,
      });
    }
    if (result.passesByRowOrder) {
      reasons.push({
        kind: 'row-order',
        detail:
          'the pass depends on SQLite returning rows in its usual order: with unordered selects reversed, EX rejects it.',
      });
    } else if (!spider && options.goldOrdered && preview && firstDifference(preview) !== null) {
      reasons.push({
        kind: 'row-order',
        detail:
          "the rows come in another order than the gold's ORDER BY asks; BIRD's EX ignores order (a rule that respects ORDER BY, as Spider's does, would not).",
      });
    }
    return { reasons, partial };
  }
  if (options.sqlEmpty) {
    reasons.push({
      kind: 'no-sql',
      detail: `no SQL: the attempt returns no rows while the gold returns ${plural(result.goldRowCount ?? 0, 'row')}.`,
    });
    return { reasons, partial };
  }
  // Column counts matter only when both sides return rows (an empty result has no tuples to compare).
  const bothRows = (result.predRowCount ?? 0) > 0 && (result.goldRowCount ?? 0) > 0;
  if (
    bothRows &&
    result.predColumnCount !== undefined &&
    result.goldColumnCount !== undefined &&
    result.predColumnCount !== result.goldColumnCount
  ) {
    reasons.push({
      kind: 'column-count',
      detail: `the attempt returns ${plural(result.predColumnCount, 'column')}, the gold ${plural(result.goldColumnCount, 'column')}: rows are compared as whole tuples, so no row can match.`,
    });
    return { reasons, partial };
  }
  if (spider && preview && !partial) {
    const bags = sameBag(preview);
    const at = firstDifference(preview);
    if (bags && options.goldOrdered && at !== null) {
      const row = (r: unknown[] | undefined) => `(${((r ?? []) as SqlValue[]).map(shown).join(', ')})`;
      reasons.push({
        kind: 'order',
        position: at,
        detail: `the attempt returns the same rows as the gold in another order: row ${at + 1} is ${row(preview.predRows[at])} where the gold's ORDER BY puts ${row(preview.goldRows[at])}. Spider's rule compares in order when the gold has ORDER BY (BIRD's set equality would score EX 1).`,
      });
      return { reasons, partial };
    }
    if (!bags && sameSet(preview)) {
      reasons.push({
        kind: 'duplicates',
        detail: `the attempt returns the same distinct rows as the gold but other counts of duplicates (${plural(preview.predRows.length, 'row')} against ${preview.goldRows.length}): Spider's rule compares bags of rows (BIRD's set equality ignores duplicates).`,
      });
      return { reasons, partial };
    }
  }
  const notes = preview ? rowNotes(preview) : [];
  const counts = `the attempt returns ${plural(result.predRowCount ?? 0, 'row')}, the gold ${plural(result.goldRowCount ?? 0, 'row')}`;
  reasons.push({
    kind: 'rows',
    detail: notes.length > 0 ? `${counts}; the sets of rows differ:` : `${counts}; the sets of rows differ.`,
    notes,
  });
  return { reasons, partial };
}

/**
 * A set match in counts that hold: the distinct rows the two sets share (known when either side
 * was shown in full; both sets are equal) and each side's own count of rows, duplicates included.
 */
function setMatchText(result: ItemResult, preview: ItemPreview | null): string {
  const gold = result.goldRowCount ?? 0;
  const pred = result.predRowCount ?? 0;
  const distinct = preview
    ? (distinctRows(preview.goldRows, result.goldRowCount) ?? distinctRows(preview.predRows, result.predRowCount))
    : null;
  const sides = `the gold returns ${plural(gold, 'row')}, the attempt ${plural(pred, 'row')}`;
  return distinct === null
    ? `the attempt returns the same set of rows as the gold (${sides}; compared as a set: order and duplicates are ignored).`
    : `the attempt returns the same set of rows as the gold: ${plural(distinct, 'distinct row')} (${sides}), compared as a set: order and duplicates are ignored.`;
}

/** The first position (among the rows shown) where the two sides hold different rows, or null. */
function firstDifference(preview: ItemPreview): number | null {
  const n = Math.min(preview.predRows.length, preview.goldRows.length);
  for (let i = 0; i < n; i++)
    if (rowKey(preview.predRows[i] as SqlValue[]) !== rowKey(preview.goldRows[i] as SqlValue[])) return i;
  return null;
}

const keysOf = (rows: unknown[][]) => rows.map((r) => rowKey(r as SqlValue[]));

/** Both sides hold the same rows with the same counts (in any order). */
function sameBag(preview: ItemPreview): boolean {
  const p = keysOf(preview.predRows).sort();
  const g = keysOf(preview.goldRows).sort();
  return p.length === g.length && p.every((k, i) => k === g[i]);
}

/** Both sides hold the same distinct rows. */
function sameSet(preview: ItemPreview): boolean {
  const p = new Set(keysOf(preview.predRows));
  const g = new Set(keysOf(preview.goldRows));
  return p.size === g.size && [...p].every((k) => g.has(k));
}
