/**
 * Reference computations that tests compare the product's statistics against, written
 * independently of src/core (the plainest correct way, not the fastest).
 */

/** Exact two-sided McNemar (binomial) p-value for b and c discordant pairs, with BigInt sums. */
export function exactMcnemarP(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let coef = 1n;
  let tail = 0n;
  for (let i = 0; i <= Math.min(b, c); i++) {
    if (i > 0) coef = (coef * BigInt(n - i + 1)) / BigInt(i);
    tail += coef;
  }
  // 2 * tail / 2^n, with 18 significant digits kept through the division
  const scaled = (2n * tail * 10n ** 18n) / 2n ** BigInt(n);
  return Math.min(1, Number(scaled) / 1e18);
}
