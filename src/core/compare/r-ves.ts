/**
 * R-VES as the current official `evaluation_ves.py` (mini_dev): only for items whose EX is 1,
 * each query pair is timed `iterations` times (official: 100), ratios gold/pred outside
 * mean ± 3·std (population std) are dropped, and the mean ratio maps to a stepped reward.
 * Timings are machine-dependent: the score is not reproducible across machines, and ours
 * times sql.js (WebAssembly) on one connection rather than native SQLite on fresh ones.
 */
export const OFFICIAL_VES_ITERATIONS = 100;

/** `clean_abnormal` then mean. Returns null where the official code divides by zero (error -> reward 0). */
export function timeRatio(ratios: readonly number[]): number | null {
  if (ratios.length === 0 || ratios.some((r) => !Number.isFinite(r))) return null;
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const variance = ratios.reduce((a, r) => a + (r - mean) * (r - mean), 0) / ratios.length;
  const std = Math.sqrt(variance);
  const kept = ratios.filter((x) => x < mean + 3 * std && x > mean - 3 * std);
  if (kept.length === 0) return null;
  return kept.reduce((a, b) => a + b, 0) / kept.length;
}

/** `compute_reward`: the stepped reward of a time ratio (0 for incorrect items). */
export function vesReward(ratio: number): number {
  if (ratio === 0) return 0;
  if (ratio >= 2) return 1.25;
  if (ratio >= 1) return 1;
  if (ratio >= 0.5) return 0.75;
  if (ratio >= 0.25) return 0.5;
  return 0.25;
}
