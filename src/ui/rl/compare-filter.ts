/**
 * What the Compare page's per-question list shows, kept per pair of runs for the session
 * Back from a question side by side finds the same filter, and the side-by-side view
 * steps to the previous and next question of that list. In sessionStorage, so a reload keeps it
 * too; a tab without storage keeps it in memory.
 */
import type { Category } from '../../core/rl/compare.ts';

interface CompareFilter {
  category: Category | 'all';
  bucket: { kind: 'difficulty' | 'database'; name: string } | null;
  /** Gold indices of the questions listed under the filter, in the list's order. */
  listed: number[];
}

const KEY = 'rlvr-workbench:compare-filter:';
const memory = new Map<string, CompareFilter>();
const keyOf = (a: string, b: string) => `${a}\u0000${b}`;

function storage(): Storage | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

export function compareFilter(a: string, b: string): CompareFilter | null {
  const k = keyOf(a, b);
  const held = memory.get(k);
  if (held) return held;
  try {
    const text = storage()?.getItem(KEY + k);
    if (!text) return null;
    const v = JSON.parse(text) as CompareFilter;
    if (typeof v.category !== 'string' || !Array.isArray(v.listed)) return null;
    memory.set(k, v);
    return v;
  } catch {
    return null;
  }
}

export function keepCompareFilter(a: string, b: string, filter: CompareFilter): void {
  const k = keyOf(a, b);
  memory.set(k, filter);
  try {
    storage()?.setItem(KEY + k, JSON.stringify(filter));
  } catch {
    // storage full or refused: the filter holds for this page only
  }
}

/** The questions before and after `index` in the list its filter showed, or null at either end (or when it was not listed). */
export function neighbours(
  filter: CompareFilter | null,
  index: number,
): { prev: number | null; next: number | null; at: number; of: number } | null {
  if (!filter) return null;
  const at = filter.listed.indexOf(index);
  if (at < 0) return null;
  return {
    prev: at > 0 ? filter.listed[at - 1]! : null,
    next: at < filter.listed.length - 1 ? filter.listed[at + 1]! : null,
    at,
    of: filter.listed.length,
  };
}
