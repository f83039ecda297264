/** How the comparison screen writes its numbers and colours its categories. Pure. */
import type { Category } from '../../core/rl/compare.ts';

export const CATEGORY_LABEL: Record<Category, string> = {
  fixed: 'fixed (A wrong, B right)',
  broken: 'broken (A right, B wrong)',
  both_right: 'both right',
  both_wrong: 'both wrong',
};

/** Okabe-Ito based, 3:1 or more against white. */
export const CATEGORY_COLOR: Record<Category, string> = {
  fixed: '#007A5A',
  broken: '#C2410C',
  both_right: '#0072B2',
  both_wrong: '#6B6B6B',
};

/** Percentage points with a sign and two decimals, '–' when undefined (no question). */
export const points = (v: number): string => (Number.isFinite(v) ? `${v > 0 ? '+' : ''}${v.toFixed(2)}` : '–');

/** Percent with two decimals, as the official tables. */
export const percent2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '–');

export const pValue = (p: number): string => (p < 1e-4 ? p.toExponential(2) : p.toFixed(4));
