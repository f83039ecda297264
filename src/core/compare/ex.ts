import type { SqlValue } from '../types.ts';
import { rowKey } from './value-key.ts';

/**
 * Official EX: `1 if set(predicted_res) == set(ground_truth_res) else 0`.
 * Row order and duplicate rows are ignored; column order matters (tuples are positional).
 */
export function executionMatch(pred: readonly (readonly SqlValue[])[], gold: readonly (readonly SqlValue[])[]): 0 | 1 {
  const goldKeys = new Set<string>();
  for (const row of gold) goldKeys.add(rowKey(row));
  const predKeys = new Set<string>();
  for (const row of pred) {
    const k = rowKey(row);
    if (!goldKeys.has(k)) return 0;
    predKeys.add(k);
  }
  return predKeys.size === goldKeys.size ? 1 : 0;
}
