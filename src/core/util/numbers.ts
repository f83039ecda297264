/**
 * Reductions over per-sample arrays of any length: no argument spreading (`Math.min(...xs)`
 * overflows the call stack past ~125,000 values) and no overflow of the sum for huge values.
 */

/** Smallest value; `ifEmpty` for an empty array. */
export function minOf(values: readonly number[], ifEmpty = 0): number {
  if (values.length === 0) return ifEmpty;
  let m = values[0]!;
  for (const v of values) if (v < m) m = v;
  return m;
}

/** Largest value; `ifEmpty` for an empty array. */
export function maxOf(values: readonly number[], ifEmpty = 0): number {
  if (values.length === 0) return ifEmpty;
  let m = values[0]!;
  for (const v of values) if (v > m) m = v;
  return m;
}

/**
 * Arithmetic mean (0 for an empty array). The plain sum / n when the sum is finite; otherwise
 * (values near the double limit, e.g. rewards of 1e308) the sum of v / n, which cannot overflow.
 */
export function meanOf(values: readonly number[]): number {
  const n = values.length;
  if (n === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  if (Number.isFinite(sum)) return sum / n;
  let scaled = 0;
  for (const v of values) scaled += v / n;
  return scaled;
}
