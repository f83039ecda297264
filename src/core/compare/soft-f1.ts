import type { SqlValue } from '../types.ts';
import { rowKey, valueKey } from './value-key.ts';

type Rows = readonly (readonly SqlValue[])[];

/** `list(dict.fromkeys(rows))`: drop duplicate rows, keep first occurrences in order. */
function dedupe(rows: Rows): (readonly SqlValue[])[] {
  const seen = new Set<string>();
  const out: (readonly SqlValue[])[] = [];
  for (const row of rows) {
    const k = rowKey(row);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(row);
    }
  }
  return out;
}

/** `calculate_row_match`: membership, not position; every share is divided by the gold width. */
function rowMatch(pred: readonly SqlValue[], gold: readonly SqlValue[]): [number, number, number] {
  const total = gold.length;
  const goldKeys = new Set(gold.map(valueKey));
  const predKeys = new Set(pred.map(valueKey));
  let matches = 0;
  let predOnly = 0;
  let goldOnly = 0;
  for (const v of pred) {
    if (goldKeys.has(valueKey(v))) matches += 1;
    else predOnly += 1;
  }
  for (const v of gold) if (!predKeys.has(valueKey(v))) goldOnly += 1;
  return [matches / total, predOnly / total, goldOnly / total];
}

/**
 * Soft-F1 as the current official `evaluation_f1.py` (mini_dev, after commit bee73fe):
 * both empty -> 1; rows de-duplicated in first-occurrence order and paired by position;
 * extra gold rows are all false negatives, extra predicted rows all false positives.
 */
export function softF1(predRows: Rows, goldRows: Rows): number {
  if (predRows.length === 0 && goldRows.length === 0) return 1.0;
  const pred = dedupe(predRows);
  const gold = dedupe(goldRows);
  // Sums run in the same order as the official lists, so the floats agree to the last bit
  // with Python < 3.12 (3.12's compensated sum differs only in the last ulp).
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (let i = 0; i < gold.length; i++) {
    const g = gold[i]!;
    if (i >= pred.length) {
      fn += 1;
      continue;
    }
    const [m, p, t] = rowMatch(pred[i]!, g);
    tp += m;
    fp += p;
    fn += t;
  }
  for (let i = 0; i < pred.length - gold.length; i++) fp += 1;
  const precision = tp + fp > 0 ? tp / (tp + fp) : 0;
  const recall = tp + fn > 0 ? tp / (tp + fn) : 0;
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}
