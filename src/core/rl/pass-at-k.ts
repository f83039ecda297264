import { WorkbenchError } from '../errors.ts';

/**
 * Unbiased pass@k (Chen et al., 2021): the chance that at least one of k samples drawn
 * without replacement from n, c of them correct, is correct: 1 - C(n-c, k) / C(n, k).
 * Computed as the product prod_{i=n-c+1}^{n} (1 - k/i), which never forms a binomial
 * coefficient and so cannot overflow.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(c) ||
    !Number.isInteger(k) ||
    n < 1 ||
    c < 0 ||
    c > n ||
    k < 1 ||
    k > n
  ) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `pass@k needs integers 0 <= c <= n and 1 <= k <= n, got n = ${n}, c = ${c}, k = ${k}`,
    );
  }
  if (n - c < k) return 1;
  let prodFail = 1;
  for (let i = n - c + 1; i <= n; i++) prodFail *= 1 - k / i;
  return 1 - prodFail;
}

/** pass@k for every k from 1 to n (index k - 1). */
export function passAtKCurve(n: number, c: number): number[] {
  return Array.from({ length: n }, (_, i) => passAtK(n, c, i + 1));
}

/**
 * Unbiased pass^k (Yao et al., 2024, τ-bench; Inspect's `pass_k`): the chance that all k samples
 * drawn without replacement from n, c of them correct, are correct: C(c, k) / C(n, k), computed as
 * the product prod_{i=0}^{k-1} (c - i) / (n - i), which never forms a binomial coefficient.
 */
export function passHatK(n: number, c: number, k: number): number {
  passAtK(n, c, k); // the same argument checks
  if (c < k) return 0;
  let p = 1;
  for (let i = 0; i < k; i++) p *= (c - i) / (n - i);
  return p;
}
