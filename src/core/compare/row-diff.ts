/**
 * Which rows of two results have no equal row on the other side, under EX's equality (Python
 * tuples of sqlite3 values, as `set(pred) == set(gold)`): what the item explorer highlights.
 */
import type { SqlValue } from '../types.ts';
import { rowKey } from './value-key.ts';

export interface RowDiff {
  /** Per predicted row: true when no gold row equals it. */
  predOnly: boolean[];
  /** Per gold row: true when no predicted row equals it. */
  goldOnly: boolean[];
}

export function rowDiff(pred: readonly (readonly SqlValue[])[], gold: readonly (readonly SqlValue[])[]): RowDiff {
  const predKeys = pred.map((r) => rowKey(r));
  const goldKeys = gold.map((r) => rowKey(r));
  const inPred = new Set(predKeys);
  const inGold = new Set(goldKeys);
  return { predOnly: predKeys.map((k) => !inGold.has(k)), goldOnly: goldKeys.map((k) => !inPred.has(k)) };
}
