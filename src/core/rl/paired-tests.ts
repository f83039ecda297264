/** Paired statistics for comparing two runs question by question. */
import { randomIndex, type Rng } from '../util/rng.ts';
import { maxOf } from '../util/numbers.ts';

/**
 * Exact McNemar test: under "both runs are equally good" each discordant question is fixed or
 * broken with probability 1/2, so the p-value is the two-sided binomial tail
 * min(1, 2 * P(X <= min(b, c))), X ~ Binomial(b + c, 1/2). Summed in log space: no overflow
 * or underflow for any count.
 */
export function mcnemarExactP(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const m = Math.min(b, c);
  const logHalfN = -n * Math.LN2;
  // log C(n, i) built up term by term
  const logs: number[] = [];
  let logC = 0;
  for (let i = 0; i <= m; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    logs.push(logC + logHalfN);
  }
  const top = maxOf(logs);
  const tail = Math.exp(top) * logs.reduce((a, l) => a + Math.exp(l - top), 0);
  return Math.min(1, 2 * tail);
}

/** Quantile with linear interpolation between order statistics (numpy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Paired bootstrap percentile interval of the mean of per-question differences: resample the
 * questions with replacement `resamples` times (indices drawn from `rng`), take the 2.5th and
 * 97.5th percentiles of the resampled means. Returns [NaN, NaN] for no questions.
 */
export function pairedBootstrapCi(
  diffs: readonly number[],
  resamples: number,
  rng: Rng,
  level = 0.95,
): [number, number] {
  const q = diffs.length;
  if (q === 0) return [NaN, NaN];
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < q; i++) sum += diffs[randomIndex(rng, q)]!;
    means[r] = sum / q;
  }
  means.sort();
  const sorted = Array.from(means);
  const alpha = (1 - level) / 2;
  return [quantile(sorted, alpha), quantile(sorted, 1 - alpha)];
}
